"""The comparison page: GET /compare (the live table of catalog offers, optionally for one job) and its JSON,
GET /api/compare (filtered, sorted, server-side paged). The rows come from a derived store per catalog version
(`store`), a job's columns from the job priced per hardware shape (`costs`), filtering and paging in SQL (`data`);
while a new catalog version's store is built, the first pages sorted by price come from the catalog itself (`head`).
"""

from web.compare.head import warm as warm_store
from web.compare.page import compare_page, router
from web.compare.store import ensure_store, store_path

__all__ = ["compare_page", "ensure_store", "router", "store_path", "warm_store"]
