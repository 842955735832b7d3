"""Corrections read against the job a thread holds: a size named alone is the job's model family at that size ("the
7B, not the 13B" on Llama 2 13B is Llama 2 7B), and a bare number set against the job's current value ("4096, not
8192") changes the field that holds that value; a bare number after a what-if on one number field is that field;
an adapter word in a QLoRA job restates QLoRA.
"""

from __future__ import annotations

import re
from typing import Any

from agent.parsing.rules.scan import alt, vocabulary, words
from tools.models import lookup

NUMBER = r"(\d+(?:[.,]\d+)?)\s*(k)?"
PENDING_ORDER = 64.0
"""A bare number is the value a what-if proposed only within this factor of it: a wide bound ("10" epochs after a
what-if of 1, 45,000 examples after one of 1,000) that still keeps "8192" from being the one card of a fit answer."""
NUMBER_FIELDS = (
    "seq_len",
    "epochs",
    "num_gpus",
    "micro_batch_size",
    "dataset_examples",
    "dataset_tokens",
    "deadline_hours",
)
"""Job fields a bare number may correct, in the order a tie is settled."""
FRACTIONAL_FIELDS = ("epochs", "deadline_hours")
"""Number fields that keep a fraction ("1.5 epochs", "36.5 hours"); the others are whole counts."""


def as_field_value(field: str, value: float) -> float | int:
    """A number read for `field` as that field's value: kept for epochs and hours, truncated to a count otherwise."""
    return value if field in FRACTIONAL_FIELDS else int(value)


SEQUENCE_SIZED = 32_768
"""Token counts up to this are sequence lengths people set, not a data set, in a job whose data is already sized."""
DATA_OVER_SEQUENCE = 100
"""A job's data set holds at least this many of the token count for that count to be read as its sequence."""
LORA_WORD = re.compile(r"(?<![\w-])lora(?![\w])", re.IGNORECASE)
"""LoRA named as such (not QLoRA, not a generic adapter word)."""


def sibling_model(model: str | None, size_b: float) -> str | None:
    """The registry model of `model`'s family at `size_b` billion parameters (its id with the size changed), if any."""
    if not model or not re.search(r"\d+(?:\.\d+)?b", model):
        return None
    arch = lookup(re.sub(r"\d+(?:\.\d+)?b", f"{size_b:g}b", model, count=1))
    return arch.id if arch is not None and not arch.approximate and arch.id != model else None


SIZE_WORDS = ("small", "base", "medium", "large", "xl")
"""Words that name a model's size within a family whose ids say it so (gpt2-medium, bert-large)."""
SIZE_SAID = (
    r"(?<![\w-])(?:the|al|il|lo|to|a|yang|ke|versi(?:one)?|version|variant[ei]?)\s+{word}"
    r"(?=\s*(?:$|[.,;!?]|(?:one|model|modello|version|versione|variant\w*|then|instead|invece|aja|saja)\b))"
)
"""A size word said as the model's ("passiamo al large", "the xl one"), not of something else ("a large dataset")."""


def _sibling_by_word(text: str, model: str | None) -> dict[str, Any]:
    """{model: the job's family at the size a word names} ("ok, passiamo al large" on GPT-2: GPT-2 Large), when the
    family names its sizes that way and the message says one size word; {} otherwise."""
    if not model:
        return {}
    family = re.sub(r"-(?:" + "|".join(SIZE_WORDS) + r")$", "", model)
    said = [w for w in SIZE_WORDS if re.search(SIZE_SAID.format(word=w), text, re.IGNORECASE)]
    if len(said) != 1:
        return {}
    for candidate in (f"{family}-{said[0]}", family if said[0] in ("small", "base") else None):
        arch = lookup(candidate) if candidate else None
        if arch is not None and not arch.approximate and arch.id == candidate and arch.id != model:
            return {"model": arch.id}
    return {}


def _value(number: str, thousands: str | None) -> float:
    """A written number ("4096", "2,5", "20k", "2,048" or "2.048" with a thousands separator) as a float."""
    if re.fullmatch(r"\d{1,3}(?:[.,]\d{3})+", number):  # a group of three after the mark is a thousands group
        return float(re.sub(r"[.,]", "", number)) * (1000 if thousands else 1)
    return float(number.replace(",", ".")) * (1000 if thousands else 1)


