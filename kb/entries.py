"""Load the knowledge-base entries from `kb/data/<article>.<lang>.md`: one `## <id>` block per entry."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from contract.languages import LANGUAGES, Language

ARTICLES: tuple[str, ...] = ("training", "fine_tuning")
Kind = Literal["section", "bullet", "faq"]


@dataclass(frozen=True, kw_only=True)
class Entry:
    """One retrievable piece of an article in one language."""

    id: str
    """Stable id, the same in every language, e.g. 'training.faq_spot'."""
    article: str
    """'training' or 'fine_tuning'."""
    language: Language
    """Language of title and text."""
    kind: Kind
    """'faq' (question + answer), 'bullet' (one bullet of a section) or 'section' (a paragraph)."""
    title: str
    """The FAQ question, or a short heading for a body entry."""
    text: str
    """The entry text as published (it/id) or as faithfully translated (en; id for fine-tuning)."""


class Citation(BaseModel):
    """An entry as the agent cites it in an answer."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="Stable entry id, aligned across languages.")
    article: str = Field(description="Source article: training or fine_tuning.")
    title: str = Field(description="FAQ question or section heading, in the entry's language.")
    language: Language = Field(description="Language of title and text.")
    text: str = Field(description="The cited text.")

    @classmethod
    def of(cls, item: Entry) -> Citation:
        """The citation for one entry."""
        return cls(id=item.id, article=item.article, title=item.title, language=item.language, text=item.text)


def parse_article(source: str) -> tuple[dict[str, str], list[dict[str, str]]]:
    """Split one article file into its front matter and its entry blocks (id, kind, title, text)."""
    _, header, body = source.split("---\n", 2)
    meta = dict(line.split(": ", 1) for line in header.strip().splitlines())
    blocks: list[dict[str, str]] = []
    for chunk in re.split(r"^## ", body, flags=re.MULTILINE)[1:]:
        head, _, text = chunk.partition("\n\n")
        lines = head.strip().splitlines()
        fields = dict(line.split(": ", 1) for line in lines[1:])
        blocks.append(
            {"id": lines[0].strip(), "kind": fields["kind"], "title": fields["title"], "text": " ".join(text.split())}
        )
    return meta, blocks


@cache
def display_rewrites(language: Language) -> tuple[tuple[str, str], ...]:
    """(published phrase, shown phrase) pairs for one language, e.g. 'the comparison above' -> 'the offers table'."""
    data = json.loads(resources.files(__package__).joinpath("data/display_rewrites.json").read_text(encoding="utf-8"))
    return tuple((old, new) for old, new in data.get(language, ()))  # a language may have none


def for_display(text: str, language: Language) -> str:
    """The published text with the phrases that only make sense on the source page replaced."""
    for old, new in display_rewrites(language):
        text = text.replace(old, new).replace(old[0].upper() + old[1:], new[0].upper() + new[1:])
    return text


@cache
def entries(language: Language) -> tuple[Entry, ...]:
    """All entries of both articles in one language, in article order."""
    if language not in LANGUAGES:
        raise ValueError(f"unsupported language '{language}'; choose it, id or en")
    out: list[Entry] = []
    data = resources.files(__package__).joinpath("data")
    for article in ARTICLES:
        meta, blocks = parse_article(data.joinpath(f"{article}.{language}.md").read_text(encoding="utf-8"))
        for block in blocks:
            shown = {
                **block,
                "title": for_display(block["title"], language),
                "text": for_display(block["text"], language),
            }
            out.append(Entry(article=meta["article"], language=meta["language"], **shown))  # type: ignore[arg-type]
    return tuple(out)


@cache
def article_titles(language: Language) -> dict[str, str]:
    """Article -> the article's title in one language."""
    data = resources.files(__package__).joinpath("data")
    return {
        article: parse_article(data.joinpath(f"{article}.{language}.md").read_text(encoding="utf-8"))[0]["title"]
        for article in ARTICLES
    }


@cache
def _by_id(language: Language) -> dict[str, Entry]:
    """Entries of one language keyed by id."""
    return {item.id: item for item in entries(language)}


def entry(entry_id: str, language: Language) -> Citation:
    """The citation for entry `entry_id` in `language`; ValueError for an unknown id."""
    found = _by_id(language).get(entry_id)
    if found is None:
        raise ValueError(f"unknown knowledge-base entry '{entry_id}'")
    return Citation.of(found)


@cache
def aliases(language: Language) -> dict[str, tuple[str, ...]]:
    """Entry id -> alias phrases (synonyms, colloquial wordings) in one language, from `aliases.<lang>.json`."""
    raw = resources.files(__package__).joinpath("data", f"aliases.{language}.json").read_text(encoding="utf-8")
    return {key: tuple(value) for key, value in json.loads(raw).items()}


def entry_ids() -> tuple[str, ...]:
    """Every entry id, in article order (the same in every language)."""
    return tuple(item.id for item in entries("en"))
