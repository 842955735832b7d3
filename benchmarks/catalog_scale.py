"""Chat turns on catalogs of 5k to 1M offers (issue 14): warm turn p50/p95, the first (cold) turn and peak RSS per
size, with the p95 ratio to the smallest catalog measured in the same run.

Each catalog is synthesised in a temp folder from the shipped snapshot: every snapshot row copied with a new
region and zone (`<region>-r<copy>`) and its prices scaled by a seeded random factor (0.7-1.3), so the catalog holds
the same instance shapes at every size and only the offers multiply. Each size runs in a fresh process (peak RSS is
that process's ru_maxrss): one Advisor on the catalog, the first turn timed cold, then warm turns alternating a new
job (it/id/en) and a follow-up in its thread, as benchmarks/turn_overhead.py.

Run: .venv/bin/python benchmarks/catalog_scale.py [--sizes 5000,50000,500000,1000000] [--turns 60]
Targets: p95 at the largest size within 1.5x of the smallest; peak RSS <= 300 MB at every size.

--compare (issue 27): the comparison table (web.compare.compare_page, the body of GET /api/compare) and start-up
(ensure_catalog) per size, each in fresh processes: start-up of the first and of a second process, the first page
(after a catalog change made outside gpu-advisor, the file touched: read from the catalog, web.compare.head, while
the derived store is built in the background), a later page, a job's first page (after such a change it waits for
the store), later and last page
(while its table is built in the background, and after a restart) and how long its table took after the first page,
peak RSS; then a new version written as `gpu-advisor catalog update` writes it (what the code prepares before the
new file replaces the old one, timed) and the first pages right after. Catalogs are kept in
--keep (default /tmp) and reused. `--code DIR` runs another checkout (e.g. the main branch) in the same conditions:
.venv/bin/python benchmarks/catalog_scale.py --compare --sizes 5000,100000,1000000 [--code ../main]
Targets: first page <= 1 s, later pages <= 100 ms, RSS <= 300 MB, start-up <= 0.2 s after the first.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

NEW_JOBS = [
    "QLoRA su Llama 3 70B, budget 300 euro, vanno bene le spot?",
    "LoRA pada Mistral 7B, 10 ribu contoh, anggaran 2 juta rupiah",
    "Full fine-tune Llama 3.1 8B on 100M tokens within 24 hours, no spot",
    "fine-tuning completo di Llama 3.2 1B su 50k esempi, una sola GPU",
    "QLoRA Qwen2.5 14B dengan 20 ribu contoh, boleh spot",
    "pretrain GPT-2 small from scratch on 10B tokens, budget $200",
]
FOLLOW_UPS = [
    "e con 4 GPU?",
    "kalau pakai QLoRA?",
    "cheaper?",
    "e se uso le spot?",
    "yang lebih cepat?",
    "and with 8 GPUs?",
]


def _percentile(values: list[float], share: float) -> float:
    """The value below which `share` of the sorted values fall."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * (len(ordered) - 1) + 0.5))]


def synthesise(rows: int, path: Path, seed: int = 14) -> Path:
    """A catalog of `rows` offers: snapshot rows copied with new regions/zones and seeded price factors."""
    from tools.catalog.query import build_db, offer_row, read_snapshot

    _, offers = read_snapshot()
    base = [offer_row(o) for o in offers]
    rng = random.Random(seed)

    def generate() -> Any:
        for index in range(rows):
            copy, row = divmod(index, len(base))
            item = dict(base[row])
            if copy:
                factor = rng.uniform(0.7, 1.3)
                for key in ("price_per_hour", "spot_price_per_hour", "price_key", "spot_key", "ppg_key", "sppg_key"):
                    if item[key] is not None and item[key] < 1e17:
                        item[key] = round(item[key] * factor, 6)
                for key in ("region", "zone"):
                    if item[key]:
                        item[key] = f"{item[key]}-r{copy}"
                        item[f"{key}_lc"] = item[key].lower()
            yield item

    return build_db(
        path,
        generate(),
        {"source": f"synthetic {rows} offers", "snapshot_date": "synthetic", "built_from": "synthetic"},
        trusted_rows=True,
    )


