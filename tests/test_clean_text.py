"""What is kept of a real-looking page: the article's own words, without syntax or prompts."""

from __future__ import annotations

from index.sources import read_bytes, read_text
from index.text import split_paragraphs

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
