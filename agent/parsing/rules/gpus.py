"""GPU models and counts, nodes included."""

from __future__ import annotations

import re

from agent.parsing.rules.scan import (
    Scan,
    after,
    alt,
    before,
    rx,
    unit_follows,
    vocabulary,
    words,
)

try:  # canonical GPU names come from the GPU table module
    from tools.gpus import canonical_gpu_name, gpu_family_names
except ImportError:  # pragma: no cover - only while tools/gpus.py is missing

    def canonical_gpu_name(raw: str) -> str | None:  # type: ignore[misc]
        """Fallback while the GPU table is missing: no GPU is recognised."""
        return None

    def gpu_family_names(raw: str) -> list[str]:  # type: ignore[misc]
        """Fallback while the GPU table is missing: no family is known."""
        return []


_GPU_TOKEN = (
    r"(?<![\w.])(?:nvidia\s+|amd\s+)?(?:rtx\s*(?:pro\s*)?)?(?:geforce\s+)?"
    r"(?:[a-z]{1,2}\d{1,4}[a-z]{0,3}|a\d{4}|\d{4}(?:\s*ti)?|mi\d{3}x?|gaudi\s*\d)"
    r"(?:[\s-]*(?:sxm\d?|pcie|nvl|ada))?(?:[\s-]*(?:(?:da|with|con|dengan|of)\s+)?\d{2,3}\s*gb?(?:\s*vram)?|-\d{2}(?![\w.]))?"
    r"s?(?![\w])"
)
_MEMORY_CONNECTOR = r"\s(?:da|with|con|dengan|of)(?=\s+\d)"
"""Words between a GPU name and its memory size ("A100 da 80GB"), dropped before the name lookup."""


def _gpu_mentions(scan: Scan) -> list[tuple[re.Match[str], str]]:
    """Every GPU model named in the text, with its canonical name, in order."""
    mentions = []
    for match in rx(_GPU_TOKEN).finditer(scan.text):
        raw = re.sub(_MEMORY_CONNECTOR, "", match.group(0))
        if (
            re.fullmatch(r"\d{4}(?:\s*ti)?s?", raw)
            and not before(scan, match.start(), ["rtx", "geforce", "gtx"], 8)
            and unit_follows(scan, match.end())
        ):
            continue  # "4090 tokens" is a number; "una 4090" is a card
        raw = re.sub(r"(?<=\d-\d\d)$", "gb", raw)  # "A100-80" -> "a100-80gb"
        raw = raw if canonical_gpu_name(raw) else re.sub(r"(?<=\d)s$", "", raw)  # "A100s"
        size_before = re.search(r"(?<![\w.])(\d{2,3})\s*gb?\s*$", scan.text[max(0, match.start() - 12) : match.start()])
        if size_before and len(gpu_family_names(raw)) > 1:  # "the 40GB A100s"
            raw = f"{raw} {size_before.group(1)}gb"
        name = canonical_gpu_name(raw)
        if name is None or scan.is_claimed(match.start(), match.end()):
            continue
        mentions.append((match, _family_or(name, raw)))
    return mentions


def _family_or(name: str, raw: str) -> str:
    """A bare family name the user wrote without a memory size ("A100": 40 or 80 GB) stays the family (issue 10)."""
    if len(gpu_family_names(raw)) > 1:
        return re.sub(r"-\d+GB$", "", name)
    return name


def _chosen_mention(scan: Scan, mentions: list[tuple[re.Match[str], str]]) -> tuple[re.Match[str], str]:
    """The GPU the user wants: the first named, unless a later one follows a change word ("now", "invece")."""
    first_end = mentions[0][0].end()
    for match, name in reversed(mentions[1:]):
        marker = before(scan, match.start(), vocabulary()["change_markers"], window=40)
        if name != mentions[0][1] and marker and max(0, match.start() - 40) + marker.start() >= first_end:
            return match, name  # the change word sits between the first GPU and this one
    return mentions[0]


def _node_factor(scan: Scan, start: int) -> tuple[int, int]:
    """GPUs per node times nodes: "2 nodi da 8 H100" -> (2, start of "2"); (1, start) when no node count precedes."""
    match = rx(
        r"(?<![\w.,])(\d{1,4})\s*(?:x\s*)?"
        + alt(vocabulary()["node_units"])
        + r"\s*(?:"
        + alt(words("node_connectors"))
        + r")?\s*(?:with\s+|con\s+)?$"
    ).search(scan.text[max(0, start - 40) : start])
    if match is None:
        return 1, start
    return int(match.group(1)), max(0, start - 40) + match.start()


