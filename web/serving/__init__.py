"""The web.serving package.
"""

from web.serving.listen import check_listen_address, public_base_url, uvicorn_proxy_options
from web.serving.preflight import check_thread_storage
from web.serving.worker_watchdog import MASTER_PID_VAR, watch_master

__all__ = ['MASTER_PID_VAR', 'check_listen_address', 'check_thread_storage', 'public_base_url', 'uvicorn_proxy_options', 'watch_master']
