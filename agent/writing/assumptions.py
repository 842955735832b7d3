"""The assumptions that drive an answer's cost and memory, as sentences in the user's language."""

from __future__ import annotations

import math
from typing import Any

from agent.writing.format import number, templates, token_count
from agent.writing.notes import overheads


def assumption_lines(
    spec: dict[str, Any],
    request_defaults: dict[str, Any],
    ranking: dict[str, Any],
    language: str,
    top: dict[str, Any] | None = None,
    checkpointing: bool | None = None,
) -> list[str]:
    """The assumptions that drive this answer's cost and memory, in the user's language (English list in the JSON)."""
    from tools.jobtime import (
        CHINCHILLA_TOKENS_PER_PARAM,
        DEFAULT_EXAMPLE_TOKENS,
        DEFAULT_EXAMPLES,
        DEFAULT_FINETUNE_EPOCHS,
    )
    from tools.memory import DEFAULTS

    t = templates(language)
    lines = []
    seq_len = spec.get("seq_len") or request_defaults["seq_len"]
    epochs = spec.get("epochs")
    if spec.get("dataset_tokens") or spec.get("dataset_examples"):
        lines.append(
            t["assumption_epochs"].format(epochs=number(epochs, language, 0 if float(epochs).is_integer() else 1))
            if epochs
            else t["assumption_epochs_default"].format(epochs=1)
        )
        if not spec.get("dataset_tokens"):
            lines.append(
                t["assumption_example_tokens"].format(tokens=number(min(DEFAULT_EXAMPLE_TOKENS, seq_len), language, 0))
            )
    elif spec.get("method") == "pretrain" and ranking.get("tokens"):
        lines.append(
            t["assumption_pretrain_dataset"].format(
                per_param=CHINCHILLA_TOKENS_PER_PARAM, tokens=token_count(ranking["tokens"], language)
            )
        )
    elif ranking.get("tokens"):
        lines.append(
            t["assumption_default_dataset"].format(
                examples=number(DEFAULT_EXAMPLES, language, 0),
                tokens=number(min(DEFAULT_EXAMPLE_TOKENS, seq_len), language, 0),
                epochs=number(epochs or DEFAULT_FINETUNE_EPOCHS, language, 0),
            )
        )
    billed = overheads(top, language)
    if billed:
        lines.append(billed)
    if spec.get("seq_len") is None:  # the default, or the examples' length where they are longer (example_sequence)
        derived = request_defaults["seq_len"] != DEFAULTS.seq_len
        lines.append(
            t["assumption_seq_len_examples" if derived else "assumption_seq_len"].format(
                seq_len=number(request_defaults["seq_len"], language, 0)
            )
        )
    if spec.get("micro_batch_size") is None:
        lines.append(t["assumption_micro_batch"].format(batch=request_defaults["micro_batch_size"]))
    if spec.get("gradient_checkpointing") is None:
        lines.append(t["assumption_checkpointing_off" if checkpointing is False else "assumption_checkpointing"])
    if (ranking.get("catalog") or {}).get("snapshot_date"):
        lines.append(t["assumption_prices"].format(date=ranking["catalog"]["snapshot_date"]))
    fx = ranking.get("fx")
    if fx:
        digits = max(4, 3 - math.floor(math.log10(fx["rate"]))) if fx["rate"] > 0 else 4
        lines.append(
            t["assumption_fx"].format(
                currency=fx["from_currency"], rate=number(fx["rate"], language, digits), date=fx["date"]
            )
        )
    return lines
