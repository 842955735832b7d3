"""Where the server listens and how clients reach it: checking the listen address up front, which proxies may set
X-Forwarded-For, and the server's own base URL (never taken from the request's Host header)."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Mapping
from typing import Any

from contract.errors import UserError

TRUSTED_PROXIES_ENV = "GPU_ADVISOR_TRUSTED_PROXIES"
PUBLIC_URL_ENV = "GPU_ADVISOR_PUBLIC_URL"


def trusted_proxies(environ: Mapping[str, str] | None = None) -> list[str]:
    """The proxies allowed to set X-Forwarded-For: $GPU_ADVISOR_TRUSTED_PROXIES, comma-separated IP addresses or
    networks (10.0.0.0/8); none by default, so a client can never choose the address it is rate-limited by."""
    raw = (os.environ if environ is None else environ).get(TRUSTED_PROXIES_ENV, "")
    proxies = [item.strip() for item in raw.split(",") if item.strip()]
    for item in proxies:
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError as error:
            raise UserError(f"{TRUSTED_PROXIES_ENV}: {item!r} is not an IP address or network") from error
    return proxies


def uvicorn_proxy_options(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """uvicorn.run keyword arguments: honour X-Forwarded-For/-Proto only from the trusted proxies (uvicorn takes
    the right-most address not itself a trusted proxy); without any, proxy headers are ignored entirely."""
    proxies = trusted_proxies(environ)
    if not proxies:
        return {"proxy_headers": False}
    return {"proxy_headers": True, "forwarded_allow_ips": ",".join(proxies)}


def check_listen_address(host: str, port: int) -> None:
    """UserError (one line) unless `host` resolves and `host:port` can be bound right now."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError, OSError) as error:
        raise UserError(
            f"cannot listen on --host {host!r}: not a valid address or host name "
            f"({getattr(error, 'strerror', None) or error})"
        ) from error
    family, kind, proto, _, address = infos[0]
    try:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as error:
        raise UserError(f"cannot listen on {host}:{port}: {error.strerror or error}") from error


def public_base_url(scope: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> str:
    """The base URL pages should point at: $GPU_ADVISOR_PUBLIC_URL, else the scheme and the local address of the
    socket the request came in on. The Host header is never used (it is the client's to choose)."""
    configured = (os.environ if environ is None else environ).get(PUBLIC_URL_ENV, "").strip().rstrip("/")
    if configured.startswith(("http://", "https://")):
        return configured
    scheme = "https" if scope.get("scheme") == "https" else "http"
    server = scope.get("server")
    if not server:
        return ""  # no socket address (a test transport): same-origin relative URLs
    host, port = server[0], server[1]
    if ":" in str(host):
        host = f"[{host}]"
    default = {"http": 80, "https": 443}[scheme]
    return f"{scheme}://{host}" + ("" if port in (None, default) else f":{port}")
