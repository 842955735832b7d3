"""`gpu-advisor catalog build|query|update|info`: the SQLite catalog of real GPU offers."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.table import Table

from cli.output import UserError, console, key_value_table, print_json
from tools.catalog import SNAPSHOT_FILE, SORTS

catalog_app = typer.Typer(
    help="The catalog of real GPU offers (SQLite; built from the shipped snapshot, a SkyPilot "
    "catalog folder, or downloaded with `update`).",
    no_args_is_help=True,
)

_DB_OPTION = typer.Option(
    None,
    "--db",
    help="Database file (default: $GPU_ADVISOR_DB, $GPU_ADVISOR_HOME/catalog.sqlite or the user data dir).",
)


def _db(db: Path | None) -> Path:
    """The catalog path: --db, else the default one."""
    from tools.catalog import resolve_db_path

    return resolve_db_path(db)[0]


def _usable_db(db: Path | None) -> Path:
    """A usable catalog (built on first use); a rebuild of a damaged or outdated one is told on stderr."""
    from tools.catalog import ensure_catalog

    status = ensure_catalog(db)
    if status.notice:
        sys.stderr.write(f"note: {status.notice}\n")
    return status.path


def _prepare_compare(path: Path) -> None:
    """Build the /compare listings of a new catalog version (the finished file, before it replaces the old one), so
    that the page's first request does not wait for them (a failure is one note: the page builds them on first
    use)."""
    from web.compare import ensure_store

    try:
        ensure_store(path)
    except Exception as error:  # the catalog itself is built; the page retries on first use
        sys.stderr.write(f"note: the comparison table was not prepared ({error}); /compare prepares it on first use\n")


@catalog_app.command("build")
def build_command(
    from_dir: Path | None = typer.Option(
        None, "--from", help="SkyPilot catalog folder (<cloud>/vms.csv or <cloud>.csv), e.g. ~/.sky/catalogs/v7."
    ),
    db: Path | None = _DB_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """(Re)build the catalog database, from the shipped snapshot by default."""
    from tools.catalog import build_from_catalog_dir, build_from_snapshot, read_meta

    path = _db(db)
    if from_dir is None:
        build_from_snapshot(db, prepare=_prepare_compare)
        meta = read_meta(path)
        result = {
            "db_path": str(path),
            "built_from": "snapshot",
            "offers": meta.get("offer_count"),
            "counts": meta.get("counts"),
            "source": meta.get("source"),
            "snapshot_date": meta.get("snapshot_date"),
            "issues": [],
        }
    else:
        if not Path(from_dir).expanduser().is_dir():
            raise UserError(f"catalog folder not found: {from_dir}")
        imported = build_from_catalog_dir(from_dir, db, prepare=_prepare_compare)
        result = {
            "db_path": str(path),
            "built_from": str(from_dir),
            "offers": len(imported.offers),
            "counts": imported.counts,
            "source": imported.source,
            "snapshot_date": imported.snapshot_date,
            "issues": [str(i) for i in imported.issues],
            "notes": imported.notes,
        }
    if as_json:
        print_json(result)
        return
    console.print(
        key_value_table(
            "Catalog built",
            [
                ("database", result["db_path"]),
                ("from", result["built_from"]),
                ("offers", result["offers"]),
                ("source", result["source"]),
                ("snapshot date", result["snapshot_date"]),
                ("per provider", ", ".join(f"{k} {v}" for k, v in (result["counts"] or {}).items())),
            ],
        )
    )
    for issue in result["issues"]:
        console.print(f"[yellow]skipped[/yellow] {issue}")


@catalog_app.command("query")
def query_command(
    min_vram: float | None = typer.Option(None, "--min-vram", help="Minimum GiB per GPU."),
    gpu: str | None = typer.Option(None, "--gpu", help="GPU in any spelling: A100, a100-80gb, H100-SXM, 4090."),
    gpu_count: int | None = typer.Option(None, "--gpu-count", help="Exactly this many GPUs per instance."),
    min_gpu_count: int | None = typer.Option(None, "--min-gpu-count", help="At least this many GPUs."),
    provider: list[str] | None = typer.Option(None, "--provider", help="Provider id (repeatable)."),
    region: list[str] | None = typer.Option(None, "--region", help="Region or zone (repeatable)."),
    spot_only: bool = typer.Option(False, "--spot-only", help="Only offers with a spot price."),
    max_price: float | None = typer.Option(
        None, "--max-price", help="USD/hour for the instance (spot price with --spot-only)."
    ),
    interconnect: str | None = typer.Option(None, "--interconnect", help="nvlink, pcie, unknown or none."),
    sort: str = typer.Option("price", "--sort", help=f"One of: {', '.join(SORTS)}."),
    limit: int | None = typer.Option(20, "--limit", help="At most this many offers (0 = all)."),
    db: Path | None = _DB_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """Filter and sort the offers."""
    from tools.catalog import query_offers, read_meta

    if sort not in SORTS:
        raise UserError(f"unknown --sort {sort!r}; expected one of {', '.join(SORTS)}")
    if interconnect and interconnect.lower() not in {"nvlink", "pcie", "unknown", "none"}:
        raise UserError(f"unknown --interconnect {interconnect!r}; expected nvlink, pcie, unknown or none")
    for name, value in (("--min-vram", min_vram), ("--max-price", max_price)):
        if value is not None and value < 0:
            raise UserError(f"{name} must be >= 0")
    for name, value in (("--gpu-count", gpu_count), ("--min-gpu-count", min_gpu_count)):
        if value is not None and value < 1:
            raise UserError(f"{name} must be >= 1")
    if limit is not None and limit < 0:
        raise UserError("--limit must be >= 0")
    path = _usable_db(db)
    offers = query_offers(
        path,
        min_vram_gib=min_vram,
        gpu=gpu,
        gpu_count=gpu_count,
        min_gpu_count=min_gpu_count,
        providers=provider or None,
        regions=region or None,
        spot_only=spot_only,
        max_price=max_price,
        interconnect=interconnect,
        sort=sort,
        limit=limit or None,
    )
    meta = read_meta(path)
    if as_json:
        print_json(
            {
                "db_path": str(path),
                "source": meta.get("source"),
                "snapshot_date": meta.get("snapshot_date"),
                "count": len(offers),
                "offers": offers,
            }
        )
        return
    table = Table(
        title=f"{len(offers)} offer(s) · USD/hour · catalog of {meta.get('snapshot_date', '?')}", title_justify="left"
    )
    table.add_column("provider", overflow="fold")
    table.add_column("instance", overflow="fold")
    table.add_column("region", overflow="fold")
    table.add_column("GPU", no_wrap=True)
    table.add_column("n", justify="right")
    table.add_column("GiB", justify="right")
    table.add_column("link", overflow="fold")
    table.add_column("$/h", justify="right")
    table.add_column("spot $/h", justify="right")

    def money(value: float | None) -> str:
        return "–" if value is None else f"{value:,.2f}"

    for offer in offers:
        gpu_label = offer.gpu + (f" {offer.gpu_form_factor}" if offer.gpu_form_factor else "")
        link = offer.interconnect + (f" {offer.nvlink_gbs:g} GB/s" if offer.nvlink_gbs else "")
        table.add_row(
            offer.provider + (f" ({offer.upstream_provider})" if offer.upstream_provider else ""),
            offer.instance_type,
            offer.zone or offer.region or "",
            gpu_label,
            str(offer.gpu_count),
            "?" if offer.vram_gib_per_gpu is None else f"{offer.vram_gib_per_gpu:g}",
            link,
            money(offer.price_per_hour),
            money(offer.spot_price_per_hour),
        )
    console.print(table)


@catalog_app.command("update")
def update_command(
    base_url: str | None = typer.Option(
        None,
        "--base-url",
        help="Where the SkyPilot v7 catalog lives (default: $GPU_ADVISOR_CATALOG_URL, else SkyPilot's hosted catalog).",
    ),
    cloud: list[str] | None = typer.Option(None, "--cloud", help="Only these clouds (repeatable)."),
    timeout: float = typer.Option(
        120.0, "--timeout", help="Give up after this many seconds in all (every download together)."
    ),
    allow_shrink: bool = typer.Option(
        False,
        "--allow-shrink",
        help="Accept a cloud losing more than half of its offers (otherwise taken for a cut file).",
    ),
    db: Path | None = _DB_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """Download the current SkyPilot catalog, check it and rebuild atomically; on any failure the old catalog
    stays."""
    from tools.catalog import UpdateError, update_catalog

    try:
        report = update_catalog(
            db,
            base_url=base_url,
            clouds=cloud or None,
            timeout=timeout,
            allow_shrink=allow_shrink,
            prepare=_prepare_compare,
        )
    except UpdateError as error:
        raise UserError(f"catalog update failed, old catalog kept: {error}") from error
    if as_json:
        print_json(report.as_dict())
        return
    console.print(
        key_value_table(
            "Catalog updated",
            [
                ("database", report.db_path),
                ("from", report.base_url),
                ("offers", report.offers),
                ("per provider", ", ".join(f"{k} {v}" for k, v in report.counts.items())),
                ("snapshot date", report.snapshot_date),
                ("skipped rows", len(report.issues)),
            ],
        )
    )


@catalog_app.command("info")
def info_command(
    db: Path | None = _DB_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """Where the database is, what it was built from, and offer counts."""
    from tools.catalog import catalog_stats

    path = _usable_db(db)
    stats = catalog_stats(path)
    if as_json:
        print_json({"db_path": str(path), **stats})
        return
    meta = stats["meta"]
    console.print(
        key_value_table(
            "Catalog",
            [
                ("database", str(path)),
                ("source", meta.get("source")),
                ("snapshot date", meta.get("snapshot_date")),
                ("built", meta.get("built_at")),
                ("offers", meta.get("offer_count")),
                ("per provider", ", ".join(f"{k} {v}" for k, v in stats["offers_per_provider"].items())),
            ],
        )
    )


@catalog_app.command("snapshot", hidden=True)
def snapshot_command(
    from_dir: Path = typer.Option(..., "--from", help="SkyPilot catalog folder."),
    out: Path = typer.Option(SNAPSHOT_FILE, "--out", help="Snapshot file to write (.jsonl.gz)."),
    source: str | None = typer.Option(None, "--source", help="Source text recorded in the snapshot."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """(Maintainers) write the offers snapshot shipped with the package from a catalog folder."""
    from tools.catalog import make_snapshot

    result = make_snapshot(from_dir, out, source=source)
    summary = {
        "out": str(out),
        "offers": len(result.offers),
        "counts": result.counts,
        "snapshot_date": result.snapshot_date,
        "issues": [str(i) for i in result.issues],
    }
    if as_json:
        print_json(summary)
    else:
        console.print(key_value_table("Snapshot written", [(k, v) for k, v in summary.items() if k != "issues"]))


def register(app: typer.Typer) -> None:
    """Add the `catalog` command group to the CLI."""
    app.add_typer(catalog_app, name="catalog")
