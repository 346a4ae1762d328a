"""What a question asks for, where news keeps its facts, and when not to answer at all.

Runs on texts the project carries (the demo article, stories written for these tests), through
the real add and ask paths, on every int8 export this kind of CPU runs and on torch fp32.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from exports import ALL_EMBEDDINGS

from index import Library
from index.answers.compose import ABSTAIN_OTHER_LANGUAGE, ABSTAIN_TEXT
from index.embedding.embedder import Embedder
from index.ingest.readers import read_path
from index.search.language import is_english, names_and_numbers
from index.search.question_kinds import expected, supplies

DEMO = Path(__file__).resolve().parents[2] / "index" / "demo" / "tool-library.md"

DATA = Path(__file__).resolve().parents[1] / "data"
# A news story in the usual order: the facts in the lede, their words repeated further down.
FLOOD = DATA / "flood-story.txt"
# A paragraph that defines its subject in one sentence and gives its size in the next.
FOREST = DATA / "forest-article.txt"
# Posts as a community writes them: lower case, "lol", "bc", "tho", updates and edits.
POSTS = sorted((DATA / "posts").glob("*.txt"))
# Asked as people ask in a channel, each with the fact its answer must quote.
INFORMAL_FACTS = [
    ("when does the last bus leave downtown now", "11:40"),
    ("how much is the bus fare", "$2.50"),
    ("why is the 42 being rerouted", "water main"),
    ("how much was the deposit", "$1800"),
    ("how long does the landlord have to send an itemized list", "30 days"),
    ("what can i do if the landlord missed the deadline", "small claims"),
    ("what was the marathon time", "4:12"),
    ("how long was the marathon training", "18 weeks"),
    ("what caused the blister", "new socks"),
    ("how often did they take gels", "every 45 min"),
    ("why are the tomatoes splitting", "watering"),
    ("what helps keep soil moisture even", "mulching"),
    ("which tomatoes are fine", "beefsteaks"),
    ("what was the council vote on the dog park", "5-2"),
    ("where will the dog park be built", "Riverside"),
    ("how much does the dog park cost", "$340k"),
    ("when does construction start", "March"),
    ("what fixed the crashes in games", "BIOS"),
]


@pytest.fixture(scope="module", params=ALL_EMBEDDINGS)
def stories(
    request: pytest.FixtureRequest,
    load_embedding: Callable[[str], Embedder],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Library]:
    """The demo, the news story and the article; the collection "posts" has the posts too."""
    library = Library(tmp_path_factory.mktemp("stories"), embedder=load_embedding(request.param))
    for path in [DEMO, FLOOD, FOREST]:
        library.collection().add(read_path(path))
    for path in [DEMO, FLOOD, FOREST, *POSTS]:
        library.collection("posts").add(read_path(path))
    yield library
    library.close()


def test_questions_about_informal_posts_are_answered_with_the_fact(stories: Library) -> None:
    # Chatty text meets a question with a lower cosine than an encyclopedia does; the answer
    # must still come, not a polite refusal.
    for question, fact in INFORMAL_FACTS:
        answer = stories.collection("posts").ask(question)
        assert not answer.abstained, question
        assert fact.casefold() in answer.answer.casefold(), question


def test_news_facts_are_taken_from_the_lede_not_from_paragraphs_that_repeat_its_words(
    stories: Library,
) -> None:
    answer = stories.collection().ask("How many residents had to leave their homes?")
    assert not answer.abstained
    assert "3,000" in answer.answer
    # The figure is quoted from the lede, which states it, and cited as such.
    (cited,) = [c for c in answer.citations if "3,000" in c.quote]
    assert cited.title == "Marlow flood forces thousands from their homes"
    assert cited.paragraph == 1


def test_a_question_in_the_present_tense_finds_the_sentence_in_the_past(stories: Library) -> None:
    # "leave" and "left" share no stem: only their base form joins them (word_forms.py).
    answer = stories.collection().ask("Where were residents who leave their homes taken?")
    assert not answer.abstained
    assert "sports hall on Mill Lane" in answer.answer


def test_a_question_for_a_figure_quotes_the_sentence_that_holds_it(stories: Library) -> None:
    answer = stories.collection().ask("How big is the Kestrel Forest?")
    assert not answer.abstained
    assert "4,200 square kilometres" in answer.answer


def test_a_question_for_a_time_quotes_the_sentence_with_the_time(stories: Library) -> None:
    answer = stories.collection().ask("When did logging in the Kestrel Forest end?")
    assert not answer.abstained
    assert "1988" in answer.answer


@pytest.mark.parametrize(
    "question", ["help", "@bot help", "who founded Warsaw?", "thanks!", "What can you do?"]
)
def test_one_common_word_in_common_is_not_an_answer(stories: Library, question: str) -> None:
    answer = stories.collection().ask(question)
    assert answer.abstained
    assert answer.answer == ABSTAIN_TEXT


def test_a_question_in_another_language_finds_the_names_it_shares(stories: Library) -> None:
    answer = stories.collection().ask("Wer ist Dana Whitfield und was hat sie gezählt?")
    assert answer.citations
    assert any("eleven lawnmowers" in c.text for c in answer.citations[:3])
    if answer.abstained:  # then it says why it may have failed
        assert answer.answer == ABSTAIN_OTHER_LANGUAGE


def test_a_question_in_another_language_that_finds_nothing_says_the_articles_are_english(
    stories: Library,
) -> None:
    answer = stories.collection().ask("¿Cuál es la receta del pan de plátano?")
    assert answer.abstained
    assert answer.answer == ABSTAIN_OTHER_LANGUAGE


def test_question_kinds_and_the_sentences_that_supply_them() -> None:
    assert expected("How many people died?") == "number"
    assert expected("When did the river flood?") == "time"
    assert expected("Who led the project?") == "person"
    assert expected("Where is the library?") == "place"
    assert expected("What did the mayor call broken?") == "quote"
    assert expected("What is a tool library?") is None
    assert supplies("About 3,000 residents left.", "number", "How many residents left?")
    assert not supplies("They left in 2014.", "number", "How many residents left?")
    assert supplies("They kept the $1800 deposit.", "number", "How much was the deposit?")
    assert not supplies("Residents left.", "number", "How many residents left?")
    # A name the question already holds is not an answer to "who".
    assert not supplies("It was Calder's idea.", "person", "Was it Calder's idea, who said?")
    assert supplies("The idea was Ruth Calder's.", "person", "Whose idea was it?")
    assert supplies("They met in Marlow on Tuesday.", "place", "Where did they meet?")
    assert supplies('"We told them to leave," she said.', "quote", "What did she say?")


def test_languages_are_told_apart_and_short_english_stays_english() -> None:
    for english in [
        "When did Tesla die?",
        "who was murdered",
        "Tesla",
        "Kuranyi goals Schalke",
        "What is the House of Commons?",
        "Kuranyi Scores: How Many Goals Did He Get?",  # Title Case holds no names to set aside
        "WHO WON THE GAME",
    ]:
        assert is_english(english), english
    for other in [
        "¿Cuándo murió Tesla?",
        "Wer hat den Super Bowl gewonnen?",
        "wo ist das Schiff?",
        # English names hold English words, and the question is still German.
        "Was macht Doctor Who, wenn sein Körper verwundet wird?",
        "Welche School of Public Policy fand ihr Zuhause in dem Gebäude?",
        # The identifier splits it between Indonesian and Malay, each unsure; together sure.
        "Perpustakaan alat itu ada di jalan apa?",
        "Apa ibu kota Australia?",
    ]:
        assert not is_english(other), other
    assert (
        names_and_numbers("¿Cuándo murió Tesla en Nueva York en 1943?") == "Tesla Nueva York 1943"
    )
