"""Choosing a summary (index/summaries/choose.py), with no model: its sentences are the
article's own, in its order, with their paragraphs; as many as a member reads at a glance; none
said twice; and only the start of a long article is read."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from text_strategies import SCRIPTS, Script, sentences

from index.summaries import RULES, ArticleText, one_line, render, summarize
from index.text import profile


def _article(paragraphs: list[str], language: str = "en", title: str = "A story") -> ArticleText:
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((len(paragraphs), 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return ArticleText(title, language, list(enumerate(paragraphs, start=1)), vectors)


STORY = [
    "The council approved a new budget for the harbour on Monday after a long debate.",
    "The plan pays for a sea wall, two new piers and the repair of the old fish market.",
    "Work starts in the spring and should end within three years, the mayor said.",
    "Some residents asked for a vote on the plan before any money is spent on it.",
    "The harbour was damaged by storms twice in the last decade, closing it for weeks.",
    "A public meeting about the works will be held at the town hall next Thursday.",
]


def test_a_summary_is_the_articles_own_sentences_in_its_order_with_their_paragraphs() -> None:
    chosen = summarize(_article(STORY))
    assert RULES.least_sentences <= len(chosen) <= RULES.most_sentences
    assert [s.paragraph for s in chosen] == sorted(s.paragraph for s in chosen)
    for sentence in chosen:
        assert sentence.text in STORY[sentence.paragraph - 1]
    assert chosen[0].text == STORY[0]  # news puts its point first


def test_a_short_article_gets_fewer_sentences_and_a_one_sentence_one_that_sentence() -> None:
    assert [s.text for s in summarize(_article([STORY[0]]))] == [STORY[0]]
    assert len(summarize(_article(STORY[:2]))) == 2


def test_asked_for_a_number_of_sentences_it_gives_that_many() -> None:
    assert len(summarize(_article(STORY), sentences=4)) == 4
    assert len(summarize(_article(STORY), sentences=1)) == 1


def test_a_sentence_the_page_repeats_is_not_said_twice() -> None:
    repeated = [STORY[0], STORY[0].replace("Monday", "Monday,"), *STORY[1:]]
    texts = [s.text for s in summarize(_article(repeated), sentences=3)]
    assert len({t.rstrip(".").replace(",", "") for t in texts}) == 3


def test_headings_and_credits_are_passed_over_for_statements() -> None:
    paragraphs = ["Harbour works", "Photo: J. Smith", *STORY]
    texts = [s.text for s in summarize(_article(paragraphs))]
    assert "Harbour works" not in texts and "Photo: J. Smith" not in texts


def test_only_the_start_of_a_long_article_is_read() -> None:
    # 5,000 paragraphs: the candidates are the first sentences, whatever follows them.
    long = [f"Paragraph {n} tells of the harbour works in some detail." for n in range(5_000)]
    chosen = summarize(_article(long))
    assert chosen and max(s.paragraph for s in chosen) <= RULES.candidates


def test_the_vectors_move_the_choice_toward_what_the_article_keeps_returning_to() -> None:
    # The third sentence points where every other passage points; with centrality alone
    # weighed, it is chosen before the second.
    vectors = np.tile(np.eye(4, dtype=np.float32)[0], (8, 1))
    vectors[1] = np.eye(4, dtype=np.float32)[1]
    article = ArticleText("x", "en", list(enumerate(STORY + STORY[:2], start=1)), vectors)
    rules = dataclasses.replace(RULES, position_scale=1e9, centrality=1.0, title=0.0)
    texts = [s.text for s in summarize(article, rules, sentences=2)]
    assert STORY[1] not in texts


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(SCRIPTS).flatmap(
        lambda s: st.tuples(st.just(s), st.lists(sentences(s), min_size=1, max_size=6))
    )
)
def test_in_every_script_each_sentence_is_a_slice_of_its_paragraph(
    drawn: tuple[Script, list[tuple[list[str], str]]],
) -> None:
    script, made = drawn
    paragraphs = [paragraph for _, paragraph in made]
    chosen = summarize(_article(paragraphs, script.language))
    assert chosen
    for sentence in chosen:
        assert sentence.text and sentence.text in paragraphs[sentence.paragraph - 1]
    shown = render(chosen, script.language)
    joined = "" if profile(script.language).script == "CJK" else " "
    assert shown == joined.join(s.text for s in chosen)
    assert one_line(chosen, script.language) in shown or one_line(chosen, script.language).endswith(
        "…"
    )
