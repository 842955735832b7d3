"""Caps on the hardware a job may use, said by organisations more than by models: at most so many GPUs ("max 4 GPUs",
"al massimo 2 GPU", "maksimal 8 GPU", "4 GPUs tops") and one machine only ("no multi-node", "una sola macchina",
"jangan multi-node"). A cap is no count: the plan may use fewer GPUs, so "at most 4 GPUs" is no 4-GPU wish."""

from __future__ import annotations

from agent.parsing.rules.scan import Scan, alt, negated, rx, vocabulary, words


def read_caps(scan: Scan) -> None:
    """max_gpus from a cap word before or after a GPU count; max_nodes from a node count after a cap word, or 1 from
    a one-machine phrase."""
    units, nodes = alt(vocabulary()["gpu_units"]), alt(vocabulary()["node_units"])
    caps = alt(words("gpu_caps"))
    before = rx(r"(?<![\w])" + caps + r"\s+(\d{1,6})\s*(?:x\s*)?" + units + r"(?![\w])")
    after = rx(r"(?<![\w.,])(\d{1,6})\s*" + units + r"\s*,?\s*" + alt(words("gpu_caps_after")) + r"(?![\w])")
    for match in (*before.finditer(scan.text), *after.finditer(scan.text)):
        if not scan.is_claimed(match.start(1), match.end(1)) and not negated(scan, match.start(), 12):
            scan.set("max_gpus", int(match.group(1)))
            scan.claim(match.start(), match.end())
            break
    node_cap = rx(r"(?<![\w])" + caps + r"\s+(\d{1,4})\s*" + nodes + r"(?![\w])").search(scan.text)
    if node_cap and not scan.is_claimed(node_cap.start(1), node_cap.end(1)):
        scan.set("max_nodes", int(node_cap.group(1)))
        scan.claim(node_cap.start(), node_cap.end())
    one = rx(r"(?<![\w])" + alt(words("one_node")) + r"(?![\w])").search(scan.text)
    if one and not scan.is_claimed(one.start(), one.end()):
        scan.set("max_nodes", 1)
        scan.claim(one.start(), one.end())
