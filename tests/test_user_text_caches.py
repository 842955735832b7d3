"""Caches keyed by what users type stay bounded (issue 27: no growth in a long-running process): every new word or
region a user writes would otherwise stay in memory for the life of the process."""

from __future__ import annotations

import itertools
import string
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agent.language import number_words
from tools.catalog import regions


def _new_words() -> Iterator[str]:
    """Letters-only words no vocabulary holds."""
    for letters in itertools.product(string.ascii_lowercase, repeat=4):
        yield "zq" + "".join(letters)


@pytest.mark.parametrize(
    "lookup",
    [number_words._pieces, number_words._glued, regions.expand_region],
    ids=["number-word pieces", "glued number words", "region wishes"],
)
def test_a_cache_of_user_text_is_bounded(lookup: Callable[..., Any]) -> None:
    info = lookup.cache_info()  # type: ignore[attr-defined]
    assert info.maxsize is not None, "a cache keyed by user text needs a bound"
    for word in itertools.islice(_new_words(), info.maxsize + 50):
        lookup(word)
    assert lookup.cache_info().currsize <= info.maxsize  # type: ignore[attr-defined]
