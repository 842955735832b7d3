"""Bytes on disk and checkpoints per chat turn: the advisor's thread store (one trimmed checkpoint per turn) against
the baseline measured in the same run (LangGraph's default: a full-state checkpoint and writes after every step).

Run: .venv/bin/python benchmarks/thread_storage.py [--turns 48] [--database-url postgresql://…]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver

from agent.graph.build import build_graph
from agent.service import Advisor

TURNS = [
    "QLoRA su Llama 3 70B, budget 300 euro, vanno bene le spot?",
    "e con 4 GPU?",
    "LoRA pada Mistral 7B, 10 ribu contoh, anggaran 2 juta rupiah",
    "kalau pakai QLoRA?",
    "Full fine-tune Llama 3.1 8B on 100M tokens within 24 hours, no spot",
    "and with 8 GPUs?",
    "can I use spot instances for fine-tuning?",
    "pretraining GPT-2 small from scratch on 10B tokens, budget $200",
]


def disk_bytes(path: Path) -> int:
    """A SQLite file with its WAL."""
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if not p.name.endswith(".locks"))


def rows(path: Path) -> tuple[int, int]:
    """(checkpoints, writes) rows in a LangGraph SQLite file."""
    with sqlite3.connect(path) as connection:
        return (
            connection.execute("SELECT count(*) FROM checkpoints").fetchone()[0],
            connection.execute("SELECT count(*) FROM writes").fetchone()[0],
        )


def run_turns(respond, turns: int) -> list[float]:
    """Run `turns` turns as conversations of len(TURNS) turns; milliseconds per turn."""
    samples, thread = [], None
    for i in range(turns):
        if i % len(TURNS) == 0:
            thread = None
        start = time.perf_counter()
        thread = respond(TURNS[i % len(TURNS)], thread)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def baseline(home: Path, catalog: Path, turns: int) -> tuple[int, tuple[int, int], list[float]]:
    """The graph with LangGraph's default checkpointing (what the advisor did before)."""
    path = home / "baseline.sqlite"
    connection = sqlite3.connect(str(path), check_same_thread=False)
    graph = build_graph(catalog).compile(checkpointer=SqliteSaver(connection))

    def respond(text: str, thread: str | None) -> str:
        thread = thread or f"t{time.perf_counter_ns()}"
        graph.invoke(
            {"message": text, "explicit_language": None, "prefer": None, "changes": None},
            {"configurable": {"thread_id": thread}},
        )
        return thread

    samples = run_turns(respond, turns)
    connection.close()
    return disk_bytes(path), rows(path), samples


def advisor_store(home: Path, catalog: Path, turns: int, url: str | None) -> tuple[int, tuple[int, int], list[float]]:
    """The advisor's own thread store (SQLite file, or PostgreSQL tables when `url` is given)."""
    path = home / "advisor.sqlite"
    advisor = Advisor(checkpoint_path=path, db_path=catalog, database_url=url, retention_days=0)
    before = advisor.store.size_bytes() or 0
    samples = run_turns(lambda text, thread: advisor.respond(text, thread_id=thread)["thread_id"], turns)
    size = (advisor.store.size_bytes() or 0) - before if url else 0
    checkpoints = advisor.store.counts()[1]
    advisor.close()  # SQLite folds its write-ahead log into the file on close: measure the file then
    return size or disk_bytes(path), (checkpoints, rows(path)[1] if not url else 0), samples


def main() -> None:
    """Print bytes and checkpoints per turn, before and after, and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=48)
    parser.add_argument("--database-url", default=None, help="also measure the PostgreSQL store")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="gpu-advisor-threads-bench-"))
    catalog = home / "catalog.sqlite"
    Advisor(checkpoint_path=home / "warm.sqlite", db_path=catalog, retention_days=0).respond(TURNS[0])  # caches
    results = {
        "baseline (checkpoint every step)": baseline(home, catalog, args.turns),
        "advisor, SQLite (one per turn)": advisor_store(home, catalog, args.turns, None),
    }
    if args.database_url:
        results["advisor, PostgreSQL (one per turn)"] = advisor_store(home, catalog, args.turns, args.database_url)
    base_bytes = results["baseline (checkpoint every step)"][0] / args.turns
    for name, (size, (checkpoints, writes), samples) in results.items():
        per_turn = size / args.turns
        print(
            f"{name:38} {per_turn / 1024:8.1f} KB/turn  {checkpoints / args.turns:5.1f} checkpoints/turn  "
            f"{writes / args.turns:5.1f} writes/turn  p50 {statistics.median(samples):6.1f} ms  "
            f"(x{per_turn / base_bytes:.3f} bytes of baseline)"
        )
    print(f"{args.turns} turns each. reproduce: .venv/bin/python benchmarks/thread_storage.py --turns {args.turns}")


if __name__ == "__main__":
    main()
