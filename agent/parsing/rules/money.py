"""Budgets: amounts with a currency, ranges, and bare numbers after a budget word."""

from __future__ import annotations

import re

from agent.language import NUMBER, Quantity
from agent.parsing.rules.scan import (
    Scan,
    after,
    alt,
    before,
    cue_before,
    negative,
    rx,
    unit_follows,
    vocabulary,
    words,
)


def read_budget(scan: Scan) -> None:
    """Budgets with a currency sign or word ("$100", "150 euro", "Rp 5.000.000", "2 juta rupiah")."""
    currencies = vocabulary()["currencies"]
    last_end = 0
    for q in scan.free():
        currency = None
        end = q.end
        for code, forms in currencies.items():
            if rx(alt(forms["before"]) + r"\s*$").search(scan.text[max(0, q.start - 6) : q.start]):
                currency = code
                break
            match = after(scan, q.end, forms["after"], gap=r"\s*")
            if match:
                currency, end = code, match.end()
                break
        if currency is None:
            continue
        scan.claim(q.start, end)
        if negative(scan, q):
            scan.refuse("budget", f"-{scan.text[q.start : end]}", "negative")
            continue
        unit = _priced_per(scan, end)
        if unit or rx(r"(?:per|/)\s*$").search(scan.text[: q.start]):
            scan.per_unit_currency = scan.per_unit_currency or currency
            typed = scan.text[q.start : unit.end() if unit else end]
            scan.claim(q.start, unit.end() if unit else end)  # "$2,000 a month" is no month-long deadline
            scan.assumptions.append(f"{typed}: read as a price per hour or per GPU, not a budget for the job")
            continue
        value = _money_value(scan, q)
        if value > 0:
            previous = scan.values.get("budget")
            if previous is None:
                scan.set("budget", {"amount": value, "currency": currency})
                last_end = end
                _per_period(scan, q, end)
            elif (
                previous["currency"] == currency
                and value > previous["amount"]
                and _RANGE_GAP.fullmatch(scan.text[last_end : q.start])
            ):
                scan.values["budget"] = {"amount": value, "currency": currency}  # "$300 to $500": up to 500
    if "budget" in scan.values:
        _budget_range_end(scan, last_end)
    for q in scan.free():  # "10 juta sebulan": a rupiah amount per month (read as a bare budget later), no deadline
        if _rupiah_scale(scan, q):
            _claim_period(scan, q.end)


def _per_period(scan: Scan, q: Quantity, end: int) -> None:
    """A budget said per month or week ("$15 a month", "25 euro al mese") caps the job, which runs within one
    period: it stays the budget, with the assumption said, and its period is no deadline."""
    period = _claim_period(scan, end)
    if period:
        typed = scan.text[q.start : period.end()]
        scan.assumptions.append(f"{typed}: a budget per period, read as the job's budget (the job runs within one)")


def _copula_gap() -> str:
    """What may stand between an amount and what it is said per: a copula or two ("$150 is per GPU", "2 jt itu per
    kartu")."""
    return r"\s*(?:" + alt(words("unit_copulas")) + r"\s+){0,2}"


def _claim_period(scan: Scan, end: int) -> re.Match[str] | None:
    """The period an amount ending at `end` is said per ("a month", "sebulan"), claimed so no deadline reads it."""
    period = after(scan, end, vocabulary()["per_period"], gap=_copula_gap())
    if period:
        scan.claim(end, period.end())
    return period


def _money_value(scan: Scan, q: Quantity) -> float:
    """An amount of money: "1.500" is 1500 in every language (prices have two decimals, not three)."""
    raw = re.match(NUMBER, scan.text[q.start :])
    if raw and re.fullmatch(r"\d{1,3}\.\d{3}", raw.group(0)):
        return float(raw.group(0).replace(".", "")) * q.scale
    return q.value


def _range_top(scan: Scan, q: Quantity) -> Quantity | None:
    """The larger end of a range the number opens ("2 sampai 3 juta", "between 2 and 3k"), whose scale is said at
    the top only; None when no range follows."""
    for other in scan.free():
        if other.start <= q.start:
            continue
        joined = _RANGE_GAP.fullmatch(scan.text[q.end : other.start])
        if joined and other.scale > q.scale and q.number < other.number:
            return other
        return None
    return None


def _budget_range_end(scan: Scan, start: int) -> None:
    """The top of a range whose second amount has no currency ("Rp 3jt - 5jt", "$300-500"): the budget is the top."""
    budget = scan.values["budget"]
    for q in scan.free():
        if q.start < start:
            continue
        if (
            re.fullmatch(r"\s*(?:-|–|~|to|a|sampai|hingga|s/d)\s*", scan.text[start : q.start])
            and _money_value(scan, q) > budget["amount"]
            and not unit_follows(scan, q.end)
            and not rx(r"\s*(?:x\s*)?[a-z]{1,3}\d").match(scan.text, q.end)
        ):
            scan.values["budget"] = {"amount": _money_value(scan, q), "currency": budget["currency"]}
            scan.claim(q.start, q.end)
        return


