"""Hostile text, as hypothesis mixes it from the adversarial shapes of
tools/bench/text_shapes.py (runs of every script's marks with no space after them, closers,
quotes, brackets, initials, unspaced scripts, invisible and combining characters, markup) and
ordinary words: every pass an article's text takes comes back whole, in order, and in bounded
output. Its time is measured by that benchmark, which prints seconds per 100 KB of each shape
against prose."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from index.ingest.paragraphs import split_paragraphs
from index.text import analyze, normalize
from index.text.question_words import supplies
from index.text.sentences import split_sentences
from tools.bench.text_shapes import SHAPES

UNITS = sorted({shape.unit[:40] for shape in SHAPES} | {shape.unit[-40:] for shape in SHAPES})
WORDS = ["the council ", "said ", "Millbrook ", "市政府", "مجلس ", "совет ", "सभा ", "ห้องสมุด"]
LANGUAGES = sorted({shape.language for shape in SHAPES})

hostile = st.lists(
    st.tuples(st.sampled_from(UNITS + WORDS), st.integers(1, 200)),
    min_size=1,
    max_size=12,
).map(lambda parts: "".join(unit * times for unit, times in parts)[:8_000])


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(hostile, st.sampled_from(LANGUAGES))
def test_sentences_of_hostile_text_are_its_own_characters_in_order(
    text: str, language: str
) -> None:
    line = " ".join(normalize(text).split())
    sentences = split_sentences(line, language)
    # Every word is in a sentence, and the sentences, in order, are one stretch of the text's
    # characters (marks with no word before the first are no sentence of their own).
    joined, whole = "".join(sentences).replace(" ", ""), line.replace(" ", "")
    assert joined in whole
    assert [ch for ch in whole if ch.isalnum()] == [ch for ch in joined if ch.isalnum()]
    position = 0
    for sentence in sentences:
        found = line.find(sentence, position)
        assert found >= position
        position = found + len(sentence)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(hostile, st.sampled_from(LANGUAGES))
def test_paragraphs_and_terms_of_hostile_text_come_from_it(text: str, language: str) -> None:
    normalized = normalize(text)
    assert normalize(normalized) == normalized
    split = split_paragraphs(text, markdown=True)
    flat = normalized.replace(" ", "").replace("\n", "")
    for paragraph in split.paragraphs:
        assert paragraph.strip()
        # Markdown's markup may be taken out, and a table's cells joined with commas; what
        # stays is the text's own.
        assert set(paragraph.replace(" ", "")) <= set(flat) | set("\n,")
    terms = analyze(normalized, language)
    assert len(terms) <= len(normalized)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(hostile)
def test_a_name_or_number_is_found_in_hostile_text_only_where_it_has_one(text: str) -> None:
    # What a question in another language asks for (who, where, how many), looked for in an
    # article's hostile text: a name needs a capital letter, a number a digit, and the
    # question's own words and numbers never count.
    assert not supplies(text, "person", text) and not supplies(text, "number", text)
    if supplies(text, "person", "Кто?"):
        assert any(c.isupper() for c in text)
    assert supplies(text, "number", "Сколько?") == any(c.isdecimal() for c in text)
