"""The web.serving package."""

from web.serving.catalog_watch import CatalogWatch
from web.serving.header_deadline import HeaderDeadlineProtocol, header_timeout_s
from web.serving.listen import check_listen_address, public_base_url, uvicorn_proxy_options
from web.serving.preflight import check_thread_storage
from web.serving.worker_watchdog import MASTER_PID_VAR, watch_master
from web.serving.workers import run as run_workers

__all__ = [
    "MASTER_PID_VAR",
    "CatalogWatch",
    "HeaderDeadlineProtocol",
    "check_listen_address",
    "check_thread_storage",
    "header_timeout_s",
    "public_base_url",
    "run_workers",
    "uvicorn_proxy_options",
    "watch_master",
]