def child(db: Path, turns: int) -> None:
    """Run the turns on one catalog and print one JSON line (in a fresh process, for its peak RSS)."""
    from agent.service import Advisor

    home = Path(tempfile.mkdtemp(prefix="gpu-advisor-scale-"))
    advisor = Advisor(checkpoint_path=home / "threads.sqlite", db_path=db)
    start = time.perf_counter()
    first = advisor.respond(NEW_JOBS[0])
    cold = (time.perf_counter() - start) * 1000
    for text in NEW_JOBS[1:]:
        advisor.respond(text)
    times = []
    for index in range(turns // 2):
        start = time.perf_counter()
        thread = advisor.respond(NEW_JOBS[index % len(NEW_JOBS)])["thread_id"]
        times.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        advisor.respond(FOLLOW_UPS[index % len(FOLLOW_UPS)], thread_id=thread)
        times.append((time.perf_counter() - start) * 1000)
    advisor.close()
    headline = (first.get("offers") or [{}])[0]
    print(
        json.dumps(
            {
                "cold_ms": cold,
                "p50": statistics.median(times),
                "p95": _percentile(times, 0.95),
                "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "headline": [headline.get("provider"), headline.get("instance_type")],
            }
        )
    )


COMPARE_JOB = "QLoRA su Llama 3 8B, budget 50 euro"
COMPARE_CHILD = """
import json, resource, sys, time
from pathlib import Path
db, phase, JOB = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
from tools.catalog.store import ensure_catalog
start = time.perf_counter(); ensure_catalog(db); out = {"startup_s": time.perf_counter() - start}
if phase == "pages":
    from web.compare import compare_page
    from web.compare.data import CompareQuery
    def timed(**kw):
        start = time.perf_counter(); result = compare_page(CompareQuery(**kw), db)
        return time.perf_counter() - start, result
    out["first_s"], first = timed()
    out["later_s"] = min(timed(page=p)[0] for p in (2, 3, 4))
    out["job_first_s"], job = timed(job=JOB)
    out["job_later_s"] = min(timed(job=JOB, page=p)[0] for p in (2, 3, 4))
    out["job_last_s"] = timed(job=JOB, page=job["pages"])[0]
    out["total"], out["job_rows"] = first["total"], job["total"]
    from web.compare import costs  # a job's table built in the background (issue 27): as a running server, wait
    start = time.perf_counter(); getattr(costs, "wait_for_builds", lambda: None)(); out["job_table_s"] = time.perf_counter() - start
if phase == "update":  # as `gpu-advisor catalog update` writes a new version: the finished file under a temp name,
    # what that code prepares before the swap (build_db's `prepare`, the CLI's _prepare_compare), then the rename
    import inspect, os, shutil
    from tools.catalog import build_db
    tmp = db.with_name(".catalog-bench.sqlite.tmp")
    shutil.copyfile(db, tmp)
    start = time.perf_counter()
    if "prepare" in inspect.signature(build_db).parameters:
        from cli.commands.catalog import _prepare_compare
        _prepare_compare(tmp)
    out["prepare_s"] = time.perf_counter() - start
    os.replace(tmp, db)
out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def compare_sizes(sizes: list[int], keep: Path, code: Path) -> None:
    """Start-up and the comparison table per catalog size, each phase in a fresh process of `code`."""
    import os

    env = {**os.environ, "PYTHONPATH": str(code)}
    print(f"code: {code}")
    for size in sizes:
        db = keep / f"gpu-advisor-scale-{size}.sqlite"
        if not db.exists():
            synthesise(size, db)

        def run(phase: str, db: Path = db) -> dict[str, Any]:
            """One phase in a fresh process of `code`: its JSON line."""
            out = subprocess.run(
                [sys.executable, "-c", COMPARE_CHILD, str(db), phase, COMPARE_JOB],
                capture_output=True,
                text=True,
                env=env,
                cwd=code,
            )
            if out.returncode:
                raise SystemExit(f"{phase} failed:\n{out.stderr[-3000:]}")
            return json.loads(out.stdout.strip().splitlines()[-1])

        os.utime(db)  # a new file version: the first start checks it in full, the first page builds the store
        first, second, pages, again = run("startup"), run("startup"), run("pages"), run("pages")
        print(
            f"{size:>9,} offers: start-up first {first['startup_s']:6.2f} s, next {second['startup_s']:6.3f} s | "
            f"first page {pages['first_s']:7.3f} s (after a restart {again['first_s']:6.3f} s), later page "
            f"{again['later_s'] * 1000:6.1f} ms | job first page {pages['job_first_s']:7.2f} s (after a restart "
            f"{again['job_first_s']:6.3f} s), later {pages['job_later_s'] * 1000:6.1f} ms (after a restart "
            f"{again['job_later_s'] * 1000:6.1f} ms), last {pages['job_last_s'] * 1000:6.1f} ms (after a restart "
            f"{again['job_last_s'] * 1000:6.1f} ms), table built {pages['job_table_s']:5.2f} s after, rows "
            f"{again['job_rows']:,} of {again['total']:,} | peak RSS "
            f"{max(pages['rss_mb'], again['rss_mb']):6.0f} MB",
            flush=True,
        )
        updated = run("update")
        fresh = run("pages")
        print(
            f"{'':>9}  after `catalog update` (a new file version, what the code prepares before the swap took "
            f"{updated['prepare_s']:5.2f} s): first page {fresh['first_s']:6.3f} s, job first page "
            f"{fresh['job_first_s']:6.3f} s",
            flush=True,
        )
    print(
        f"reproduce: .venv/bin/python benchmarks/catalog_scale.py --compare --sizes {','.join(map(str, sizes))} "
        f"--code {code}"
    )


def main() -> None:
    """Build each catalog, measure it in a fresh process, print the table, the ratios and the command."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000,50000,500000,1000000", help="comma-separated offer counts")
    parser.add_argument("--turns", type=int, default=60, help="warm turns per size (half new jobs, half follow-ups)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--compare", action="store_true", help="time /compare and start-up instead of chat turns")
    parser.add_argument("--keep", default=tempfile.gettempdir(), help="folder where --compare keeps its catalogs")
    parser.add_argument(
        "--code",
        default=str(Path(__file__).resolve().parents[1]),
        help="checkout whose code --compare runs (for before/after in the same conditions)",
    )
    args = parser.parse_args()
    if args.child:
        child(Path(args.child), args.turns)
        return
    if args.compare:
        compare_sizes([int(n) for n in args.sizes.split(",")], Path(args.keep), Path(args.code).resolve())
        return
    sizes = [int(n) for n in args.sizes.split(",")]
    results: dict[int, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for position, size in enumerate(sizes):
            start = time.perf_counter()
            db = synthesise(size, Path(folder) / f"catalog-{size}.sqlite")
            built = time.perf_counter() - start
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(db), "--turns", str(args.turns)],
                capture_output=True,
                text=True,
                check=True,
            )
            row = results[position] = json.loads(out.stdout.strip().splitlines()[-1])
            row["build_s"] = built
            db.unlink()
            print(
                f"{size:>9,} offers (built in {built:5.1f} s): first turn {row['cold_ms']:7.0f} ms, warm p50 "
                f"{row['p50']:6.1f} ms, p95 {row['p95']:6.1f} ms, peak RSS {row['rss_mb']:5.0f} MB, headline "
                f"{' '.join(str(x) for x in row['headline'])}",
                flush=True,
            )
    smallest = results[min(range(len(sizes)), key=lambda i: sizes[i])]
    largest = results[max(range(len(sizes)), key=lambda i: sizes[i])]
    print(
        f"p95 {max(sizes):,} / {min(sizes):,}: {largest['p95'] / smallest['p95']:.2f}x (target <= 1.5x; a size "
        "listed twice, e.g. 5000,1000000,5000, brackets the large one against load changes); "
        f"largest peak RSS {max(r['rss_mb'] for r in results.values()):.0f} MB (target <= 300 MB)"
    )
    print(f"reproduce: .venv/bin/python benchmarks/catalog_scale.py --sizes {args.sizes} --turns {args.turns}")


if __name__ == "__main__":
    main()