def corrected_number(text: str, spec: dict[str, Any]) -> dict[str, Any]:
    """{field: new value} when the text sets a number against the job's current value of one field ("4096, not
    8192", "2 non 3", "4, bukan 8"); {} otherwise."""
    pattern = (
        NUMBER + r"\s*,?\s*(?:" + alt(vocabulary()["correction_negators"]) + r")\s+(?:the\s+|il\s+|la\s+)?" + NUMBER
    )
    for match in re.finditer(r"(?<![\w.])" + pattern + r"(?![\w/]|[.,]\d)", text, re.IGNORECASE):  # "... 8192."
        new, old = _value(match.group(1), match.group(2)), _value(match.group(3), match.group(4))
        budget = spec.get("budget") or {}
        if budget.get("amount") == old:
            return {"budget": {**budget, "amount": new}}
        for field in NUMBER_FIELDS:
            current = spec.get(field)
            if current is not None and float(current) == old:
                return {field: as_field_value(field, new)}
    return {}


def pending_number(text: str, pending: dict[str, Any] | None, order: float = PENDING_ORDER) -> dict[str, Any]:
    """{field: value} when the message is one bare number and the what-if waiting to be adopted set one number field
    ("e con seq 8192?" then "ok, pakai 4096 aja": 4096 is the sequence length), or several of which one has that
    value ("oke ambil yang 1024" after a what-if that also carried the one card of a fit answer: only the number),
    the number within `order` of that field's value;
    {} otherwise."""
    fields = [name for name in pending or {} if name in NUMBER_FIELDS]
    numbers = re.findall(r"(?<![\w.,/])" + NUMBER + r"(?![\w/]|[.,]\d)", text, re.IGNORECASE)  # "4096." ends it
    if not fields or len(numbers) != 1:
        return {}
    value = _value(*numbers[0])
    named = [name for name in fields if (pending or {})[name] == value] if len(fields) > 1 else fields
    if value <= 0 or len(named) != 1 or not _same_order(value, (pending or {})[named[0]], order):
        return {}
    field = named[0]
    return {field: as_field_value(field, value)}


SAME_ORDER = 8.0
"""A bare number revises the value the last change set only within this factor of it ("2" after 3 epochs, not
"45000" after a 4096-token sequence)."""


def _same_order(value: float, before: Any, order: float = SAME_ORDER) -> bool:
    """Whether `value` is within `order` of the number `before`."""
    return isinstance(before, int | float) and before > 0 and 1 / order <= value / float(before) <= order


def last_change(spec: dict[str, Any], replaced: dict[str, Any] | None) -> dict[str, Any]:
    """{field: value} of the one number field the thread's last change set (the job now against the plan it
    replaced); {} when it set none or several."""
    if not replaced:
        return {}
    changed = {
        name: spec[name]
        for name in NUMBER_FIELDS
        if spec.get(name) is not None and spec.get(name) != replaced.get(name)
    }
    return changed if len(changed) == 1 else {}


def sized_like(text: str, spec: dict[str, Any]) -> dict[str, Any]:
    """{field: value} when the message is a setting verb and one bare number ("passa a 4096", "make it 4096") and
    exactly one number field of the job is of that order (a 2,048-token sequence, not 100M tokens or 1 epoch); {}
    otherwise."""
    verb = r"(?:" + alt(words("set_verbs")) + r")\s+"
    match = re.fullmatch(
        r"\W*(?:\w+\W+){0,2}?" + verb + r"(?:to\s+|a\s+|ke\s+)?" + NUMBER + r"\W*(?:\w+\W*)?", text.strip(), re.I
    )
    if match is None:
        return {}
    value = _value(match.group(1), match.group(2))
    near = [name for name in NUMBER_FIELDS if value > 0 and _same_order(value, spec.get(name))]
    if len(near) != 1:
        return {}
    return {near[0]: as_field_value(near[0], value)}


