"""The README's eval table is checked against the RESULTS.md files: every figure in its "first run → now" column
is recorded in the RESULTS.md of that eval, and every eval runner has a RESULTS.md."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = {
    "evals.calibrate": "evals/calibration/RESULTS.md",
    "evals.advice": "evals/advice/RESULTS.md",
    "evals.conversations": "evals/conversations/RESULTS.md",
    "evals.dialogues_blind": "evals/dialogues_blind/RESULTS.md",
    "evals.throughput": "evals/throughput/RESULTS.md",
    "evals.parse": "evals/parse/RESULTS.md",
    "evals.faq": "evals/faq/RESULTS.md",
    "evals.recommend": "evals/recommend/RESULTS.md",
    "evals.hostile_llm": "evals/hostile_llm/RESULTS.md",
    "evals.llm_vs_offline": "evals/llm_vs_offline/RESULTS.md",
}
FIGURE = re.compile(r"\d+/\d+|\d+(?:\.\d+)?")


def _table() -> dict[str, str]:
    """README eval table: module -> the 'first run → now' cell."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Evaluations and benchmarks", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    rows = {}
    for line in section.splitlines():
        found = re.match(r"\| `python -m (evals\.\w+)[^`]*` \|[^|]*\| (.*) \|$", line)
        if found:
            rows[found[1]] = found[2]
    return rows


def _recorded(figure: str, text: str) -> bool:
    """A fraction verbatim, a number equal at the README's precision to one in the text (1.00 ~ 1.000, 71 ~ 71.4)."""
    if "/" in figure:
        return re.search(rf"(?<![\d/]){re.escape(figure)}(?![\d/])", text) is not None
    decimals = len(figure.split(".")[1]) if "." in figure else 0
    wanted = float(figure)
    return any(round(float(number), decimals) == wanted for number in re.findall(r"\d+(?:\.\d+)?", text))


def test_every_eval_in_the_readme_has_a_results_file() -> None:
    rows = _table()
    assert set(rows) == set(RESULTS), sorted(rows)
    for _module, path in RESULTS.items():
        assert (ROOT / path).is_file(), path


def test_every_readme_figure_is_recorded_in_its_results_file() -> None:
    missing = {}
    for module, cell in _table().items():
        text = (ROOT / RESULTS[module]).read_text(encoding="utf-8")
        figures = [f for f in FIGURE.findall(cell.replace(",", "")) if not re.fullmatch(r"\d", f) or "/" in f]
        lost = [f for f in figures if not _recorded(f, text)]
        if lost:
            missing[module] = lost
    assert missing == {}
