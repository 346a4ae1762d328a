"""Every language: each article's language identified and kept, its words analysed in it, a
question read in the articles' language or leaning on the embedding, and the English rules kept
to English. The fast tier: the deterministic test embedder, real SQLite, FAISS and BM25."""

from __future__ import annotations

import json

import numpy as np
import pytest

from index import Library
from index.cli import main
from index.search.language import read_question
from index.search.relevance import beyond_chance
from index.text.analysis import analyze
from index.text.sentences import split_sentences

ARTICLES = {
    "de": (
        "Die Brücke über den Rhein",
        [
            "Die neue Brücke über den Rhein wurde im Jahr 1998 eröffnet und kostete 40 Millionen "
            "Euro. Sie verbindet die beiden Hälften der Stadt.",
            "Jeden Tag überqueren rund 30.000 Fahrzeuge die Brücke, dazu viele Radfahrer.",
        ],
    ),
    "zh": (
        "长江大桥",
        [
            "武汉长江大桥于1957年建成通车，是长江上第一座大桥。大桥全长1670米。",
            "大桥分为上下两层，上层是公路，下层是铁路。每天有数万辆汽车通过。",
        ],
    ),
    "ar": (
        "جسر الملك فهد",
        [
            "يربط جسر الملك فهد بين المملكة العربية السعودية والبحرين، وقد افتتح عام 1986.",
            "يبلغ طول الجسر خمسة وعشرين كيلومترا، ويعبره ملايين المسافرين كل عام.",
        ],
    ),
    "en": (
        "The harbour bridge",
        [
            "The harbour bridge opened in 1932 after eight years of work by 1,400 men.",
            "Climbing tours of the arch began in 1998 and have taken four million people up.",
        ],
    ),
}


@pytest.fixture
def collection(test_library: Library):  # type: ignore[no-untyped-def]
    collection = test_library.collection("languages")
    for title, paragraphs in ARTICLES.values():
        collection.add_text("\n\n".join(paragraphs), title=title)
    return collection


def test_each_article_keeps_the_language_it_is_written_in(collection, capsys) -> None:  # type: ignore[no-untyped-def]
    languages = {a.title: a.language for a in collection.articles()}
    assert languages == {title: lang for lang, (title, _) in ARTICLES.items()}
    assert collection.backend.languages() == {"de": 1, "zh": 1, "ar": 1, "en": 1}


def test_list_and_show_print_the_language(test_library: Library, capsys) -> None:  # type: ignore[no-untyped-def]
    collection = test_library.collection("default")
    collection.add_text("\n\n".join(ARTICLES["zh"][1]), title=ARTICLES["zh"][0])
    assert main(["list", "--json"], test_library) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [a["language"] for a in listed] == ["zh"]
    assert main(["show", str(listed[0]["id"]), "--json"], test_library) == 0
    assert json.loads(capsys.readouterr().out)["language"] == "zh"


def test_each_language_is_analysed_by_its_own_rules() -> None:
    # Snowball stems where there is one: the forms of a word meet.
    assert analyze("Brücken", "de") == analyze("Brücke", "de")
    assert analyze("мостами", "ru") == analyze("мост", "ru")
    # Arabic: the marks and letter variants readers do not tell apart, gone.
    assert analyze("مُحَمَّد", "ar") == analyze("محمد", "ar")
    assert analyze("أحمد", "ar") == analyze("احمد", "ar")
    # Scripts without spaces in pairs of characters: a word is found however it is cut.
    assert {"长江", "大桥"} <= set(analyze("长江大桥", "zh"))
    assert {"東京", "京都"} <= set(analyze("東京都", "ja"))
    # Every script's digits are the same numbers: an Arabic question's year meets an English text's.
    assert analyze("عام ١٩٨٦", "ar")[-1] == analyze("in 1986", "en")[-1] == "1986"
    # Hindi keeps its words whole (Python's \w would cut them at each vowel sign).
    assert len(analyze("हिन्दी भाषा", "hi")) == 2
    # English stopwords and base forms are English only: "die" is a German article, and in a
    # German text "said" is no English verb.
    assert analyze("die Brücke", "de")[0] == "die"
    assert "die" in analyze("When did Tesla die?", "en")
    assert analyze("who said it", "en") == ["say"]
    assert analyze("said", "de") == ["said"]


def test_a_question_is_read_in_the_articles_language_or_leans_on_the_embedding() -> None:
    present = {"en": 3, "de": 2, "zh": 1}
    assert read_question("Wann wurde die Brücke eröffnet?", present).language == "de"
    assert read_question("大桥是哪一年建成的？", present).language == "zh"
    assert read_question("When did the bridge open?", present).english
    # Asked in a language no article is written in: only names and numbers reach the keywords.
    spanish = read_question("¿Cuándo se inauguró el puente?", present)
    assert not spanish.native and not spanish.english
    # Searched with the articles' analysis; its own language moves its vector (its model's
    # table of languages, embedding/calibration.py).
    assert (spanish.language, spanish.asked_in) == ("en", "es")
    # Too short to tell, in the articles' script: read as theirs.
    assert read_question("Brücke?", {"de": 1}).native
    assert not read_question("大桥？", {"en": 1}).native


