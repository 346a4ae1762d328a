"""Questions in other languages than English that ask how many or when, who or where, and the
sentences that answer them with a number or a name (text/question_words.py), as the ranking of
passages across languages and the quote's chances read them."""

from __future__ import annotations

import pytest

from index.answers.quote_choice import _supplied
from index.text.question_words import asks_for, new_number, supplies


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("Wie viele Einwohner hat Warschau?", "de"),
        ("In welchem Jahr wurde die Brücke gebaut?", "de"),
        ("Сколько человек живёт в Варшаве?", "ru"),
        ("كم عدد سكان وارسو؟", "ar"),
        ("Varşova'da kaç kişi yaşıyor?", "tr"),
        ("Warszawa có bao nhiêu dân?", "vi"),
        ("Πόσοι άνθρωποι ζουν στη Βαρσοβία;", "el"),
        ("华沙有多少人口？", "zh"),
        ("ワルシャワの人口はいくつですか", "ja"),
        ("¿Cuándo se fundó Varsovia?", "es"),
        ("वारसॉ की जनसंख्या कितनी है?", "hi"),
        ("วอร์ซอมีประชากรกี่คน", "th"),
    ],
)
def test_a_question_that_asks_how_many_or_when_is_read_in_its_language(
    question: str, language: str
) -> None:
    assert asks_for(question, language) == "number"


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("Wer gründete Warschau?", "de"),  # who, not how many
        ("Кто основал Варшаву?", "ru"),
        ("Ile to jest?", "de"),  # Polish question words are Polish only
        ("Wie viele Einwohner hat Warschau?", "xx"),  # a language with no entry reads none
    ],
)
def test_other_questions_ask_for_no_number(question: str, language: str) -> None:
    assert asks_for(question, language) != "number"


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("彼はいつも遅れますか", "ja"),  # いつも, always: no "when"
        ("いつか行きますか", "ja"),  # いつか, some day
        ("あいつは誰ですか", "ja"),  # あいつ, that one
        ("何人か来ましたか", "ja"),  # 何人か, some people
        ("几乎所有人都来了吗？", "zh"),  # 几乎, almost: no "how many"
        ("茶几在哪里？", "zh"),  # 茶几, a tea table
        ("그는 언제나 늦나요?", "ko"),  # 언제나, always
        ("몇몇 사람이 왔나요?", "ko"),  # 몇몇, several
        ("ไม่กี่คนมาหรือ", "th"),  # ไม่กี่, few
    ],
)
def test_a_question_word_inside_a_longer_word_asks_nothing(question: str, language: str) -> None:
    assert asks_for(question, language) != "number"


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("図書館はいつから開いていますか", "ja"),  # いつから, since when
        ("いつも開いている図書館はいつ閉まりますか", "ja"),  # いつも, then いつ
        ("几乎每个人都知道他来了几次？", "zh"),
        ("有几个人？", "zh"),
        ("언제 열어요?", "ko"),
        ("몇 명이 왔나요?", "ko"),
    ],
)
def test_a_question_word_that_stands_as_a_word_asks(question: str, language: str) -> None:
    assert asks_for(question, language) == "number"


def test_a_number_is_new_only_when_the_question_does_not_hold_it() -> None:
    assert new_number("Die Stadt wurde 1300 gegründet.", "Wann wurde die Stadt gegründet?")
    assert not new_number("Im Jahr 2014 war es kalt.", "Was geschah 2014?")
    assert not new_number("Die Stadt liegt an der Weichsel.", "Wann wurde die Stadt gegründet?")
    assert new_number("تأسست عام ١٣٠٠", "متى تأسست المدينة؟")  # Arabic-Indic digits


def test_the_quote_reads_what_a_question_in_another_language_asks_for() -> None:
    texts = ["Warschau liegt an der Weichsel.", "Warschau hat 1,8 Millionen Einwohner."]
    # A German question that asks how many: the sentence with a number supplies it.
    assert _supplied("Wie viele Einwohner hat Warschau?", texts, False, "de") == [0.0, 1.0]
    # One that does not ask for a number marks nothing.
    assert _supplied("Woran liegt Warschau?", texts, False, "de") == [0.0, 0.0]
    # English questions keep the English rules.
    english = ["Warsaw lies on the Vistula.", "Warsaw has 1.8 million people."]
    assert _supplied("How many people live in Warsaw?", english, True, "en") == [0.0, 1.0]


