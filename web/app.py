"""The FastAPI app: chat API with streaming, tool endpoints, the widget's static files and its demo page."""

from __future__ import annotations

import html
import logging
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from agent.llm import llm_configured
from contract.version import installed_version
from web import chat, compare, export_api, tools_api
from web.blocking import run_blocking
from web.deps import AppResources
from web.docs import install_docs
from web.errors import install_error_handlers
from web.mcp import mount_mcp
from web.middleware import BodySizeLimit, CatchAll, JsonCORSMiddleware, RateLimit
from web.rate_limit import limiter_for
from web.schemas import Health, publish_message_limit
from web.serving import CatalogWatch, public_base_url
from web.settings import ServerSettings
from web.slack import EVENTS_PATH as SLACK_EVENTS_PATH
from web.slack import mount as mount_slack

STATIC_DIR = Path(__file__).parent / "static"
WIDGET_PATH = "/widget"
DEMO_PATH = "/demo"
ADVISOR_THREADS = 32
"""Threads for the synchronous tools, and for chat turns with an LLM (they mostly wait on it)."""
OFFLINE_TURN_THREADS = 2
"""Chat turns a worker runs at once without an LLM. An offline turn is all CPU under one GIL: more threads take it
from each other (CPU per turn rose with the client count) and leave no more turns per second; requests beyond these
wait in the pool's queue, costing nothing (benchmarks/http_turns.py, issue 27). Two, not one, so that a turn
waiting on a database lock does not leave the core idle."""
SLACK_MAX_BODY_BYTES = 1_048_576
"""Slack's interactive payloads carry the whole message that was clicked: far above the chat API's limit."""

AdvisorFactory = Callable[[ServerSettings], Any]


def default_advisor(settings: ServerSettings) -> Any:
    """The real offline-capable Advisor with the configured checkpoint and catalog files."""
    from agent.service import Advisor

    return Advisor(
        checkpoint_path=settings.checkpoint_path, db_path=settings.db_path, database_url=settings.database_url
    )


def _catalog_path(settings: ServerSettings) -> Path:
    """The offers database, built from the shipped snapshot when missing; when it cannot be used the server still
    starts (one log line): catalog endpoints and job turns answer 503 catalog_unavailable, FAQ answers work."""
    from tools.catalog import CatalogError, ensure_db, resolve_db_path

    try:
        return ensure_db(settings.db_path)
    except CatalogError as error:
        logging.getLogger("gpu_advisor.web").error("catalog unavailable: %s", error)
        return resolve_db_path(settings.db_path)[0]


def turn_threads(settings: ServerSettings) -> int:
    """How many chat turns one worker runs at once: the setting, else OFFLINE_TURN_THREADS without an LLM and
    ADVISOR_THREADS with one."""
    if settings.turn_threads:
        return settings.turn_threads
    return ADVISOR_THREADS if llm_configured() else OFFLINE_TURN_THREADS


def _watch_catalog(settings: ServerSettings, res: AppResources) -> CatalogWatch | None:
    """Prepare each version of the catalog file as it appears, before anyone asks: the candidates the advisor's
    rankings start from, then its /compare store (head first, in their own thread) (web.serving.catalog_watch)."""
    if not settings.catalog_watch_s or res.catalog_path is None:
        return None
    from tools.ranking import prepare_candidates
    from web.compare import warm_store

    ranked_on = Path(getattr(res.advisor, "db_path", None) or res.catalog_path)

    def prepare(catalog: Path) -> None:
        """The candidates here (a chat turn waits for them), then the store in the background."""
        prepare_candidates(ranked_on)
        warm_store(catalog)

    return CatalogWatch(res.catalog_path, prepare, interval_s=settings.catalog_watch_s).start()


