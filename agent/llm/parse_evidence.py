"""Evidence in the user's words for the fields an LLM parsed: a field is kept only when the message supports it.

Numbers must be in the message (as digits or words, allowing the magnitudes and units people use: "20M", "2 juta",
"3 days" = 72 h, "8k" context); other fields need a word that names them (agent/llm/parse_llm_evidence.json); model,
GPU, provider and region names must be written in the message. A provider or GPU the user did write but that is
not known yields a clarifying question instead of a guess (or of an empty search).
"""

from __future__ import annotations

import itertools
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from agent.claims import extract
from agent.language import find_quantities, words_to_digits

EVIDENCE_FILE = Path(__file__).with_name("parse_llm_evidence.json")
SCALES: dict[str, tuple[float, ...]] = {
    "num_gpus": (1.0,),
    "micro_batch_size": (1.0,),
    "epochs": (1.0,),
    "seq_len": (1.0, 1000.0, 1024.0),
    "dataset_tokens": (1.0, 1e3, 1e6, 1e9, 1e12),
    "dataset_examples": (1.0, 1e3, 1e6),
    "params_b": (1.0, 1e-3, 1e-6, 1e-9),
    "budget": (1.0, 1e3, 1e6, 1e9),
    "deadline_hours": (1.0, 24.0, 168.0, 720.0, 1 / 60),
}
"""How a number the user wrote may become a field's value (magnitudes, days and weeks to hours...)."""
SHOWN_CHOICES = 12
FIELD_UNITS: dict[str, frozenset[str | None]] = {
    "budget": frozenset({None, "money"}),
    "seq_len": frozenset({None, "tokens"}),
    "dataset_tokens": frozenset({None, "tokens"}),
    "dataset_examples": frozenset({None}),
    "num_gpus": frozenset({None, "gpus"}),
    "micro_batch_size": frozenset({None}),
    "epochs": frozenset({None}),
    "deadline_hours": frozenset({None, "hours", "days", "minutes"}),
}
"""The units a number may carry to support a field: '2 GPU' is no budget, the 8 of '8B' no sequence length."""
MAX_BARE_SCALE = 1000.0
"""The number of a quantity written with a bigger magnitude ('8' of '8B', '20' of '20M') is not a number of its own."""
UNIT_LOOKAHEAD = 16
"""Characters after a number where its unit is read ('2 GPU', '50 euro', '20M token')."""


@cache
def _words() -> dict[str, Any]:
    """The field-naming words (agent/llm/parse_llm_evidence.json)."""
    return json.loads(EVIDENCE_FILE.read_text(encoding="utf-8"))


def _squash(text: str) -> str:
    """Lower case, letters and digits only."""
    return re.sub(r"[^0-9a-z]", "", text.lower())


def _gpu_of(span: str) -> str | None:
    """The GPU a word or two names ('H100s', '4090,' and 'RTX 4090' too), or None."""
    from tools.gpus import canonical_gpu_name

    span = span.strip(",.;:!?()")
    return canonical_gpu_name(span) or (canonical_gpu_name(span[:-1]) if span.lower().endswith("s") else None)


