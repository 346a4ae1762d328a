"""Where sentences end, checked against what Unicode says ends one (text_strategies.py): runs of
terminal marks stay with their sentence in every script, a sentence is a slice of its text,
Myanmar's comma ends nothing and Greek's question mark ends a Greek question."""

from __future__ import annotations

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from text_strategies import (
    GREEK_QUESTION,
    MYANMAR_COMMA,
    SCRIPTS,
    STERM,
    Script,
    ends_without_a_space,
    sentences,
)

from index.text import profile

TERMINAL = regex.compile(r"[\p{STerm}…]")


@pytest.mark.parametrize(
    ("language", "text", "expected"),
    [
        ("ja", "すごい！！次は来週です。", ["すごい！！", "次は来週です。"]),
        ("ja", "本当？！うそ。。。次は来週です。", ["本当？！", "うそ。。。", "次は来週です。"]),
        ("zh", "真的吗？？是的。", ["真的吗？？", "是的。"]),
        ("en", "Really?! Yes... It opened.", ["Really?!", "Yes...", "It opened."]),
        ("ar", "هل هذا صحيح؟! نعم.", ["هل هذا صحيح؟!", "نعم."]),
        ("hi", "क्या यह सच है?! हाँ।", ["क्या यह सच है?!", "हाँ।"]),
    ],
)
def test_a_run_of_terminal_marks_stays_with_its_sentence(
    language: str, text: str, expected: list[str]
) -> None:
    assert list(profile(language).sentences(text)) == expected


def test_myanmars_comma_ends_no_sentence_and_its_section_does() -> None:
    text = "မြန်မာနိုင်ငံ၊ ရန်ကုန်မြို့တွင် မိုးရွာသည်။ နောက်နေ့ နေသာသည်။"
    assert list(profile("my").sentences(text)) == [
        "မြန်မာနိုင်ငံ၊ ရန်ကုန်မြို့တွင် မိုးရွာသည်။",
        "နောက်နေ့ နေသာသည်။",
    ]


def test_greeks_question_mark_ends_a_greek_question_and_a_semicolon_nothing_else() -> None:
    assert GREEK_QUESTION == ";"  # what NFC makes of U+037E
    greek = "Πόσοι άνθρωποι ζουν εδώ; Πολλοί. Πότε ιδρύθηκε;"
    assert list(profile("el").sentences(greek)) == [
        "Πόσοι άνθρωποι ζουν εδώ;",
        "Πολλοί.",
        "Πότε ιδρύθηκε;",
    ]
    for language in ("en", "de", "fr", "ru"):
        text = "The hall opened; Then it closed. It opened again."
        assert profile(language).sentences(text)[0] == "The hall opened; Then it closed."


@pytest.mark.parametrize("mark", STERM, ids=lambda m: f"U+{ord(m):04X}")
def test_every_sentence_terminal_of_unicode_ends_a_sentence(mark: str) -> None:
    text = f"The council met{mark}{'' if ends_without_a_space(mark) else ' '}Nobody came"
    sentences = list(profile("en").sentences(text))
    if mark == MYANMAR_COMMA:
        assert sentences == [text]
    else:
        assert sentences == [f"The council met{mark}", "Nobody came"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SCRIPTS).flatmap(lambda s: st.tuples(st.just(s), sentences(s))))
def test_sentences_of_every_script_end_after_their_marks(
    drawn: tuple[Script, tuple[list[str], str]],
) -> None:
    script, (written, paragraph) = drawn
    split = list(profile(script.language).sentences(paragraph))
    assert split == written
    # Each is a slice of the paragraph, only what separates them left out, and none opens
    # with a mark that ended the one before.
    at = 0
    for sentence in split:
        found = paragraph.find(sentence, at)
        assert found >= 0 and not paragraph[at:found].strip()
        assert not TERMINAL.match(sentence)
        at = found + len(sentence)
    assert at == len(paragraph)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(["สภาเมือง", "อนุมัติเงิน", "ห้องสมุด", "ประธานสภา", "กล่าวว่า"]),
        min_size=1,
        max_size=40,
    ),
    st.lists(st.sampled_from([" ", "  "]), min_size=40, max_size=40),
)
def test_thai_sentences_are_slices_of_their_text(words: list[str], spaces: list[str]) -> None:
    # Thai has no terminal: a sentence is a run of phrases, cut at a space.
    text = "".join(w + s for w, s in zip(words, spaces, strict=False)).strip()
    split = profile("th").sentences(text)
    at = 0
    for sentence in split:
        found = text.find(sentence, at)
        assert found >= 0 and not text[at:found].strip()
        at = found + len(sentence)
    assert at == len(text)
