"""Grounded FAQ answers: pick the reply language, retrieve KB entries, and compose the answer from them.

Offline the answer is extractive: the top entry's text in the user's language, its source, and "see also" titles.
With an LLM configured (OPENAI_API_KEY / OPENAI_BASE_URL), the model may only rephrase the cited text within one
deadline (agent/llm/client.py); a failure, a refusal, a claim the citations do not hold (agent/claims/check.py: numbers in digits
or words, providers, GPUs, promises), a lost yes/no verdict or a content-free reply falls back to the extractive
answer, and the answer says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

import prompts
from agent import llm
from agent.claims import check_grounded, content_problems
from agent.language import detect_language
from agent.llm import openai  # imported on first use: not on the offline path
from contract.errors import UserError
from kb.entries import Citation, Language, article_titles
from kb.retrieval import rank
from kb.text import words

MAX_QUESTION_CHARS = 2000
"""Longer questions are cut here (retrieval and language detection only need the start)."""
MAX_CITATIONS = 3
RELATIVE_SCORE = 0.5
"""A lower-ranked entry is cited only if its score is at least this share of the top entry's."""
NO_ANSWER = "NO_ANSWER"
OPEN_QUESTION_WORDS = frozenset(
    {
        "what",
        "whats",
        "how",
        "which",
        "why",
        "where",
        "when",
        "who",
        "whom",
        "whose",
        "come",
        "cosa",
        "che",
        "quale",
        "quali",
        "quanto",
        "quanta",
        "quanti",
        "quante",
        "perché",
        "perche",
        "dove",
        "quando",
        "chi",
        "bagaimana",
        "gimana",
        "berapa",
        "mengapa",
        "kenapa",
        "kapan",
        "dimana",
        "mana",
        "siapa",
        "seberapa",
    }
)
"""Words that make a question open ("how do I…", "come faccio…", "bagaimana…"): no yes/no verdict leads its answer."""
VERDICT_LEAD = re.compile(r"^(?:yes|no|sì|si|ya|tidak|bukan|bisa|boleh)\s*[,.;:—–]\s*", re.IGNORECASE)
"""A yes/no word opening an entry ("Yes, provided…", "No. Fine-tuning…", "Bisa, asalkan…")."""


class NoRephrasing(ValueError):
    """The model gave no answer at all (empty, or NO_ANSWER): as good as unavailable, not a rejected rewording."""


Rephraser = Callable[[str, list[Citation], Language], str]
"""(question, citations, language) -> rephrased answer text; raises on failure."""


class FaqAnswer(BaseModel):
    """What `gpu-advisor ask` returns: the reply language, the answer text, and the entries it is built from."""

    model_config = ConfigDict(frozen=True)

    language: Language = Field(description="Language of the answer: it, id or en.")
    answer: str = Field(description="The answer, composed only from the cited entries (or a plain no-answer).")
    citations: list[Citation] = Field(default_factory=list, description="Cited KB entries, best first.")


def _template(name: str, language: Language) -> str:
    """A per-language template from prompts/."""
    return prompts.load_in(language, f"{name}.txt").strip()


def is_yes_no_question(question: str) -> bool:
    """True unless an open-question word ("how", "come", "bagaimana") opens the question or one of its first words."""
    return not set(words(question.replace("'", " "))[:3]) & OPEN_QUESTION_WORDS


def without_verdict(text: str) -> str:
    """The entry text without its opening yes/no word, re-capitalised (for an open question); a verdict clause
    ("Yes, provided your loop checkpoints.") goes with its word, as it only qualifies the yes."""
    lead = VERDICT_LEAD.match(text)
    if lead is None:
        return text
    rest = text[lead.end() :]
    if lead.group(0).rstrip().endswith(","):
        after = re.sub(r"^[^.!?]*[.!?]\s+", "", rest, count=1)
        rest = after if after != rest and after.strip() else rest
    return rest[:1].upper() + rest[1:]


def extractive_answer(citations: list[Citation], language: Language, *, yes_no: bool = True) -> str:
    """The top entry's text with its source, plus the titles of the other cited entries; an open question's answer
    does not lead with the entry's yes/no word."""
    top = citations[0]
    body = top.text if yes_no else without_verdict(top.text)
    text = _template("faq_answer", language).format(
        text=body, title=top.title, article=article_titles(language)[top.article]
    )
    if len(citations) > 1:
        titles = "; ".join(c.title for c in citations[1:])
        text += "\n" + _template("faq_see_also", language).format(titles=titles)
    return text


