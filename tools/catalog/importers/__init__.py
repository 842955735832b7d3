"""SkyPilot-format catalog importer, split by job: ``common`` (CSV reading, values, results), ``gpu_resolution``
(GPU name, memory, form factor and interconnect of a row), ``rows`` (one row -> one Offer, the per-cloud CSVs), ``gcp``
(GCP's separate host and accelerator rows). The public entry points are in ``tools.catalog.importers.skypilot``.
"""

from tools.catalog.importers.skypilot import (
    REQUIRED_COLUMNS,
    ImportResult,
    dedupe_offers,
    import_catalog_dir,
    import_cloud_file,
)

__all__ = ["REQUIRED_COLUMNS", "ImportResult", "dedupe_offers", "import_catalog_dir", "import_cloud_file"]
