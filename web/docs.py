"""Interactive API docs that work offline: Swagger UI served from the installed swagger-ui-bundle package.

FastAPI's default /docs and /redoc pages load their JavaScript and CSS from a CDN, so they are blank without a
network. /docs here uses the package's copy (Swagger UI 4, which reads OpenAPI 3.0: it is given the app's schema
rewritten to that dialect at /docs/openapi-3.0.json; /openapi.json itself stays 3.1); /redoc is not offered because no installed package ships ReDoc's
JavaScript (a blank page would be worse than none)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

DOCS_PATH = "/docs"
SPEC_30_PATH = "/docs/openapi-3.0.json"
ASSETS_PATH = "/docs-assets"
OAUTH2_REDIRECT_PATH = "/docs/oauth2-redirect"


def swagger_assets_dir() -> Path | None:
    """The folder with swagger-ui-bundle.js and swagger-ui.css from the swagger-ui-bundle package, if installed."""
    try:
        import swagger_ui_bundle
    except ImportError:
        return None
    folder = Path(swagger_ui_bundle.swagger_ui_path)
    return folder if (folder / "swagger-ui-bundle.js").is_file() and (folder / "swagger-ui.css").is_file() else None


def as_openapi_30(node: Any) -> Any:
    """The app's OpenAPI 3.1 document rewritten for Swagger UI 4 (the packaged version reads 3.0 only):
    `anyOf [X, {type: null}]` becomes X with `nullable: true`, `const` becomes a one-value `enum`."""
    if isinstance(node, list):
        return [as_openapi_30(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: as_openapi_30(value) for key, value in node.items()}
    if out.get("openapi", "").startswith("3.1"):
        out["openapi"] = "3.0.3"
    options = out.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        rest = [o for o in options if o != {"type": "null"}]
        del out["anyOf"]
        if len(rest) == 1:
            out.update(rest[0])
        elif rest:
            out["anyOf"] = rest
        out["nullable"] = True
    if "const" in out:
        out["enum"] = [out.pop("const")]
    if out.get("type") == "null":
        out.pop("type")
        out["nullable"] = True
    return out


def install_docs(app: FastAPI) -> bool:
    """Add GET /docs (and its assets) with no outside URL; False (no page) when the package is missing.

    The app must be created with docs_url=None and redoc_url=None so FastAPI adds no CDN pages of its own."""
    assets = swagger_assets_dir()
    if assets is None:
        return False
    app.mount(ASSETS_PATH, StaticFiles(directory=assets), name="docs-assets")
    title = f"{app.title} — API"

    @app.get(DOCS_PATH, include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        """Swagger UI for /openapi.json, every asset from this server."""
        return get_swagger_ui_html(
            openapi_url=SPEC_30_PATH,
            title=title,
            swagger_js_url=f"{ASSETS_PATH}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_PATH}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS_PATH}/favicon-32x32.png",
            oauth2_redirect_url=OAUTH2_REDIRECT_PATH,
        )

    @app.get(SPEC_30_PATH, include_in_schema=False)
    async def openapi_30() -> JSONResponse:
        """/openapi.json in the OpenAPI 3.0 dialect the packaged Swagger UI reads."""
        return JSONResponse(as_openapi_30(app.openapi()))

    @app.get(OAUTH2_REDIRECT_PATH, include_in_schema=False)
    async def swagger_oauth2_redirect() -> HTMLResponse:
        """Swagger UI's OAuth2 redirect helper page."""
        return get_swagger_ui_oauth2_redirect_html()

    return True
