"""Model registry: architecture shapes of the models people train (tools/data/models.json), exact parameter
counts, forgiving name lookup, and a generic decoder for a size with no name."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from rapidfuzz import fuzz, process

from tools.models.arch import Mlp, ModelArch, Norm
from tools.models.hf_config import from_hf_config, load_hf_config

__all__ = [
    "Mlp",
    "ModelArch",
    "Norm",
    "all_models",
    "from_hf_config",
    "fuzzy_lookup",
    "generic_decoder",
    "load_hf_config",
    "lookup",
    "name_index",
    "normalise_name",
    "resolve",
    "size_from_name",
]

REGISTRY_PATH = Path(__file__).parents[1] / "data" / "models.json"
LLAMA2_V = 32_000

_NOISE_WORDS = (
    "instruct",
    "chat",
    "base",
    "hf",
    "it",
    "pt",
    "meta",
    "v0.1",
    "v0.2",
    "v0.3",
    "v01",
    "v1",
    "fp16",
    "bf16",
    "uncased",
    "cased",
)
"""Released-variant and packaging words that do not change the architecture ('-Instruct', '-Base', '-it', '-hf')."""
FUZZY_CUTOFF = 85.0
"""Smallest rapidfuzz ratio (0-100) between normalised names for a misspelt name to count as a registry model."""


def normalise_name(name: str) -> str:
    """Reduce a model name to a comparison key: no org prefix, no 'instruct'/'chat'/'hf', no separators."""
    text = name.strip().lower()
    text = text.rsplit("/", 1)[-1]
    text = re.sub(r"[\s_:]+", "-", text)
    parts = [p for p in text.split("-") if p]
    while parts and parts[0] == "meta":
        parts = parts[1:]
    kept = [p for p in parts if p not in _NOISE_WORDS]
    return re.sub(r"[^a-z0-9.]", "", "".join(kept or parts))


def _load_registry() -> tuple[ModelArch, ...]:
    """Read the registry from tools/data/models.json (one entry per model, config.json numbers and its HF repo)."""
    document = json.loads(REGISTRY_PATH.read_text(encoding="utf-8"))
    return tuple(ModelArch(**(entry | {"aliases": tuple(entry.get("aliases", ()))})) for entry in document["models"])


REGISTRY = _load_registry()


def _build_index() -> dict[str, ModelArch]:
    """Map every normalised id and alias to its registry entry."""
    index: dict[str, ModelArch] = {}
    for arch in REGISTRY:
        for key in (arch.id, arch.name, *arch.aliases):
            index.setdefault(normalise_name(key), arch)
    return index


_INDEX = _build_index()


def all_models() -> tuple[ModelArch, ...]:
    """Every model in the registry."""
    return REGISTRY


def name_index() -> dict[str, ModelArch]:
    """Normalised name key -> registry entry, for parsers that scan free text."""
    return dict(_INDEX)


def lookup(name: str) -> ModelArch | None:
    """Find a registry model by a forgiving name ('llama3 8b', 'meta-llama/Meta-Llama-3-8B'); None if unknown."""
    key = normalise_name(name)
    if not key:
        return None
    if key in _INDEX:
        return _INDEX[key]
    without_version_dot = key.replace(".0", "")
    return _INDEX.get(without_version_dot)


def _digit_groups(key: str) -> list[str]:
    """The digit groups of a normalised name: a misspelling may change letters, never the version or the size."""
    return re.findall(r"\d+", key)


def fuzzy_lookup(name: str) -> ModelArch | None:
    """The registry model a misspelt name most likely means ('Mistrall 7B' -> mistral-7b): the closest name
    (rapidfuzz ratio >= FUZZY_CUTOFF) with the same digit groups; None when none is that close ('Qwen4-9B')."""
    key = normalise_name(name)
    if len(key) < 4:
        return None
    digits = _digit_groups(key)
    candidates = [k for k in _INDEX if _digit_groups(k) == digits]
    best = process.extractOne(key, candidates, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF)
    return _INDEX[best[0]] if best else None


def resolve(name: str) -> ModelArch:
    """Like `lookup`, but raise ValueError naming close matches when the model is unknown."""
    arch = lookup(name)
    if arch is not None:
        return arch
    close = process.extract(normalise_name(name), list(_INDEX), scorer=fuzz.ratio, limit=3, score_cutoff=60)
    suggestions = sorted({_INDEX[c[0]].id for c in close})
    hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else "; give --params-b or --config instead"
    raise ValueError(f"unknown model '{name}'{hint}")


_SIZE_IN_NAME = re.compile(r"(?<![a-z0-9.])(?:(\d+)x)?(\d+(?:\.\d+)?)\s*([bm])(?![a-z0-9])", re.IGNORECASE)


def size_from_name(name: str) -> float | None:
    """Billions of parameters written in a model name ('Qwen4-9B' -> 9, 'foo-8x7b' -> 56, 'bar-350m' -> 0.35;
    an active-parameter tag such as 'A3B' is skipped); None when the name states no size."""
    for match in _SIZE_IN_NAME.finditer(name.rsplit("/", 1)[-1]):
        experts, size, unit = match.groups()
        value = float(size) * (int(experts) if experts else 1) / (1000 if unit.lower() == "m" else 1)
        if value > 0:
            return value
    return None


GENERIC_VOCAB = LLAMA2_V
GENERIC_HIDDEN_PER_LAYER = 128
"""Llama-family aspect ratio: hidden width is about 128 x the number of layers (7B: 4096/32, 13B: 5120/40)."""


def _generic_params(hidden: float) -> float:
    """Parameters of the generic decoder with a given (real-valued) hidden width."""
    layers = hidden / GENERIC_HIDDEN_PER_LAYER
    per_layer = 2.5 * hidden**2 + 3 * hidden * (8 * hidden / 3) + 2 * hidden  # GQA 4:1 attention, SwiGLU 8h/3, norms
    return 2 * GENERIC_VOCAB * hidden + layers * per_layer + hidden


def generic_decoder(params_b: float) -> ModelArch:
    """A standard Llama-style decoder scaled smoothly to exactly `params_b` billion parameters, flagged approximate.

    Dimensions are real numbers, not rounded to layer or head counts, so that every memory term grows with the
    size: a bigger model never gets a smaller estimate.
    """
    if not (isinstance(params_b, (int, float)) and math.isfinite(params_b) and params_b > 0):
        raise ValueError(f"model size must be a positive number of billions, got {params_b}")
    target = params_b * 1e9
    low, high = 1e-3, 1e6
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if _generic_params(mid) < target else (low, mid)
    hidden = (low + high) / 2
    heads = hidden / 128
    return ModelArch(
        id=f"generic-{params_b:g}b",
        name=f"generic {params_b:g}B decoder",
        family="generic",
        layers=hidden / GENERIC_HIDDEN_PER_LAYER,  # type: ignore[arg-type]
        hidden=hidden,  # type: ignore[arg-type]
        heads=heads,  # type: ignore[arg-type]
        kv_heads=heads / 4,  # type: ignore[arg-type]
        head_dim=128,
        intermediate=8 * hidden / 3,  # type: ignore[arg-type]
        vocab=GENERIC_VOCAB,
        tied_embeddings=False,
        max_context=8192,
        approximate=True,
    )
