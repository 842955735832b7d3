"""Model names: a registry id when the name is known, else the size the name states."""

from __future__ import annotations

import re

from agent.parse_rules.scan import Scan, alt, rx
from tools.models import lookup

MODEL_FAMILIES = (
    "llama", "codellama", "mistral", "mixtral", "qwen", "gemma", "phi", "gpt-?2", "gpt-?j", "gpt-?neox", "bert", "roberta",
    "falcon", "deepseek", "yi", "olmo", "pythia", "bloom", "opt", "starcoder", "vicuna", "stablelm", "smollm", "granite",
    "internlm", "baichuan", "chatglm", "nemotron", "jamba", "dbrx", "t5", "flan-t5", "command-r", "zephyr", "tinyllama",
    "orca", "solar", "sailor", "sahabat-?ai", "komodo", "minerva", "cerbero", "velvet", "llamantino", "aya", "bloomz",
)
"""Words that start a model name; registry models resolve to an id, others still give their size."""

# --- model -------------------------------------------------------------------------------------------------------

_NAME_PART = r"(?:[\s_/-]*(?:v?\d+(?:\.\d+)*[a-z]?|\d+x\d+b|\d+(?:\.\d+)?[bm]|mini|small|medium|large|xl|base|instruct|chat|it|hf|coder|code|math)(?![\w.]))"


def read_model(scan: Scan) -> None:
    """Model names ("Llama 3 70B", "Qwen2.5-7B-Instruct", "Mixtral 8x7B"): registry id, else the size they state."""
    families = alt(list(MODEL_FAMILIES))
    pattern = rx(r"(?<![\w-])(?:[\w.-]+/)?(?:meta-)?" + families + r"[\w.]*(?:" + _NAME_PART + r"){0,4}")
    for match in pattern.finditer(scan.text):
        pieces = list(re.finditer(r"[\w.]+", match.group(0).replace("/", " ").replace("-", " ").replace("_", " ")))
        words = [piece.group(0) for piece in pieces]
        span_end = match.end()
        arch = None
        for k in range(len(words), 0, -1):
            arch = lookup(" ".join(words[:k]))
            if arch is not None:
                span_end = match.start() + pieces[k - 1].end()  # "Mistral 7B 3 epoch": the "3" is not the name's
                break
        size = re.search(r"(?<![\w.])(\d+(?:\.\d+)?)([bm])(?![\w])", match.group(0))
        if arch is not None and (not arch.approximate):
            stated = float(size.group(1)) * (1 if size.group(2) == "b" else 0.001) if size else None
            if stated is None and re.search(r"\d+(?:\.\d+)?\s*[bm]?$", match.group(0)) is None and \
                    rx(r"[\s-]*\d+(?:\.\d+)?\s*b(?![\w])").match(scan.text, span_end):
                continue  # "Llama 3 e 70B": let the size reader see it
            scan.set("model", arch.id)
            scan.claim(match.start(), span_end)
            return
        if size:
            scan.set("params_b", float(size.group(1)) * (1 if size.group(2) == "b" else 0.001))
            scan.claim(match.start(), span_end)
            return
        scan.claim(match.start(), span_end)


def unknown_model_name(text: str) -> str | None:
    """The first model name in prepared text that the registry does not know but that states its size ("qwen4-9b",
    "sailor 7b"): the estimate then uses a generic decoder of that size, and the answer says so."""
    pattern = rx(r"(?<![\w-])(?:[\w.-]+/)?(?:meta-)?" + alt(list(MODEL_FAMILIES)) + r"[\w.]*(?:" + _NAME_PART + r"){0,4}")
    for match in pattern.finditer(text):
        name = match.group(0).strip(" -_/")
        words = re.findall(r"[\w.]+", name.replace("/", " ").replace("-", " ").replace("_", " "))
        known = any((arch := lookup(" ".join(words[:k]))) is not None and not arch.approximate
                    for k in range(len(words), 0, -1))
        if not known and re.search(r"(?<![\w.])\d+(?:\.\d+)?[bm](?![\w])", name):
            return name
    return None