def _per_node_factor(scan: Scan, end: int) -> int:
    """'8 GPU per node, 2 nodes': when the count right before `end` is per node, the node count stated elsewhere."""
    if rx(r"\s*" + alt(words("per_node_words")) + r"(?![\w])").match(scan.text, end) is None:
        return 1
    for q in scan.free():
        unit = after(scan, q.end, vocabulary()["node_units"], gap=r"\s*(?:x\s*)?")
        if unit and q.scale == 1 and float(q.number).is_integer() and 1 <= q.number <= 4096:
            scan.claim(q.start, unit.end())
            return int(q.number)
    return 1


def read_gpus(scan: Scan) -> None:
    """GPU models and counts ("4x H100", "su 8 H100", "8 kartu A100", "on A100s", "H100 x 8", "2 nodi da 8 H100")."""
    gpu_units = vocabulary()["gpu_units"]
    mentions = _gpu_mentions(scan)
    if not mentions:
        return
    match, name = _chosen_mention(scan, mentions)
    scan.set("gpu", name)
    for other, _ in mentions:
        scan.claim(other.start(), other.end())
    count = None
    for q in scan.free():
        gap = scan.text[q.end : match.start()]
        if q.end <= match.start() and re.fullmatch(
            r"\s*(?:x|\*)?\s*(?:sol[oa]|singol[oa]|single|only|just|hanya|cuma|saja)?\s*"
            r"(?:" + alt(gpu_units) + r"\s*)?(?:nvidia\s*)?",
            gap,
        ):
            count = q
    after = rx(r"\s*(?:x|\*)\s*(\d{1,5})(?![\w.,])|\s*(?:s\s+)?(?:x|\*)?\s*(\d{1,5})\s*" + alt(gpu_units)).match(
        scan.text, match.end()
    )
    if count is not None and count.scale == 1:
        nodes, start = _node_factor(scan, count.start)
        trailing = rx(
            r"\s*(?:(x|\*)|per|su|on|across|over|di|in|spread\s+over|tersebar\s+di)\s*(\d{1,4})\s*"
            + alt(vocabulary()["node_units"])
            + r"(?![\w])"
        ).match(scan.text, match.end())
        if nodes == 1 and trailing:  # "8 H100 x 2 nodi" multiplies; "16 H100 over 2 nodes" is 16 in all
            nodes = int(trailing.group(2)) if trailing.group(1) else 1
            scan.claim(trailing.start(), trailing.end())
        if nodes == 1:
            nodes = _per_node_factor(scan, match.end())
        scan.set("num_gpus", nodes * int(count.number))
        scan.claim(start, count.end)
    elif after is not None:
        scan.set("num_gpus", int(after.group(1) or after.group(2)))
        scan.claim(match.end(), after.end())
    else:
        _counted(scan)


def _counted(scan: Scan) -> None:
    """'pake H100 aja, 8 biji': a count with a counter word once a GPU is named."""
    counters = alt(words("gpu_counters"))
    for q in scan.free():
        if (
            q.scale == 1
            and float(q.number).is_integer()
            and 1 <= q.number <= 4096
            and rx(r"\s*" + counters + r"(?![\w])").match(scan.text, q.end)
        ):
            scan.set("num_gpus", int(q.number))
            scan.claim(q.start, q.end)
            return


def read_gpu_count(scan: Scan) -> None:
    """Counts of GPUs without a model ("otto GPU", "dua GPU", "and with 4 GPUs?", "a single GPU")."""
    for q in scan.free():
        unit = after(
            scan,
            q.end,
            [r"x\s*" + alt(vocabulary()["gpu_units"]), alt(vocabulary()["gpu_units"])],
            gap=r"[\s-]*(?:x\s*)?",
        )
        if unit and q.scale == 1 and q.number >= 1 and float(q.number).is_integer():
            nodes, start = _node_factor(scan, q.start)
            if nodes == 1:
                nodes = _per_node_factor(scan, unit.end())
            scan.set("num_gpus", nodes * int(q.number))
            scan.claim(start, unit.end())
            return
    nodes_of = rx(
        r"(?<![\w.,])(\d{1,4})\s*(?:x\s*)?"
        + alt(vocabulary()["node_units"])
        + r"\s*(?:"
        + alt(words("node_connectors"))
        + r")\s*(\d{1,4})(?![\w]|[.,]\d)"
    ).search(scan.text)
    if nodes_of and not scan.is_claimed(nodes_of.start(), nodes_of.end()) and not unit_follows(scan, nodes_of.end()):
        scan.set("num_gpus", int(nodes_of.group(1)) * int(nodes_of.group(2)))  # "2 nodi da 8", "2 nodes of 8"
        scan.claim(nodes_of.start(), nodes_of.end())
        return
    match = rx(r"(?<![\w-])(?:gpus?|schede|kartu)\s*(?:x|:|=)\s*(\d{1,5})(?![\w.,])").search(scan.text)
    if match and not scan.is_claimed(match.start(1), match.end(1)):
        scan.set("num_gpus", int(match.group(1)))
        scan.claim(match.start(1), match.end(1))
