"""Budgets: amounts with a currency, ranges, and bare numbers after a budget word."""

from __future__ import annotations

import re

from agent.language import NUMBER, Quantity
from agent.parsing.rules.scan import (
    Scan,
    after,
    alt,
    before,
    negative,
    rx,
    unit_follows,
    vocabulary,
)


def read_budget(scan: Scan) -> None:
    """Budgets with a currency sign or word ("$100", "150 euro", "Rp 5.000.000", "2 juta rupiah")."""
    currencies = vocabulary()["currencies"]
    per_time = vocabulary()["per_time"]
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
        if after(scan, end, per_time, gap=r"\s*") or rx(r"(?:per|/)\s*$").search(scan.text[: q.start]):
            scan.assumptions.append(f"{scan.text[q.start : end]} read as a price per hour, not a budget for the job")
            continue
        value = _money_value(scan, q)
        if value > 0:
            previous = scan.values.get("budget")
            if previous is None:
                scan.set("budget", {"amount": value, "currency": currency})
                last_end = end
            elif (
                previous["currency"] == currency
                and value > previous["amount"]
                and _RANGE_GAP.fullmatch(scan.text[last_end : q.start])
            ):
                scan.values["budget"] = {"amount": value, "currency": currency}  # "$300 to $500": up to 500
    if "budget" in scan.values:
        _budget_range_end(scan, last_end)


def _money_value(scan: Scan, q: Quantity) -> float:
    """An amount of money: "1.500" is 1500 in every language (prices have two decimals, not three)."""
    raw = re.match(NUMBER, scan.text[q.start :])
    if raw and re.fullmatch(r"\d{1,3}\.\d{3}", raw.group(0)):
        return float(raw.group(0).replace(".", "")) * q.scale
    return q.value


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
)
"""Budget words that also precede other limits: they need money evidence (a rupiah magnitude or 'budget' first)."""


def _rupiah_scale(scan: Scan, q: Quantity) -> bool:
    """Whether the number is written with an Indonesian magnitude used for money ("2jt", "500rb", "1,5 juta")."""
    return rx(r"[\d.,]+\s*(?:jt|jta|juta|rb|rbu|ribu)").fullmatch(scan.text[q.start : q.end]) is not None


def read_bare_budget(scan: Scan) -> None:
    """A number right after a budget word with no unit ("budget 500", "anggaran 5 juta")."""
    if "budget" in scan.values:
        return
    for q in scan.free():
        keyword = before(scan, q.start, vocabulary()["budget_keywords"], window=16)
        if keyword is None or (
            rx(r"^\s*[a-z]").match(scan.text, q.end)
            and not after(scan, q.end, [r"di\s+budget", r"budget"])
            and not _rupiah_scale(scan, q)
        ):
            continue
        if (
            keyword.group(0) in _WEAK_BUDGET_WORDS
            and not _rupiah_scale(scan, q)
            and not before(scan, keyword.start(), vocabulary()["budget_keywords"], window=12)
        ):
            continue  # "max 8" alone is not money; "budget max 2jt", "lebih dari 1,5 jt" are
        if after(scan, q.end, vocabulary()["per_time"], gap=r"\s*"):
            continue  # a price per hour, not a budget for the job
        if negative(scan, q):
            scan.claim(q.start, q.end)
            scan.refuse("budget", f"-{scan.text[q.start : q.end]}", "negative")
            return
        value = _money_value(scan, q)
        currency = (
            "IDR"
            if _rupiah_scale(scan, q)
            else {"it": "EUR", "id": "IDR" if value >= 10_000 else "USD"}.get(scan.lang, "USD")
        )
        scan.claim(q.start, q.end)
        scan.set("budget", {"amount": value, "currency": currency})
        scan.assumptions.append(f"budget {value:g} has no currency; read as {currency}")
        return