def test_questions_in_each_language_find_their_paragraph(collection) -> None:  # type: ignore[no-untyped-def]
    for question, title, paragraph in [
        ("Wie viele Fahrzeuge überqueren die Brücke jeden Tag?", ARTICLES["de"][0], 2),
        ("武汉长江大桥是哪一年建成通车的？", ARTICLES["zh"][0], 1),
        ("كم يبلغ طول الجسر؟", ARTICLES["ar"][0], 2),
        ("When did the climbing tours begin?", ARTICLES["en"][0], 2),
    ]:
        answer = collection.ask(question)
        best = answer.citations[0]
        assert (best.title, best.paragraph) == (title, paragraph), question
        assert not answer.abstained, question


def test_the_english_spelling_rule_leaves_other_languages_as_typed(collection) -> None:  # type: ignore[no-untyped-def]
    # "Fahrzeuge" is no English word and the articles hold it: English spelling correction
    # would have been wrong to touch any word of a German question.
    question = "Wie viele Fahrzeuge überqueren die Brücke jeden Tag?"
    assert collection.retriever.corrected(question) == question


def test_sentences_end_as_each_language_ends_them() -> None:
    assert split_sentences("北京是首都。上海很大！", "zh") == ["北京是首都。", "上海很大！"]
    assert split_sentences("यह एक वाक्य है। यह दूसरा है।", "hi") == ["यह एक वाक्य है।", "यह दूसरा है।"]
    assert split_sentences("هل هذا سؤال؟ نعم.", "ar") == ["هل هذا سؤال؟", "نعم."]
    assert split_sentences("Türkiye büyük. Başkenti Ankara.", "tr") == [
        "Türkiye büyük.",
        "Başkenti Ankara.",
    ]


@pytest.mark.parametrize("storage", ["embedded", "postgres"], indirect=True)
def test_both_stores_keep_languages_and_search_each_in_its_own(
    make_stored_library,  # type: ignore[no-untyped-def]
) -> None:
    """On SQLite and on PostgreSQL (its keyword postings derived with the same analysis), with
    the real model: each question in its language finds its paragraph, and a rebuild keeps it."""
    collection = make_stored_library().collection("languages")
    for title, paragraphs in ARTICLES.values():
        collection.add_text("\n\n".join(paragraphs), title=title)
    assert collection.backend.languages() == {"de": 1, "zh": 1, "ar": 1, "en": 1}
    questions = [
        ("Wie viele Fahrzeuge überqueren die Brücke jeden Tag?", ARTICLES["de"][0], 2),
        ("武汉长江大桥是哪一年建成通车的？", ARTICLES["zh"][0], 1),
        ("كم يبلغ طول الجسر؟", ARTICLES["ar"][0], 2),
        # Asked in Spanish, which no article is written in: the embedding finds it. (Both the
        # Rhine's bridge and the Yangtze's say how many cross each day: it names the Rhine.)
        ("¿Cuántos vehículos cruzan cada día el puente sobre el Rin?", ARTICLES["de"][0], 2),
    ]
    for _ in range(2):
        for question, title, paragraph in questions:
            best = collection.ask(question).citations[0]
            assert (best.title, best.paragraph) == (title, paragraph), question
        collection.rebuild()


def test_word_evidence_counts_only_beyond_what_any_text_holds_by_chance() -> None:
    assert beyond_chance(0.9, 0.0) == pytest.approx(0.9)  # words no other text holds
    assert beyond_chance(0.75, 0.5) == pytest.approx(0.5)
    assert beyond_chance(0.4, 0.5) == 0.0  # less than chance is no evidence, not less than none
    assert beyond_chance(1.0, 1.0) == 0.0


def test_the_collections_centre_is_the_mean_of_its_vectors_and_follows_them(
    test_library: Library,
) -> None:
    collection = test_library.collection("centre")
    stored = collection.store

    def mean_of_stored() -> np.ndarray:
        model = stored.collection_model("centre")
        assert model is not None
        return np.concatenate([v for _, v in stored.iter_embeddings("centre", model[1])]).mean(0)

    assert collection.backend.centre() is None  # nothing stored yet
    for title, paragraphs in list(ARTICLES.values())[:2]:
        collection.add_text("\n\n".join(paragraphs), title=title)
    np.testing.assert_allclose(collection.backend.centre(), mean_of_stored(), atol=1e-6)
    for title, paragraphs in list(ARTICLES.values())[2:]:
        collection.add_text("\n\n".join(paragraphs), title=title)
    np.testing.assert_allclose(collection.backend.centre(), mean_of_stored(), atol=1e-6)