def create_app(settings: ServerSettings | None = None, *, advisor_factory: AdvisorFactory = default_advisor) -> FastAPI:
    """Build the app; the advisor and the catalog are loaded at startup and closed at shutdown."""
    settings = settings or ServerSettings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        """Load the catalog and the advisor in a worker thread, close them on shutdown."""
        executor = ThreadPoolExecutor(max_workers=ADVISOR_THREADS, thread_name_prefix="advisor")
        turns = ThreadPoolExecutor(max_workers=turn_threads(settings), thread_name_prefix="turn")
        res = AppResources(settings=settings, executor=executor, turns=turns)
        app.state.resources = res
        res.catalog_path = await run_blocking(executor, _catalog_path, settings)
        if res.catalog_path.is_file():
            from web.compare import warm_store

            warm_store(res.catalog_path)  # the /compare table's store, prepared in the background
        res.advisor = await run_blocking(executor, advisor_factory, settings)
        watch = res.catalog_watch = _watch_catalog(settings, res)
        try:
            yield
        finally:
            if watch is not None:
                watch.stop()
            close = getattr(res.advisor, "close", None)
            if callable(close):
                close()
            executor.shutdown(wait=False, cancel_futures=True)
            turns.shutdown(wait=False, cancel_futures=True)

    app = FastAPI(
        title="gpu-advisor",
        version=installed_version(),
        summary="Which rented GPUs to use for a training or fine-tuning job, why, and what it will cost.",
        description=(
            "Chat with the advisor (JSON or Server-Sent Events) or call its deterministic tools directly. "
            'Every error is JSON `{"error": {"code", "message"}}` with a stable code.'
        ),
        lifespan=lifespan,
        docs_url=None,  # web.docs serves /docs from the installed swagger-ui-bundle (no CDN)
        redoc_url=None,  # no installed package ships ReDoc's JavaScript: no blank page
    )
    install_error_handlers(app)
    publish_message_limit(app, settings.max_message_chars)  # the schema's message limit is the configured one
    app.include_router(chat.router)
    app.include_router(tools_api.router)
    app.include_router(compare.router)
    app.include_router(export_api.router)
    mount_mcp(app, host=settings.host)  # MCP tools over streamable HTTP at /mcp
    install_docs(app)
    _add_pages(app)
    mount_slack(app, lambda: app.state.resources.advisor)  # POST /slack/events when SLACK_BOT_TOKEN+SIGNING_SECRET set
    app.mount(WIDGET_PATH, StaticFiles(directory=STATIC_DIR), name="widget")
    app.add_middleware(CatchAll)
    app.add_middleware(
        BodySizeLimit, max_bytes=settings.max_body_bytes, path_limits={SLACK_EVENTS_PATH: SLACK_MAX_BODY_BYTES}
    )
    app.add_middleware(RateLimit, limiter=limiter_for(settings))  # shared by workers and servers
    app.add_middleware(
        JsonCORSMiddleware,
        allow_origins=settings.allowed_origins,
        allow_credentials=False,
        allow_methods=["GET", "POST"],
        allow_headers=["Content-Type", "Accept", "Last-Event-ID"],
        expose_headers=["Retry-After"],
        max_age=600,
    )
    return app


def render_demo(api_base: str) -> str:
    """The demo page with the widget's embed tag pointing at `api_base`."""
    template = (STATIC_DIR / "demo.html").read_text(encoding="utf-8")
    return template.replace("{{API}}", html.escape(api_base, quote=True))


def _add_pages(app: FastAPI) -> None:
    """GET /healthz, the demo page, and / redirecting to it."""

    @app.get(
        "/healthz",
        response_model=Health,
        response_model_exclude_none=True,
        tags=["meta"],
        summary="Liveness and readiness",
        responses={503: {"model": Health, "description": "The conversation threads cannot be written."}},
    )
    async def healthz(request: Request) -> Any:
        """ok, the version, whether the advisor is loaded, and whether a turn can be saved (503 when not)."""
        res: AppResources | None = getattr(request.app.state, "resources", None)
        if not (res and res.advisor is not None):
            return Health(status="ok", version=app.version, advisor=False)
        store = getattr(res.advisor, "store", None)
        if store is None:  # an advisor without thread storage (tests' stand-ins)
            return Health(status="ok", version=app.version, advisor=True)
        problem = await run_blocking(res.executor, store.unwritable)
        health = Health(
            status="unavailable" if problem else "ok",
            version=app.version,
            advisor=True,
            storage=problem is None,
            reason=problem,
        )
        if problem:
            return JSONResponse(health.model_dump(exclude_none=True), status_code=503)
        return health.model_dump(exclude_none=True)

    @app.get(DEMO_PATH, response_class=HTMLResponse, tags=["meta"], summary="A page that embeds the widget")
    async def demo(request: Request) -> HTMLResponse:
        """A sample GPU price-comparison page with the one-tag widget embed."""
        return HTMLResponse(render_demo(public_base_url(request.scope)))  # never the Host header

    @app.get("/", include_in_schema=False)
    async def root() -> RedirectResponse:
        """The demo page."""
        return RedirectResponse(DEMO_PATH)


def create_app_from_env(tune: Callable[[Any], Any] | None = None) -> FastAPI:
    """App factory for `uvicorn --factory` and worker processes: settings from GPU_ADVISOR_* variables; a worker of
    `serve --workers N` exits when its master dies; `tune` (the entry point's process settings) gets the advisor."""
    from web.serving import watch_master

    watch_master()
    if tune is None:
        return create_app(ServerSettings.from_env())
    return create_app(ServerSettings.from_env(), advisor_factory=lambda settings: tune(default_advisor(settings)))
