"""How long a quote is (answers/quote_choice.py, `QuoteRules`): a sentence too short to read alone
takes in the sentences beside it, and an answer stays within its budget of characters. The real
model, through the command line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from index import Library
from index.answers.quote_choice import RULES
from index.cli import main

SENTENCES = [
    "Millbrook grew up around a mill on the river in the eighteenth century, and for most of its "
    "history the town's public life took place in the church, the school and the mill's yard.",
    "The new hall opened in 1931.",
    "Parking behind the building was paved in the nineteen-sixties, when the county moved its "
    "offices to the square and the market began to fill the street on Saturday mornings.",
    "A second storey, planned from the start, was never built, and the stairs that were meant to "
    "lead to it still end at a plain wall on the landing above the cloakroom.",
]


def ask(library: Library, capsys: pytest.CaptureFixture[str], question: str) -> dict[str, object]:
    assert main(["ask", question, "--json"], library=library) == 0
    answer = json.loads(capsys.readouterr().out)
    assert isinstance(answer, dict)
    return answer


def test_a_short_sentence_is_quoted_with_its_neighbour_and_within_the_budget(
    library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paragraph = " ".join(SENTENCES)
    article = tmp_path / "hall.txt"
    article.write_text(f"The town hall\n\n{paragraph}\n", encoding="utf-8")
    assert main(["add", str(article), "--json"], library=library) == 0
    capsys.readouterr()
    answer = ask(library, capsys, "When did the new hall open?")
    assert not answer["abstained"]
    quoted = re.sub(r" \[\d+\]$", "", str(answer["answer"]))
    # The answer's sentence, and the next one: 28 characters would not read as a quote.
    assert SENTENCES[1] in quoted and quoted in paragraph
    assert RULES.least_quote <= len(quoted) <= RULES.budget
    assert len(paragraph) > RULES.budget  # the whole paragraph would not have fitted
