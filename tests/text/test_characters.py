"""What is kept of a text as written and what is taken out (text/characters.py), as a reader of
the stored article and of the search sees it."""

from __future__ import annotations

import pytest

from index.ingest.readers import read_text
from index.text import normalize, profile


@pytest.mark.parametrize(
    ("written", "space"),
    [
        ("Il habite à 10\u00a0km de Paris.", "\u00a0"),  # no-break space
        ("Vraiment\u202f? Oui\u202f!", "\u202f"),  # French's narrow no-break space
        ("東京\u3000大阪\u3000名古屋", "\u3000"),  # ideographic space
    ],
)
def test_the_spaces_an_author_writes_are_kept_and_still_part_words(
    written: str, space: str
) -> None:
    assert normalize(written) == written
    assert normalize(f"  {written}\t ") == written  # a line's ends are layout
    words = profile("fr").words(written.replace(space, " "))
    assert profile("fr").words(written) == words  # the search reads them as spaces


def test_layout_spaces_are_one_space_and_give_way_to_a_kept_one() -> None:
    assert normalize("a \t\u2003 b") == "a b"
    assert normalize("10 \u00a0 km") == "10\u00a0km"


@pytest.mark.parametrize("filler", ["\u115f", "\u1160", "\u3164", "\uffa0"])
def test_hangul_fillers_are_taken_out_and_leave_no_blank_title(filler: str) -> None:
    assert normalize(f"한{filler}국") == "한국"
    assert normalize(filler * 3) == ""
    # A title of fillers alone is no title: the article is named by its first words.
    document = read_text("The council met on Tuesday.", title=filler * 2)
    assert document.title == "The council met on Tuesday."
