"""A data set sized in bytes of text ("2 GB of text", "200 megabyte di file di testo", "1 GB teks"): its tokens, at the
job-time model's bytes per token (tools.jobtime.TEXT_BYTES_PER_TOKEN), with the size kept so the answer says how it
was read. A size in bytes with no text word after it ("80GB", "a 24 GB card") is left to the memory readers."""

from __future__ import annotations

from agent.parsing.rules.scan import Scan, alt, rx, vocabulary

MAX_WORDS_TO_TEXT = 4
"""Words that may stand between the size and the word that says it is text ("di file di testo", "once turned into
text")."""


def read_text_size(scan: Scan) -> None:
    """dataset_tokens from the first size in bytes that is said to be text; its bytes noted (`scan.text_bytes`)."""
    if "dataset_tokens" in scan.values:
        return
    lex = vocabulary()
    units = {float(scale): rx(r"\s*" + alt(forms) + r"(?![\w])") for scale, forms in lex["byte_units"].items()}
    said = rx(r"(?:\s+[\w'’-]+){0," + str(MAX_WORDS_TO_TEXT) + r"}?\s+" + alt(lex["text_words"]) + r"(?![\w])")
    for q in scan.free():
        for scale, pattern in units.items():
            unit = pattern.match(scan.text, q.end)
            if unit is None:
                continue
            if said.match(scan.text, unit.end()) is None:
                continue
            from tools.jobtime import tokens_in_text  # the job-time model's rule, imported when a size is said

            scan.text_bytes = q.value * scale
            scan.set("dataset_tokens", tokens_in_text(scan.text_bytes))
            scan.claim(q.start, unit.end())
            return