@pytest.mark.parametrize(
    ("question", "language", "kind"),
    [
        ("Wer erfand den Buchdruck?", "de", "person"),
        ("¿Quién pintó este cuadro?", "es", "person"),
        ("Qui a fondé la ville ?", "fr", "person"),
        ("Кто написал эту книгу?", "ru", "person"),
        ("Хто збудував міст?", "uk", "person"),
        ("Bu köprüyü kim inşa etti?", "tr", "person"),
        ("من بنى الجسر؟", "ar", "person"),
        ("מי בנה את הגשר?", "he", "person"),
        ("पुल किसने बनाया?", "hi", "person"),
        ("この橋を作ったのは誰ですか", "ja", "person"),
        ("누가 이 다리를 지었나요?", "ko", "person"),
        ("谁建造了这座桥？", "zh", "person"),
        ("Ai đã xây cây cầu này?", "vi", "person"),
        ("Siapa yang membangun jembatan itu?", "id", "person"),
        ("Wo steht die Brücke?", "de", "place"),
        ("¿Dónde está el puente?", "es", "place"),
        ("Où se trouve le pont ?", "fr", "place"),
        ("Где находится мост?", "ru", "place"),
        ("Köprü nerede?", "tr", "place"),
        ("أين يقع الجسر؟", "ar", "place"),
        ("橋はどこにありますか", "ja", "place"),
        ("桥在哪里？", "zh", "place"),
        ("Cây cầu ở đâu?", "vi", "place"),
        ("Op welke dag opent de markt? Hoeveel kost het?", "nl", "number"),
    ],
)
def test_who_and_where_are_read_in_the_questions_language(
    question: str, language: str, kind: str
) -> None:
    assert asks_for(question, language) == kind


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("Ποιος ήταν ο πληθυσμός της πόλης;", "el"),  # ποιος: which population, not who
        ("De quoi parle l'article qui est paru hier ?", "fr"),  # qui: "that", not who
        ("من أين جاء الاسم؟", "ar"),  # من أين: from where, read as a place or nothing
        ("誰かが来ましたか", "ja"),  # 誰か, someone
        ("누구나 빌릴 수 있나요?", "ko"),  # 누구나, anyone
        ("Ai Cập nằm ở châu nào?", "vi"),  # Ai Cập, Egypt
    ],
)
def test_a_word_that_only_looks_like_who_asks_for_no_person(question: str, language: str) -> None:
    assert asks_for(question, language) != "person"


def test_a_name_the_question_does_not_hold_supplies_who_or_where() -> None:
    led = "The project was led by volunteer coordinator Dana Whitfield, a retired carpenter."
    counted = "The library started with 412 tools, most of them donated by residents."
    assert supplies(led, "person", "谁领导了这个项目？")
    assert not supplies(counted, "person", "谁领导了这个项目？")  # a number, no name
    # A name the question already holds answers nothing.
    assert not supplies(
        "The bridge crosses the Rhine at Basel.", "place", "Wo liegt Basel am Rhine?"
    )
    assert supplies("Город основал князь Юрий Долгорукий.", "person", "Кто основал город?")
    assert supplies(counted, "number", "Сколько инструментов?")


@pytest.mark.parametrize(
    ("sentence", "question"),
    [
        (
            "The library is open Tuesday and Thursday evenings and Saturdays from 9 a.m.",
            "Perpustakaan alat itu ada di jalan apa?",
        ),
        ("Sie öffnet am Dienstag, im März und im Mai.", "In welcher Straße liegt die Bibliothek?"),
        ("La biblioteca abre el martes y cierra en agosto.", "¿Quién dirigió el proyecto?"),
    ],
)
def test_a_day_or_a_month_is_neither_who_nor_where(sentence: str, question: str) -> None:
    # Days and months are capitalised in English and German, and in Spanish where a sentence
    # begins; the opening hours do not say which street the library is on.
    assert not supplies(sentence, "place", question)
    assert not supplies(sentence, "person", question)


def test_a_street_named_beside_the_days_still_says_where() -> None:
    opening = "The library on Quarry Street is open on Tuesdays and in May."
    assert supplies(opening, "place", "Perpustakaan alat itu ada di jalan apa?")
