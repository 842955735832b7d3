"""Which limits a turn removes by naming them with a removing verb: any form of the verb beside the limit's name, in
either order, a few words apart within one clause ("allora elimino la scadenza", "budgetnya dihapus aja", "let's
scrap the budget", "togli budget e scadenza"); a negated verb removes nothing ("don't remove the budget"). The verbs,
the limits' names and the negations are per-language word lists (prompts/<lang>/words/acts.json, "removal").
`clears` adds the cue lists that clear a field whatever the verb ("any region is fine", "nessuna scadenza")."""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

from agent.graph.acts.cues import acts_words, cue_patterns

VERB_FIRST_GAP = 4
"""Words at most between a removing verb and the limit it removes ("togli pure il limite di budget")."""
NAME_FIRST_GAP = 2
"""Words at most between a limit named first and the verb that removes it ("la scadenza toglila pure")."""
NEGATION_REACH = 2
"""Words at most between a negation and the verb it negates ("non la togliere")."""
VALUE_REACH = 3
"""Words after a limit's name where a number makes the turn a new value ("drop the budget to $50")."""
CLAUSE = re.compile(r"[^.;!?]+")
WORD = re.compile(r"\S+")


class _Grammar(NamedTuple):
    """The compiled word lists of one language (with English: people mix them)."""

    verbs: re.Pattern[str]
    negations: re.Pattern[str]
    limits: dict[str, re.Pattern[str]]


def _words(patterns: list[str]) -> re.Pattern[str]:
    """One whole-word pattern of a list of fragments."""
    return re.compile(r"(?<![\w-])(?:" + "|".join(f"(?:{p})" for p in patterns) + r")(?![\w-])", re.I)


@cache
def _grammar(language: str) -> _Grammar:
    """The removal word lists of the language and English, compiled."""
    verbs: list[str] = []
    negations: list[str] = []
    limits: dict[str, list[str]] = {}
    for data in acts_words(language):
        removal = data["removal"]
        verbs += removal["verbs"]
        negations += removal["negations"]
        for field, names in removal["limits"].items():
            limits.setdefault(field, []).extend(names)
    return _Grammar(_words(verbs), _words(negations), {field: _words(names) for field, names in limits.items()})


def _gap(clause: str, start: int, end: int) -> int | None:
    """How many words lie between two positions of a clause (None when a number is among them)."""
    between = WORD.findall(clause[start:end])
    return None if any(ch.isdigit() for word in between for ch in word) else len(between)


def _valued(clause: str, end: int) -> bool:
    """Whether a number follows within a few words of `end` (the limit gets a value, not removed)."""
    return any(ch.isdigit() for word in WORD.findall(clause[end:])[:VALUE_REACH] for ch in word)


def _negated(clause: str, verb: re.Match[str], grammar: _Grammar) -> bool:
    """Whether a negation stands a word or two before the verb, in its part of the clause ("non è un problema,
    togli il budget" removes it)."""
    return _negation_before(clause, verb.start(), grammar)


def _negation_before(text: str, at: int, grammar: _Grammar) -> bool:
    """Whether a negation of the word lists ends a word or two before position `at`, after the last comma or stop."""
    start = max(text.rfind(mark, 0, at) for mark in ",.;!?") + 1
    return any(
        (gap := _gap(text, found.end(), at)) is not None and gap <= NEGATION_REACH
        for found in grammar.negations.finditer(text, start, at)
    )


def said_unnegated(pattern: re.Pattern[str], text: str, language: str) -> bool:
    """Whether `pattern` matches the text somewhere that is not a removing verb negated right before it ("don't
    remove the budget" keeps it; "non abbiamo più vincoli di regione" says there are none)."""
    grammar = _grammar(language)
    return any(
        not (grammar.verbs.match(found.group(0)) and _negation_before(text, found.start(), grammar))
        for found in pattern.finditer(text)
    )


def removed_limits(text: str, language: str) -> tuple[str, ...]:
    """The job fields whose limit the text removes with a removing verb (budget, deadline_hours, regions, providers,
    gpu), in the word lists' order."""
    grammar = _grammar(language)
    found: set[str] = set()
    for clause in CLAUSE.findall((text or "").lower()):
        verbs = [verb for verb in grammar.verbs.finditer(clause) if not _negated(clause, verb, grammar)]
        if not verbs:
            continue
        for field, names in grammar.limits.items():
            for name in names.finditer(clause):
                if any(_removes(clause, verb, name) for verb in verbs):
                    found.add(field)
    return tuple(field for field in grammar.limits if field in found)


def _removes(clause: str, verb: re.Match[str], name: re.Match[str]) -> bool:
    """Whether the verb removes the named limit: the name a few words after it ("togli budget e scadenza" removes
    both), or just before it; never a name with a number just after it ("drop the budget to $50" lowers it)."""
    if _valued(clause, name.end()):
        return False
    if name.start() >= verb.end():
        gap = _gap(clause, verb.end(), name.start())
        return gap is not None and gap <= VERB_FIRST_GAP
    gap = _gap(clause, name.end(), verb.start())
    return gap is not None and gap <= NAME_FIRST_GAP and "," not in clause[name.end() : verb.start()]


def clears(text: str, language: str) -> tuple[str, ...]:
    """Fields the turn clears ("any region is fine", "nessuna scadenza")."""
    names = {  # the cue lists that clear a field whatever the verb ("any region is fine")
        "clear_region": "regions",
        "clear_provider": "providers",
        "clear_deadline": "deadline_hours",
        "clear_budget": "budget",
        "clear_gpu": "gpu",
        "clear_nodes": "max_nodes",
        "clear_gpu_cap": "max_gpus",
    }
    patterns = cue_patterns(language)
    listed = tuple(
        name for cue, name in names.items() if cue in patterns and said_unnegated(patterns[cue], text, language)
    )
    return (*listed, *(name for name in removed_limits(text, language) if name not in listed))
