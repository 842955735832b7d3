"""Where a person or a team is ("the client is based in Germany", "Tim kami di Jakarta", "I'm in Jakarta") is no wish
for where the job runs: it restricted the search to that region (and, stated before a question, changed the job).
Where the job runs or the data stays ("run it in Germany", "data must stay in the EU", "jalankan di Jakarta") still
is. Class seen in the tune half of the trade-offs blind set (a regression of the changes-of-mind classes exposed
it); sentences written for this test, in it/id/en."""

from __future__ import annotations

import pytest

from agent.parsing.offline import parse_fields

SOMEONE = [
    ("en", "our client is based in Germany, LoRA on Llama 3 8B"),
    ("en", "I'm in Jakarta and want QLoRA on Mistral 7B"),
    ("it", "il nostro team ha sede a Milano, LoRA su Llama 3 8B"),
    ("id", "tim kami di Jakarta mau LoRA Llama 3 8B"),
]
RUNS = [
    ("en", "LoRA on Llama 3 8B, run it in Germany", "germany"),
    ("en", "we're based in the EU and the data must stay in the EU", "eu"),
    ("id", "jalankan di Jakarta ya", "jakarta"),
]


@pytest.mark.parametrize(("language", "text"), SOMEONE)
def test_where_someone_is_sets_no_region(language, text):
    values, _ = parse_fields(text, language)
    assert "regions" not in values


@pytest.mark.parametrize(("language", "text", "region"), RUNS)
def test_where_the_job_runs_is_still_a_region(language, text, region):
    values, _ = parse_fields(text, language)
    assert values.get("regions") == [region]