def _verdict_word(text: str) -> str | None:
    """The yes/no word an entry opens with ('Sì,', 'Yes,', 'Tidak.'), lower case, if any."""
    first = words(text.split(",")[0].split(".")[0])[:1]
    return first[0] if first and first[0] in {"sì", "si", "no", "yes", "ya", "tidak", "bukan"} else None


def checked_rephrasing(
    text: str, citations: list[Citation], excerpts: str, language: Language, *, yes_no: bool = True
) -> str:
    """The reply when every claim is in the cited text, its yes/no verdict is kept and it has content; else ValueError."""
    text = (text or "").strip()
    if not text or text == NO_ANSWER:
        raise NoRephrasing("the model gave no answer")
    check = check_grounded(text, excerpts, language)
    if not check.ok:
        raise ValueError("; ".join(check.problems))
    from agent.claims import draft_problems  # every sentence backed by the cited text; no links, credentials...

    problems = content_problems(text, excerpts, language) or draft_problems(text, excerpts, language)
    if problems:
        raise ValueError("; ".join(problems))
    verdict = _verdict_word(citations[0].text) if yes_no else None  # an open question has no verdict to keep
    if verdict and verdict not in words(text)[:12]:
        raise ValueError(f"the reply lost the verdict {verdict!r}")
    return text


def llm_rephraser(client: openai.OpenAI, model: str) -> Rephraser:
    """A rephraser that asks an OpenAI-compatible chat model to restate the cited text, and nothing else."""

    def rephrase(question: str, citations: list[Citation], language: Language) -> str:
        """One chat completion within the LLM deadline; raises when the reply is not a faithful restatement."""
        excerpts = "\n\n".join(f"[{i}] {c.title}\n{c.text}" for i, c in enumerate(citations, 1))
        system = prompts.load("faq_rephrase_system.txt").replace("{language}", language)
        reply = llm.call(
            lambda _fresh: client.chat.completions.create(
                model=model,
                temperature=0,
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": f"Question: {question}\n\nExcerpts:\n{excerpts}"},
                ],
            )
        )
        return checked_rephrasing(
            reply.choices[0].message.content or "", citations, excerpts, language, yes_no=is_yes_no_question(question)
        )

    return rephrase


def _cited(question: str, language: Language) -> list[Citation]:
    """The entries that answer the question (best first), or none when the KB has no answer."""
    ranking = rank(question, language)
    if not ranking.answerable:
        return []
    best = ranking.hits[0].score
    return [hit.citation for hit in ranking.hits[:MAX_CITATIONS] if hit.score >= RELATIVE_SCORE * best]


def answer_question(
    question: str, *, lang: str | None = None, previous: str | None = None, rephraser: Rephraser | None = None
) -> FaqAnswer:
    """Answer a question from the KB in the user's language; UserError for an empty question."""
    if not question or not question.strip():
        raise UserError('the question is empty; ask something, e.g. "can I use spot instances for fine-tuning?"')
    question = question.strip()[:MAX_QUESTION_CHARS]
    guess = detect_language(question, explicit=lang, previous=previous)
    language: Language = guess.language
    if not guess.supported:
        return FaqAnswer(language="en", answer=prompts.load_in("en", "faq_unsupported_language.txt").strip())
    if not words(question):
        return FaqAnswer(language=language, answer=_template("faq_no_words", language))
    citations = _cited(question, language)
    if not citations:
        return FaqAnswer(language=language, answer=_template("faq_no_answer", language))
    answer = extractive_answer(citations, language, yes_no=is_yes_no_question(question))
    if rephraser is not None:
        try:
            answer = rephraser(question, citations, language)
        except (llm.LlmUnavailable, openai.OpenAIError, NoRephrasing, IndexError, AttributeError):
            answer = _template("faq_llm_fallback", language) + "\n\n" + answer
        except ValueError:  # the reply came but did not check out: say it was rejected, not unavailable
            answer = _template("faq_llm_rejected", language) + "\n\n" + answer
    return FaqAnswer(language=language, answer=answer, citations=citations)
