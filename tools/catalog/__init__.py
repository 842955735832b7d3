"""The catalog of real GPU offers: queries, plus the names the rest of the code imports about the catalog.

The names below are imported from their modules on first use (tools/faces.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tools.faces import lazy_face

if TYPE_CHECKING:
    from tools.catalog.db import MISSING as MISSING
    from tools.catalog.query import OFFER_FIELDS as OFFER_FIELDS
    from tools.catalog.db import build_db as build_db
    from tools.catalog.query import offer_from_row as offer_from_row
    from tools.catalog.db import offer_row as offer_row
    from tools.catalog.store import read_snapshot as read_snapshot
    from tools.catalog.query import wish_filters as wish_filters
    from tools.catalog.db import CatalogError as CatalogError, CatalogUnavailableError as CatalogUnavailableError
    from tools.catalog.names import SNAPSHOT_FILE as SNAPSHOT_FILE, SORTS as SORTS
    from tools.catalog.query import Offer as Offer, build_from_catalog_dir as build_from_catalog_dir, build_from_snapshot as build_from_snapshot, catalog_stats as catalog_stats, current_meta as current_meta, default_db_path as default_db_path, ensure_catalog as ensure_catalog, ensure_db as ensure_db, make_snapshot as make_snapshot, query_offers as query_offers, read_meta as read_meta, resolve_db_path as resolve_db_path
    from tools.catalog.regions import place_names as place_names
    from tools.catalog.shapes import Evaluation as Evaluation, OfferGroup as OfferGroup, Shape as Shape, cached_groups as cached_groups, candidate_groups as candidate_groups, clear_shape_caches as clear_shape_caches, effective_prices as effective_prices, evaluate as evaluate, shape_of as shape_of, workload_key as workload_key
    from tools.catalog.store import keep_aside as keep_aside, private_data_folder as private_data_folder
    from tools.catalog.update import UpdateError as UpdateError, update_catalog as update_catalog

FACE = {
    "MISSING": "db",
    "OFFER_FIELDS": "query",
    "build_db": "db",
    "offer_from_row": "query",
    "offer_row": "db",
    "read_snapshot": "store",
    "wish_filters": "query",
    "CatalogError": "db",
    "CatalogUnavailableError": "db",
    "Evaluation": "shapes",
    "Offer": "query",
    "OfferGroup": "shapes",
    "SNAPSHOT_FILE": "names",
    "SORTS": "names",
    "Shape": "shapes",
    "UpdateError": "update",
    "build_from_catalog_dir": "query",
    "build_from_snapshot": "query",
    "cached_groups": "shapes",
    "candidate_groups": "shapes",
    "catalog_stats": "query",
    "clear_shape_caches": "shapes",
    "current_meta": "query",
    "default_db_path": "query",
    "effective_prices": "shapes",
    "ensure_catalog": "query",
    "ensure_db": "query",
    "evaluate": "shapes",
    "keep_aside": "store",
    "make_snapshot": "query",
    "place_names": "regions",
    "private_data_folder": "store",
    "query_offers": "query",
    "read_meta": "query",
    "resolve_db_path": "query",
    "shape_of": "shapes",
    "update_catalog": "update",
    "workload_key": "shapes",
}
__getattr__, __dir__ = lazy_face(__name__, FACE)
__all__ = sorted(FACE)
