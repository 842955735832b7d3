"""The catalog of real GPU offers: queries, plus the names the rest of the code imports about the catalog.

The names below are imported from their modules on first use (tools/faces.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tools.faces import lazy_face

if TYPE_CHECKING:
    from tools.catalog.db import MISSING as MISSING
    from tools.catalog.db import CatalogError as CatalogError
    from tools.catalog.db import CatalogUnavailableError as CatalogUnavailableError
    from tools.catalog.db import build_db as build_db
    from tools.catalog.db import offer_row as offer_row
    from tools.catalog.listings import LISTING_KEY as LISTING_KEY
    from tools.catalog.listings import SHAPE_COLUMNS as SHAPE_COLUMNS
    from tools.catalog.listings import ListingSummary as ListingSummary
    from tools.catalog.listings import count_listings as count_listings
    from tools.catalog.listings import offers_and_facets as offers_and_facets
    from tools.catalog.listings import recorded_summary as recorded_summary
    from tools.catalog.paths import SNAPSHOT_FILE as SNAPSHOT_FILE
    from tools.catalog.paths import SORTS as SORTS
    from tools.catalog.query import OFFER_FIELDS as OFFER_FIELDS
    from tools.catalog.query import Offer as Offer
    from tools.catalog.query import build_from_catalog_dir as build_from_catalog_dir
    from tools.catalog.query import build_from_snapshot as build_from_snapshot
    from tools.catalog.query import catalog_stats as catalog_stats
    from tools.catalog.query import current_meta as current_meta
    from tools.catalog.query import default_db_path as default_db_path
    from tools.catalog.query import ensure_catalog as ensure_catalog
    from tools.catalog.query import ensure_db as ensure_db
    from tools.catalog.query import make_snapshot as make_snapshot
    from tools.catalog.query import offer_from_row as offer_from_row
    from tools.catalog.query import query_offers as query_offers
    from tools.catalog.query import read_meta as read_meta
    from tools.catalog.query import resolve_db_path as resolve_db_path
    from tools.catalog.query import wish_filters as wish_filters
    from tools.catalog.regions import expand_region as expand_region
    from tools.catalog.regions import place_names as place_names
    from tools.catalog.shapes import Evaluation as Evaluation
    from tools.catalog.shapes import OfferGroup as OfferGroup
    from tools.catalog.shapes import Shape as Shape
    from tools.catalog.shapes import assess_shapes as assess_shapes
    from tools.catalog.shapes import cached_groups as cached_groups
    from tools.catalog.shapes import candidate_groups as candidate_groups
    from tools.catalog.shapes import clear_shape_caches as clear_shape_caches
    from tools.catalog.shapes import effective_prices as effective_prices
    from tools.catalog.shapes import evaluate as evaluate
    from tools.catalog.shapes import evaluate_many as evaluate_many
    from tools.catalog.shapes import held_of as held_of
    from tools.catalog.shapes import memory_holds as memory_holds
    from tools.catalog.shapes import shape_of as shape_of
    from tools.catalog.shapes import verdict_holds as verdict_holds
    from tools.catalog.shapes import verdicts_of as verdicts_of
    from tools.catalog.shapes import workload_key as workload_key
    from tools.catalog.snapshot import read_snapshot as read_snapshot
    from tools.catalog.store import keep_aside as keep_aside
    from tools.catalog.store import private_data_folder as private_data_folder
    from tools.catalog.update import UpdateError as UpdateError
    from tools.catalog.update import update_catalog as update_catalog

FACE = {
    "MISSING": "db",
    "LISTING_KEY": "listings",
    "SHAPE_COLUMNS": "listings",
    "ListingSummary": "listings",
    "count_listings": "listings",
    "offers_and_facets": "listings",
    "recorded_summary": "listings",
    "OFFER_FIELDS": "query",
    "build_db": "db",
    "offer_from_row": "query",
    "offer_row": "db",
    "read_snapshot": "snapshot",
    "wish_filters": "query",
    "CatalogError": "db",
    "CatalogUnavailableError": "db",
    "Evaluation": "shapes",
    "Offer": "query",
    "OfferGroup": "shapes",
    "SNAPSHOT_FILE": "paths",
    "SORTS": "paths",
    "Shape": "shapes",
    "UpdateError": "update",
    "build_from_catalog_dir": "query",
    "assess_shapes": "shapes",
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
    "expand_region": "regions",
    "evaluate_many": "shapes",
    "held_of": "shapes",
    "keep_aside": "store",
    "memory_holds": "shapes",
    "make_snapshot": "query",
    "place_names": "regions",
    "private_data_folder": "store",
    "query_offers": "query",
    "read_meta": "query",
    "resolve_db_path": "query",
    "shape_of": "shapes",
    "update_catalog": "update",
    "verdict_holds": "shapes",
    "verdicts_of": "shapes",
    "workload_key": "shapes",
}
__getattr__, __dir__ = lazy_face(__name__, FACE)
__all__ = sorted(FACE)
