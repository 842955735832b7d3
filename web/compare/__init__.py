"""The comparison page: GET /compare (the live table of catalog offers, optionally for one job) and its JSON,
GET /api/compare (filtered, sorted, server-side paged).
"""

from web.compare.page import router

__all__ = ['router']
