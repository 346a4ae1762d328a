"""Misspelt question words: corrected to the articles' nearest word, and nothing else touched."""

from __future__ import annotations

import pytest

from index import Library
from index.search import spelling
from index.search.bm25_index import KeywordIndex
from index.search.spelling import corrected

TEXTS = [
    "He was accused of being an accessory to murder at the Sobibor camp.",
    "The court sentenced him to a life sentence in 2011.",
    "The military transport plane crashed near the border; the plane carried 40 soldiers.",
    "The planet was seen by an astronomer in the north.",
    "Workers at the port went on strike over pay.",
    "A second plane landed safely at the port.",
    "The plans for the new terminal were approved.",
    "Passengers had to wait an hour.",
]


@pytest.fixture(scope="module")
def keywords() -> KeywordIndex:
    return KeywordIndex(list(range(len(TEXTS))), TEXTS, ["en"] * len(TEXTS))


@pytest.mark.parametrize(
    ("question", "meant"),
    [
        ("Who was accused of being an accesory to murder?", "accessory"),  # a letter missing
        ("What was the length of his sentaence?", "sentence"),  # a letter too many
        ("Where did the transport palne crash?", "plane"),  # two letters swapped
        ("Where did the transport plame crash?", "plane"),  # a letter replaced
    ],
)
def test_a_misspelt_word_becomes_the_word_the_articles_use(
    keywords: KeywordIndex, question: str, meant: str
) -> None:
    assert meant in corrected(question, keywords.frequencies).rstrip("?").split()


def test_the_word_most_passages_hold_wins_among_near_words(keywords: KeywordIndex) -> None:
    # "planx" is one letter from "plane" (two passages) and from "plans" (one).
    assert (
        corrected("Where did the planx land?", keywords.frequencies) == "Where did the plane land?"
    )


@pytest.mark.parametrize(
    "question",
    [
        "What facet of the trial was new?",  # an English word the articles lack, not a typo
        "Who founded Warsaw?",  # a name the articles lack: the story is not there
        "Did Sobibr close?",  # a capitalized word is taken as a name, as typed
        "Why couldn't the strikers meet?",  # a contraction's halves are not words
        "Was the prt open?",  # too short to guess which word was meant
        "What did the astronomer see?",  # known words are left alone
        "Wann fand der Streik im Hafen statt?",  # another language: "fand" is not "find"
        "waht did the plane carry?",  # "what" is as near as the articles' "wait"
        "?!",
    ],
)
def test_real_words_names_and_short_words_stay_as_typed(
    keywords: KeywordIndex, question: str
) -> None:
    assert corrected(question, keywords.frequencies) == question


def test_a_question_full_of_misspellings_costs_two_lookups_of_bounded_size(
    keywords: KeywordIndex,
) -> None:
    calls: list[int] = []

    def counted(terms: list[str]) -> dict[str, int]:
        calls.append(len(terms))
        return keywords.frequencies(terms)

    question = "the " * 300 + " ".join(["accesory plaen sentaence strikke workerss"] * 40)
    respelt = corrected(question + " " + "x" * 2_000, counted)
    assert "accessory plane sentence" in respelt
    assert "strikke" in respelt  # past the first three, words stay as typed
    assert len(calls) == 2
    assert calls[1] <= 3 * (55 * 9 + 25)  # three words' edits, each at most nine letters


def test_a_process_serving_only_other_languages_never_reads_the_english_word_list(
    test_library: Library,
) -> None:
    """The word list (37 MB) is English's alone: a bot warming up for German articles, and
    asked in German, leaves it unread; the first English collection reads it."""
    spelling._english.cache_clear()
    german = test_library.collection("guild-1")
    german.add_text(
        "Stadtrat genehmigt Renovierung\n\nDer Stadtrat hat im März 18.000 Dollar für die "
        "Renovierung der alten Feuerwache bewilligt. Das Geld bezahlt neue Regale, eine "
        "Werkbank und eine Rampe am Eingang, sagte die Bürgermeisterin am Dienstag."
    )
    test_library.warm_up()
    german.ask("Wie viel Geld hat der Stadtrat für die Renovierung bewiligt?")
    assert spelling._english.cache_info().currsize == 0

    test_library.collection("guild-2").add_text(
        "Council approves renovation\n\nThe town council approved $18,000 for the renovation "
        "of the old fire station in March, the mayor said on Tuesday."
    )
    test_library.warm_up()
    assert spelling._english.cache_info().currsize == 1
