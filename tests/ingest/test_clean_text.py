"""What is kept of a real-looking page: the article's own words, without syntax or prompts."""

from __future__ import annotations

import pytest

from index.ingest.paragraphs import split_paragraphs
from index.ingest.readers import read_bytes, read_text

PAGE = """<!doctype html><html><head>
<title>Tide gauge shows record flood - Coastline Herald</title>
<meta property="og:site_name" content="Coastline Herald">
</head><body><article>
<h1>Tide gauge shows record flood</h1>
<p>The harbour's tide gauge recorded its highest level since 1953 on Sunday night, the port
authority said, as a storm surge pushed water over the sea wall.</p>
<p>"We were told the wall would hold, and it held [mostly]," said Ana Ruiz, who runs a cafe on
the quay. "The *cellar* did not."</p>
<p>Scientists traced the rise to <u>a slow-moving low</u> over the North Sea.</p>
<p>Get the latest updates right in your inbox. Subscribe to the Herald newsletter.</p>
<p>Like this story? Share it with a friend!</p>
<p>You may also like...</p>
<p>Engineers will inspect the sea wall on Monday before the next high tide.</p>
</article></body></html>"""


def test_a_page_keeps_its_words_and_drops_markdown_tags_and_prompts() -> None:
    doc = read_bytes(PAGE.encode(), "flood.html")
    text = "\n".join(doc.paragraphs)
    assert "it held [mostly]," in text  # no "\\[mostly\\]"
    assert "The *cellar* did not." in text  # the page's own asterisks, not emphasis
    assert "a slow-moving low over the North Sea" in text
    assert "\\" not in text and "<u>" not in text
    assert not any("Subscribe" in p or "Share it" in p or "also like" in p for p in doc.paragraphs)
    assert doc.paragraphs[-1].startswith("Engineers will inspect")


def test_a_title_does_not_keep_the_site_name_appended_to_it() -> None:
    doc = read_bytes(PAGE.encode(), "flood.html")
    assert doc.title == "Tide gauge shows record flood"


def test_lines_of_only_syntax_are_not_paragraphs() -> None:
    paragraphs = split_paragraphs(
        "Real text here.\n\n\\_\\_\\_\n\n* * *\n\nMore text.", markdown=True
    ).paragraphs
    assert paragraphs == ["Real text here.", "More text."]


def test_prompts_and_promotions_are_skipped_but_prose_that_resembles_them_is_kept() -> None:
    doc = read_text(
        "Storm report\n\n"
        "DON'T MISS\n\n"
        "comments\n\n"
        "Follow Newsbeat on Instagram and Twitter.\n\n"
        "Already a subscriber? Log in.\n\n"
        "Don't miss the final tide, which peaks at 8 p.m., officials warned.\n\n"
        "Residents left comments on the council's page about the flood."
    )
    assert doc.paragraphs == [
        "Don't miss the final tide, which peaks at 8 p.m., officials warned.",
        "Residents left comments on the council's page about the flood.",
    ]
    assert len(doc.skipped) == 4


@pytest.mark.parametrize(
    ("byline", "author"),
    [
        ("Jeff Foust Monday; November", "Jeff Foust"),
        ("By Ines Marlow", "Ines Marlow"),
        ("Jane Doe, Staff Writer | Updated 10:42 a.m. EST", "Jane Doe"),
        ("By Ana Ruiz and Tom Lee, Coastline Herald", "Ana Ruiz and Tom Lee"),
        ("Ana Ruiz; Tom Lee; Mia Berg; Ana Ruiz", "Ana Ruiz, Tom Lee and Mia Berg"),
        ("April Ryan", "April Ryan"),
        ("Updated November 3, 2025", None),
    ],
)
def test_a_citation_names_the_authors_without_dates_roles_or_the_site(
    byline: str, author: str | None
) -> None:
    page = PAGE.replace("</head>", f'<meta name="author" content="{byline}"></head>')
    assert read_bytes(page.encode(), "flood.html").author == author


def test_a_pasted_article_keeps_its_section_heads_as_headings() -> None:
    doc = read_text(
        "Race for mayor tightens\n\n"
        "Two candidates are level in the latest poll, a week before the city votes.\n\n"
        "WHO IS THE FRONT-RUNNER?\n\n"
        "Lena Park leads among voters over 50, and Tom Achterberg among the young.\n\n"
        "BLUE CITY POLICE SERGEANTS SAY THEY ARE PAID LESS THAN THEIR SUBORDINATES\n\n"
        "Turnout is expected to be the highest since 2010."
    )
    assert doc.headings == [None, "WHO IS THE FRONT-RUNNER?", "WHO IS THE FRONT-RUNNER?"]
    assert doc.paragraphs[1].startswith("Lena Park leads")
    assert doc.skipped == [
        "BLUE CITY POLICE SERGEANTS SAY THEY ARE PAID LESS THAN THEIR SUBORDINATES"
    ]


def test_a_wrapped_line_that_starts_with_a_number_is_not_a_list_item() -> None:
    doc = read_text(
        "Ozone explained\n\n"
        "Trioxygen (O\n3) is usually known as ozone, and the count reached\n"
        "2. The first stage follows.\n\n"
        "To make it:\n1. Pass oxygen through a spark\n2. Collect the gas\n"
        "in a cold trap\n3. Store it dark"
    )
    assert doc.paragraphs[0] == (
        "Trioxygen (O 3) is usually known as ozone, and the count reached 2. "
        "The first stage follows."
    )
    assert doc.paragraphs[1].split("\n") == [
        "To make it:",
        "Pass oxygen through a spark",
        "Collect the gas in a cold trap",
        "Store it dark",
    ]


def test_a_pasted_article_keeps_the_spaces_its_author_wrote() -> None:
    # French puts a narrow no-break space before "?" and a no-break one between a number and
    # its unit; Japanese writes an ideographic space: each is the article's text, stored and
    # quoted as written, in the title as in the paragraphs. Runs of ordinary spaces are layout.
    doc = read_text(
        "Prix\u00a0: 20\u00a0€\n\n"
        "Le livre coûte 20\u00a0€ ; pourquoi\u202f?   Parce que le papier est cher.\n\n"
        "- 東京の会議は\u3000来週です。\n"
    )
    assert doc.title == "Prix\u00a0: 20\u00a0€"
    assert doc.paragraphs == [
        "Le livre coûte 20\u00a0€ ; pourquoi\u202f? Parce que le papier est cher.",
        "東京の会議は\u3000来週です。",
    ]


def test_a_page_keeps_the_spaces_its_author_wrote() -> None:
    # The page reader folds every space into a plain one; the article's own no-break, narrow
    # no-break and ideographic spaces come through as written, however the page encodes them.
    page = PAGE.replace(
        "on Sunday night,",
        "on Sunday night at 23&nbsp;h&#8239;45 (20\u00a0cm above the record; 東京の\u3000記録),",
    ).replace("Tide gauge shows record flood", "Tide gauge: 20&nbsp;cm over the record")
    doc = read_bytes(page.encode(), "page.html")
    assert (
        "at 23\u00a0h\u202f45 (20\u00a0cm above the record; 東京の\u3000記録)," in doc.paragraphs[0]
    )
    assert doc.title == "Tide gauge: 20\u00a0cm over the record"
    assert not any(0xE000 <= ord(c) <= 0xF8FF for p in doc.paragraphs for c in p)
