"""Interactive API docs that work offline: Swagger UI served from the installed swagger-ui-bundle package.

FastAPI's default /docs and /redoc pages load their JavaScript and CSS from a CDN, so they are blank without a
network. /docs here uses the package's copy; /redoc is not offered because no installed package ships ReDoc's
JavaScript (a blank page would be worse than none)."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

DOCS_PATH = "/docs"
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
        return get_swagger_ui_html(openapi_url=app.openapi_url or "/openapi.json", title=title,
                                   swagger_js_url=f"{ASSETS_PATH}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{ASSETS_PATH}/swagger-ui.css",
                                   swagger_favicon_url=f"{ASSETS_PATH}/favicon-32x32.png",
                                   oauth2_redirect_url=OAUTH2_REDIRECT_PATH)

    @app.get(OAUTH2_REDIRECT_PATH, include_in_schema=False)
    async def swagger_oauth2_redirect() -> HTMLResponse:
        """Swagger UI's OAuth2 redirect helper page."""
        return get_swagger_ui_oauth2_redirect_html()

    return True
