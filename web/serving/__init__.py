"""The web.serving package.
"""

from web.serving.listen import check_listen_address, public_base_url, uvicorn_proxy_options
from web.serving.preflight import check_thread_storage
from web.serving.worker_watchdog import MASTER_PID_VAR, watch_master

from web.serving.header_deadline import HeaderDeadlineProtocol
from web.serving.header_deadline import header_timeout_s

__all__ = ["HeaderDeadlineProtocol", "header_timeout_s", 'MASTER_PID_VAR', 'check_listen_address', 'check_thread_storage', 'public_base_url', 'uvicorn_proxy_options', 'watch_master']
