"""One register per language: every Italian text the product writes uses the informal "tu", never "Lei".

The formal forms and the verbs to look for live in tests/italian_register.json. Scanned: the answer templates and
notes (prompts/it/*), the widget's and the compare page's strings (web/static/i18n.json, "it"), the Slack strings
(prompts/it/slack.json), the exported task's comments (prompts/it/skypilot.json) and the knowledge base's display
rewrites (kb/data/display_rewrites.json, "it") and the FAQ entries as shown: the articles are published text
(tests/test_kb.py compares them with their sources) and address the reader as "Lei"; their formal phrases are shown
informal through display rewrites, so the shown entries are scanned too."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from kb.entries import entries

ROOT = Path(__file__).resolve().parents[1]
RULES = json.loads((Path(__file__).with_name("italian_register.json")).read_text("utf-8"))
CLITICS = ("lo", "la", "li", "le", "ne", "ci", "gli", "si", "mi")


def strings(node: object, where: str) -> Iterator[tuple[str, str]]:
    """Every string inside a JSON value, with its dotted key."""
    if isinstance(node, str):
        yield where, node
    elif isinstance(node, dict):
        for key, value in node.items():
            if not str(key).startswith("_"):
                yield from strings(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from strings(value, f"{where}[{i}]")


def italian_texts() -> Iterator[tuple[str, str]]:
    """(where, text) for every Italian text the product writes."""
    for path in sorted((ROOT / "prompts" / "it").glob("*.*")):  # templates, FAQ texts, Slack strings (not words/)
        name = path.relative_to(ROOT).as_posix()
        if path.suffix == ".json":
            yield from strings(json.loads(path.read_text("utf-8")), name)
        else:
            yield name, path.read_text("utf-8")
    yield from strings(json.loads((ROOT / "web/static/i18n.json").read_text("utf-8"))["it"], "web/static/i18n.json:it")
    rewrites = json.loads((ROOT / "kb/data/display_rewrites.json").read_text("utf-8"))["it"]
    yield from strings([shown for _, shown in rewrites], "kb/data/display_rewrites.json:it")
    for item in entries("it"):  # the FAQ entries as the product shows them (published text, display rewrites)
        yield f"kb:{item.id}", f"{item.title}\n{item.text}"


def sentences(text: str) -> list[str]:
    """Sentences and bullets (a new one after . ! ? : ; a line break or a bullet dash), placeholders blanked."""
    text = re.sub(r"\{[^{}]*\}", "X", text)
    return [s.strip() for s in re.split(r"[.!?:;\n]+|\s[-–•]\s|^[-–•]\s", text) if s.strip()]


def words(sentence: str) -> list[str]:
    """The sentence's words (apostrophes split: "l'offerta" -> "l", "offerta")."""
    return re.findall(r"[^\W\d_]+", sentence)


def _subjectless(before: list[str]) -> bool:
    """True when the verb has no subject of its own: only clitics and "non" before it, or those after a word of
    'subjectless_before' ("se", "e", "ma"…); an impersonal "si" is a subject of sorts."""
    rest = list(before)
    skipped = []
    while rest and rest[-1].lower() in (*CLITICS, "non"):
        skipped.append(rest.pop().lower())
    if "si" in skipped:
        return False
    return not rest or rest[-1] in RULES["subjectless_before"] or rest[-1].lower() in RULES["subjectless_before"]


def formal_forms(text: str) -> list[str]:
    """The formal-register forms in `text` (empty when it speaks as "tu" or addresses nobody)."""
    found = []
    for sentence in sentences(text):
        ws = words(sentence)
        joined = " " + " ".join(ws) + " "
        found += [p for p in RULES["courtesy"] if f" {p} " in joined]
        found += [w for w in ws if w.lower() in RULES["imperatives"]]
        if ws and ws[0] in RULES["imperatives_at_start"]:
            found.append(ws[0])
        found += [
            w
            for before, w in itertools.pairwise(ws)
            if before.lower() in RULES["connectives"] and w.capitalize() in RULES["imperatives_at_start"]
        ]
        for i, w in enumerate(ws):
            if w.lower() in RULES["modals"] and _subjectless(ws[:i]):
                found.append(w)
            if w.lower() in RULES["after_se"]:
                rest = ws[:i]
                while rest and rest[-1].lower() in CLITICS:
                    rest.pop()
                if rest and rest[-1].lower() == "se":
                    found.append("se … " + w)
    return found


@pytest.mark.parametrize(
    "text, formal",
    [
        ("Se le cambia, rifaccia la stima.", True),
        ("Il suo dataset.", True),
        ("Può usare le spot.", True),
        ("Le consigliamo una L4.", True),
        ("Usi le spot se il job salva i checkpoint.", True),
        ("Se vuole, scelga un'altra regione.", True),
        ("Lei non ha indicato il budget.", True),
        ("Se le cambi, rifai la stima.", False),
        ("Il tuo dataset.", False),
        ("Puoi usare le spot.", False),
        ("Nessuna offerta può eseguire questo job.", False),
        ("Il piano non si può esportare: {reason}", False),
        ("Se usi le spot, salva i checkpoint.", False),
        ("Usa le spot.", False),
        ("Solo allora valuti il prezzo.", True),
        ("Poi decida la regione.", True),
        ("Spesso può noleggiare una L4.", True),
        ("Se valuti il prezzo, guarda le spot.", False),
    ],
)
def test_the_scanner_tells_the_two_registers_apart(text: str, formal: bool) -> None:
    assert bool(formal_forms(text)) is formal, formal_forms(text)


def test_every_italian_text_the_product_writes_is_informal() -> None:
    texts = list(italian_texts())
    assert len(texts) > 300 and any(where.startswith("kb:") for where, _ in texts)  # the files were found and read
    problems = [
        f"{where}: {forms} in {sentence!r}"
        for where, text in texts
        for sentence in sentences(text)
        if (forms := formal_forms(sentence))
        and not any(where == place and fragment in sentence for place, fragment in RULES["allowed"])
    ]
    assert problems == []


def test_every_allowed_sentence_still_exists() -> None:
    """A reviewed exception whose sentence is gone is removed from the list (so the list cannot hide new text)."""
    texts = dict(italian_texts())
    assert [pair for pair in RULES["allowed"] if pair[1] not in texts.get(pair[0], "")] == []