def _sequence_not_data(found: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """A token count too small to be a data set, said in a thread whose job already sizes its data ("switch to 2048
    tokens" on 20k examples): the sequence length, not a data set of 2,048 tokens."""
    tokens = found.get("dataset_tokens")
    if tokens is None or found.keys() & {"seq_len", "dataset_examples"} or tokens > SEQUENCE_SIZED:
        return found
    data = spec.get("dataset_tokens")
    if not (spec.get("dataset_examples") or data) or (data and data < DATA_OVER_SEQUENCE * tokens):
        return found
    return {**{k: v for k, v in found.items() if k != "dataset_tokens"}, "seq_len": int(tokens)}


def against_the_job(
    text: str,
    parsed: dict[str, Any],
    spec: dict[str, Any],
    pending: dict[str, Any] | None = None,
    example_tokens: int | None = None,
    replaced: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The fields a message states, read against the job the thread holds (`spec`; nothing changes without one): a
    size named alone becomes the job's model family at that size, a number set against a current value becomes
    that field, a token count too small for a data set is the sequence, a bare number after a what-if on one number
    field is that field (`pending`), else the one number field the last change set (`replaced`: the plan that change
    replaced), and one example's length stated alone (`example_tokens`) sizes the job's examples."""
    if not spec:
        return parsed
    found = dict(parsed)
    examples = found.get("dataset_examples") or spec.get("dataset_examples")
    tokens = found.get("dataset_tokens") or spec.get("dataset_tokens")
    if example_tokens and examples and "dataset_tokens" not in found:  # "the examples are ~8k tokens each"
        found["dataset_tokens"] = int(examples) * int(example_tokens)
    elif example_tokens and tokens and not examples:  # 20M tokens of ~8k-token examples: 2,500 of them
        found["dataset_examples"] = max(1, round(int(tokens) / int(example_tokens)))
    if found.get("method") == "lora" and spec.get("method") == "qlora" and not LORA_WORD.search(text):
        del found["method"]  # "adapters", "PEFT": QLoRA trains adapters too; only "LoRA" itself leaves QLoRA
    if "params_b" in found and "model" not in found:
        sibling = sibling_model(spec.get("model"), float(found["params_b"]))
        if sibling is not None:
            del found["params_b"]
            found["model"] = sibling
    if "model" not in found and "params_b" not in found:
        found.update(_sibling_by_word(text, spec.get("model")))
    found.update(corrected_number(text, spec))
    found.update(budget_in_currency(text, spec, found))
    found = _sequence_not_data(found, spec)
    found.update(_added_places(text, spec, found))
    if found.get("num_gpus") is not None and found["num_gpus"] == spec.get("num_gpus"):
        found.update(other_count(text, int(found["num_gpus"])))
    return (
        found
        or pending_number(text, pending)
        or pending_number(text, last_change(spec, replaced), SAME_ORDER)  # "3 epochs", then "no, 2 is enough"
        or sized_like(text, spec)
    )


def budget_in_currency(text: str, spec: dict[str, Any], found: dict[str, Any]) -> dict[str, Any]:
    """{budget: the job's amount in another currency} when the message says the budget is in that currency and names
    no other amount ("that budget is in euros, not dollars", "intendevo euro, non dollari", "300 itu euro bukan
    dolar", "same amount but in rupiah"): the budget named, another currency negated, or the same amount asked for;
    {} otherwise (a question about the total in a currency names neither)."""
    budget = spec.get("budget")
    if not budget or "budget" in found or set(re.findall(r"\d+(?:[.,]\d+)?", text)) - {f"{budget['amount']:g}"}:
        return {}
    named = _currencies_in(text)
    if not named or named[0][1] == budget["currency"]:
        return {}
    lex = vocabulary()
    negated = any(
        re.search(r"(?<![\w])(?:" + alt(lex["correction_negators"]) + r")\s+" + re.escape(word), text, re.IGNORECASE)
        for word, code in named[1:]
        if code != named[0][1]
    )
    said = re.search(r"(?<![\w])(?:" + alt(words("budget_restated")) + r")(?![\w])", text, re.IGNORECASE)
    if not (negated or said):
        return {}
    return {"budget": {"amount": budget["amount"], "currency": named[0][1]}}


def _currencies_in(text: str) -> list[tuple[str, str]]:
    """(word as written, code) of every currency the text names, in order."""
    found: list[tuple[int, str, str]] = []
    for code, forms in vocabulary()["currencies"].items():
        pattern = r"(?<![\w$€])(?:" + alt(forms["after"] + forms["before"]) + r")(?![\w])"
        found += [(m.start(), m.group(0), code) for m in re.finditer(pattern, text, re.IGNORECASE)]
    return [(written, code) for _start, written, code in sorted(found)]


GPU_COUNT = re.compile(r"(?<![\w.])(\d{1,4})\s*(?:[-×x]\s*)?(?:gpus?|schede|kartu|cards?)(?![\w])", re.IGNORECASE)


def other_count(text: str, current: int) -> dict[str, Any]:
    """{num_gpus: N} when the message names the job's GPU count and one other ("compare the 8-GPU and 16-GPU plans"
    on an 8-GPU job: 16 is what it asks about); {} otherwise."""
    others = {int(n) for n in GPU_COUNT.findall(text)} - {current}
    return {"num_gpus": others.pop()} if len(others) == 1 else {}


def _added_places(text: str, spec: dict[str, Any], found: dict[str, Any]) -> dict[str, Any]:
    """Regions or providers said as additions to the job's ("if we also allowed the UK", "anche la Germania",
    "Singapura juga"): the job's list with them; {} when the message adds none."""
    if not rx_also().search(text):
        return {}
    return {
        name: list(dict.fromkeys([*spec[name], *found[name]]))
        for name in ("regions", "providers")
        if found.get(name) and spec.get(name) and not set(found[name]) <= set(spec[name])
    }


def rx_also() -> re.Pattern[str]:
    """The words that add to a list ("also", "anche", "juga")."""
    return re.compile(r"(?<![\w])" + alt(words("also_words")) + r"(?![\w])", re.IGNORECASE)