class Evidence:
    """The user's message, read once, and the tests a parsed field must pass."""

    def __init__(self, text: str, language: str) -> None:
        self.text, self.language = text, language
        self.lower = text.lower()
        self.squashed = _squash(text)
        joined = re.findall(r"[^\W_]+(?:[-.][^\W_]+)*|[$€×%]", self.lower)
        self.tokens = joined + [part for token in joined if "-" in token for part in token.split("-")]
        digits = words_to_digits(text)
        self.numbers: list[tuple[float, str | None]] = [(n.value, n.kind) for n in extract(text, language).numbers]
        for q in find_quantities(digits, language):
            after = extract(digits[q.start : q.end + UNIT_LOOKAHEAD], language).numbers
            kind = after[0].kind if after else None
            self.numbers += [(q.value, kind)] + ([(q.number, kind)] if q.scale <= MAX_BARE_SCALE else [])

    def names(self, words: list[str]) -> bool:
        """Whether the message holds one of the words (a trailing '*' matches a prefix, spaces match phrases)."""
        for word in words:
            if " " in word:
                if word in self.lower:
                    return True
            elif word.endswith("*"):
                if any(token.startswith(word[:-1]) for token in self.tokens):
                    return True
            elif word in self.tokens:
                return True
        return False

    def number(self, value: float, field: str) -> bool:
        """Whether a number the user wrote, at one of the field's magnitudes and in a unit the field takes, is
        `value` (within 1 %)."""
        allowed = FIELD_UNITS.get(field)
        return any(
            abs(n * scale - value) <= 0.01 * max(abs(value), 1e-9)
            for n, kind in self.numbers
            if allowed is None or kind in allowed
            for scale in SCALES.get(field, (1.0,))
        )

    def model(self, model_id: str) -> bool:
        """Whether the message names the model: its family and every digit group of its id."""
        family = re.match(r"[a-z]+", model_id.lower())
        digits = re.findall(r"\d+", model_id)
        return bool(family) and family.group() in self.squashed and all(d in self.squashed for d in digits)

    def region(self, region: str) -> bool:
        """Whether the message names the region: as written, or as any it/id/en name of the same place
        (tools/data/regions.json: 'Eropa' supports 'europe', 'Jepang' supports 'japan')."""
        from tools.catalog import place_names

        low = region.strip().lower()
        if low and low in self.lower:
            return True
        key = place_names().get(low)
        return key is not None and any(
            target == key and re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", self.lower)
            for name, target in place_names().items()
        )

    def gpu(self, canonical: str) -> bool:
        """Whether some word or pair of words of the message is this GPU."""

        words = self.text.split()
        spans = words + [" ".join(pair) for pair in itertools.pairwise(words)]
        return any(_gpu_of(span) == canonical for span in spans if re.search(r"\d", span))

    def filter(self, data: dict[str, Any]) -> tuple[dict[str, Any], list[str], list[str], str | None]:
        """(kept fields, dropped field names, unknown providers the user named, unknown GPU the user named)."""
        kept, dropped = {}, []
        unknown_providers: list[str] = []
        unknown_gpu: str | None = None
        for name, value in data.items():
            if name == "providers":
                value, unknown_providers = self._providers(value)
            elif name == "gpu":
                value, unknown_gpu = self._gpu_value(str(value))
            elif name == "regions":
                value = [region for region in value if self.region(str(region))] or None
            elif name == "model":
                value = self._model_value(str(value))
            elif not self.supports(name, value):
                value = None
            if value is None:
                dropped.append(name)
            else:
                kept[name] = value
        return kept, dropped, unknown_providers, unknown_gpu

    def supports(self, name: str, value: Any) -> bool:
        """Whether the message supports one scalar field's value."""
        words = _words()
        if name == "method":
            return self.names(words["method"].get(str(value), []))
        if name == "budget":
            return self.number(float(value["amount"]), "budget") and self.names(words["budget"])
        if name == "params_b":
            return self.number(float(value), "params_b")
        if isinstance(value, bool):
            return self.names(words.get(name, []))
        if isinstance(value, (int, float)):
            return self.number(float(value), name) and (
                name not in words or self.names(words[name]) or (name == "num_gpus" and self._names_a_gpu())
            )
        return self.names(words.get(name, [])) or str(value).lower() in self.lower

    def _names_a_gpu(self) -> bool:
        """Whether the message names any GPU (so '8 H100' supports 8 GPUs)."""

        return any(_gpu_of(word) for word in self.tokens if re.search(r"\d", word))

    def _model_value(self, raw: str) -> str | None:
        """The registry id of the model the LLM read, when the message names it."""
        from tools.models import lookup

        arch = lookup(raw)
        return arch.id if arch is not None and not arch.approximate and self.model(arch.id) else None

    def _gpu_value(self, raw: str) -> tuple[str | None, str | None]:
        """(canonical GPU the message names, or None; the raw name when the user wrote an unknown GPU)."""
        from tools.gpus import canonical_gpu_name

        canonical = canonical_gpu_name(raw)
        if canonical is not None:
            return (canonical if self.gpu(canonical) else None), None
        return None, (raw if _squash(raw) and _squash(raw) in self.squashed else None)

    def _providers(self, values: list[str]) -> tuple[list[str] | None, list[str]]:
        """(known providers the message names, unknown provider names the message holds)."""
        from tools.providers import all_providers, normalise_provider, provider_aliases

        known = {p.id for p in all_providers()}
        kept, unknown = [], []
        for raw in values:
            provider = normalise_provider(raw)
            spellings = {provider, raw.lower()} | {
                alias for alias, target in provider_aliases().items() if target == provider
            }
            written = any(_squash(s) and (s in self.tokens or (" " in s and s in self.lower)) for s in spellings)
            if provider in known and written:
                kept.append(provider)
            elif provider not in known and _squash(raw) in {_squash(t) for t in self.tokens}:
                unknown.append(raw)
        return kept or None, unknown

    def question(self, providers: list[str], gpu: str | None) -> str | None:
        """The clarifying question about unknown names, in the message's language; None when all are known."""
        from agent.llm.phrasing import note
        from tools.gpus import gpu_names
        from tools.providers import all_providers

        if providers:
            known = ", ".join(p.id for p in all_providers())
            return note("parse_clarify_provider", self.language).format(names=", ".join(providers), known=known)
        if gpu:
            return note("parse_clarify_gpu", self.language).format(
                name=gpu, known=", ".join(gpu_names()[:SHOWN_CHOICES])
            )
        return None