_RANGE_GAP = re.compile(
    r"\s*(?:-|–|~|to|and|e|a|o|or|sampai|hingga|s/d|dan|atau)\s*(?:\$|€|us\$|rp\.?|idr|usd|eur)?\s*", re.IGNORECASE
)
"""What joins the two ends of a money range once the first amount and its currency are read."""


_WEAK_BUDGET_WORDS = (
    "ho",
    "have",
    "punya",
    "max",
    "massimo",
    "maksimal",
    "maks",
    "under",
    "below",
    "less than",
    "lebih dari",
    "more than",
    "più di",
    "piu di",
    "kurang dari",
    "di bawah",
)
"""Budget words that also precede other limits: they need money evidence (a rupiah magnitude or 'budget' first)."""


def _rupiah_scale(scan: Scan, q: Quantity) -> bool:
    """Whether the number is written with an Indonesian magnitude used for money ("2jt", "500rb", "1,5 juta")."""
    return rx(r"[\d.,]+\s*(?:jt|jta|juta|rb|rbu|ribu)").fullmatch(scan.text[q.start : q.end]) is not None


def _priced_per(scan: Scan, end: int) -> re.Match[str] | None:
    """The unit an amount ending at `end` is priced per ("an hour", "per GPU", "a day"), also after a copula or two
    ("$150 is per GPU", "2 jt itu per kartu"); None for an amount of the whole job (or of a month: _per_period)."""
    return after(scan, end, vocabulary()["per_time"], gap=_copula_gap())


KEYWORD_GAP = 4
"""Words at most between a budget word and its amount ("budget turun jadi 2 jt", "budget is now raised to 120")."""


def _keyword_before(scan: Scan, q: Quantity, cues: list[str]) -> re.Match[str] | None:
    """The word of `cues` before the number, with at most KEYWORD_GAP words and no other number between them."""
    return cue_before(scan, q.start, cues, window=48, most_words=KEYWORD_GAP)


def _total_beside(scan: Scan, q: Quantity) -> bool:
    """Whether a word for the whole ("in totale", "totalnya", "in total") stands just before or after the number."""
    totals = words("total_markers")
    return _keyword_before(scan, q, totals) is not None or after(scan, q.end, totals, gap=r"\s*") is not None


def read_bare_budget(scan: Scan) -> None:
    """A number after a budget word with no unit ("budget 500", "anggaran 5 juta", "budget turun jadi 2 jt"), or
    the total beside an amount priced per GPU ("$150 was per GPU, so 600 in total")."""
    if "budget" in scan.values:
        return
    for q in scan.free():
        total = (
            _total_beside(scan, q)
            and (scan.per_unit_currency is not None or _rupiah_scale(scan, q))
            and not unit_follows(scan, q.end)
        )
        keyword = None if total else _keyword_before(scan, q, vocabulary()["budget_keywords"])
        if not total and keyword is None:
            continue
        if after(scan, q.end, words("frequency_words"), gap=r"\s*") is not None:
            continue  # "berapa biaya satu kali training?", "what does one run cost": how often, not an amount
        top = _range_top(scan, q)  # "budget antara 2 sampai 3 juta": the top, its scale said once
        if top is not None:
            scan.claim(q.start, q.end)
            q = top
        if (
            keyword is not None
            and keyword.group(0) in _WEAK_BUDGET_WORDS
            and not _rupiah_scale(scan, q)
            and not before(scan, keyword.start(), vocabulary()["budget_keywords"], window=12)
        ):
            continue  # "max 8" alone is not money; "budget max 2jt", "lebih dari 1,5 jt" are
        unit = _priced_per(scan, q.end)
        if unit:  # a price per hour or per GPU, not a budget for the job
            scan.assumptions.append(
                f"{scan.text[q.start : unit.end()]}: read as a price per hour or per GPU, not a budget for the job"
            )
            continue
        if negative(scan, q):
            scan.claim(q.start, q.end)
            scan.refuse("budget", f"-{scan.text[q.start : q.end]}", "negative")
            return
        value = _money_value(scan, q)
        currency = (
            "IDR"
            if _rupiah_scale(scan, q)
            else scan.per_unit_currency
            if total and scan.per_unit_currency
            else {"it": "EUR", "id": "IDR" if value >= 10_000 else "USD"}.get(scan.lang, "USD")
        )
        scan.claim(q.start, q.end)
        scan.set("budget", {"amount": value, "currency": currency})
        scan.assumptions.append(f"budget {value:g} has no currency; read as {currency}")
        _per_period(scan, q, q.end)
        return
