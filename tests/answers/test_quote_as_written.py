"""A quote is the article's text as written: each citation's `quote` is slices of its `text`,
joined by an ellipsis where something was left out, never with a space the article lacks (the
`ask --json` contract), in every script (text_strategies.py). Composed from a passage found as
retrieval finds it, without the model."""

from __future__ import annotations

from urllib.parse import quote as encoded

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from text_strategies import SCRIPTS, Script, sentences, slices

from index.answers.compose import compose, fragment_link
from index.records import Article, Passage
from index.search.bm25_index import KeywordIndex
from index.search.language import Reading
from index.search.ranking import Hit
from index.search.retrieval import Retrieved


def answered(question: str, paragraphs: list[str], language: str) -> list[tuple[str, str]]:
    """(quote, text) of each citation of the answer to `question` from these paragraphs, the
    first found first."""
    article = Article(1, "default", "Title", None, None, None, None, None, "", "", "text", 1, 1)
    article = Article(**{**article.to_json(), "language": language})
    passages = {n: Passage(n, 1, n, 0, text) for n, text in enumerate(paragraphs, start=1)}
    retrieved = Retrieved(
        hits=[Hit(n, 1.0 / n, 0.5, 1.0) for n in passages],
        passages=passages,
        terms=KeywordIndex(list(passages), paragraphs, [language] * len(paragraphs)),
        relevant=True,
        reading=Reading(language, True, language),
        searched=question,
    )
    answer = compose(question, retrieved, {1: article})
    assert not answer.abstained
    return [(c.quote, c.text) for c in answer.citations]


@pytest.mark.parametrize(
    ("language", "paragraph", "question"),
    [
        ("ja", "すごい！！次は来週です。会場は東京です。", "次はいつですか"),
        ("ja", "本当？！うそ。。。次は来週です。", "次はいつですか"),
        ("zh", "真的吗？！是的。。。会议在下周。", "会议什么时候"),
        ("el", "Πότε ανοίγει η βιβλιοθήκη; Ανοίγει το Σάββατο.", "Πότε ανοίγει η βιβλιοθήκη;"),
        ("my", "မြို့တော်၊ ရန်ကုန်တွင် မိုးရွာသည်။ နောက်နေ့ နေသာသည်။", "ရန်ကုန် မိုး"),
        ("en", "It opened?! Yes... The hall opened in 1931.", "When did the hall open?"),
    ],
)
def test_a_quote_of_marks_in_a_run_is_a_slice_of_its_paragraph(
    language: str, paragraph: str, question: str
) -> None:
    ((quote, text),) = answered(question, [paragraph], language)
    assert text == paragraph
    assert slices(quote, text), quote


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(SCRIPTS).flatmap(
        lambda s: st.tuples(st.just(s), st.lists(sentences(s), min_size=1, max_size=3))
    ),
    st.data(),
)
def test_every_quote_is_slices_of_its_passage_in_every_script(
    drawn: tuple[Script, list[tuple[list[str], str]]], data: st.DataObject
) -> None:
    script, written = drawn
    paragraphs = [paragraph for _, paragraph in written]
    asked = data.draw(st.sampled_from([s for said, _ in written for s in said]))
    for quote, text in answered(asked, paragraphs, script.language):
        assert slices(quote, text), (quote, text)


def test_a_link_to_a_quote_with_something_left_out_scrolls_to_words_on_the_page() -> None:
    url = "https://news.example/story"
    assert fragment_link(url, "The hall opened.") == f"{url}#:~:text=The%20hall%20opened."
    # The ellipsis is not on the page: the link runs from the first slice to the last.
    link = fragment_link(url, "The hall opened. … It closed in 1990.")
    assert link == f"{url}#:~:text=The%20hall%20opened.,It%20closed%20in%201990."
    assert fragment_link(url, "すごい！！…次は来週です。") == (
        f"{url}#:~:text={encoded('すごい！！', safe='')},{encoded('次は来週です。', safe='')}"
    )
