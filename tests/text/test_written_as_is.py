"""Text is the user's: an article in Persian, Hindi or emoji is stored, shown and quoted with
every joiner, non-joiner and selector it was written with (real model, real SQLite and FAISS,
through the command line)."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
import regex
from text_strategies import slices

from index import Library
from index.cli import main

SCRIPTS = Path(__file__).resolve().parents[1] / "data" / "scripts"
JOINERS = "\u200c\u200d\ufe0f"
TERMINAL = regex.compile(r"[\p{STerm}…]")


def run(library: Library, capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    code = main([*argv, "--json"], library=library)
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def written(name: str) -> list[str]:
    """The file's paragraphs as written (NFC), its title line left out."""
    text = unicodedata.normalize("NFC", (SCRIPTS / name).read_text(encoding="utf-8"))
    return [p.strip() for p in text.split("\n\n")[1:] if p.strip()]


@pytest.mark.parametrize(
    "name", ["persian-footballer.txt", "hindi-library.txt", "emoji-festival.txt"]
)
def test_an_article_is_shown_as_written(
    name: str, library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    added = run(library, capsys, "add", str(SCRIPTS / name))
    assert isinstance(added, dict)
    shown = run(library, capsys, "show", str(added["article_id"]))
    assert isinstance(shown, dict)
    passages = [p["text"] for p in shown["passages"]]
    assert passages == written(name)
    source = (SCRIPTS / name).read_text(encoding="utf-8")
    assert sum(map(" ".join(passages).count, JOINERS)) + sum(
        map(shown["title"].count, JOINERS)
    ) == sum(map(source.count, JOINERS))


def test_a_persian_quote_keeps_its_non_joiners(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    run(library, capsys, "add", str(SCRIPTS / "persian-footballer.txt"))
    answer = run(library, capsys, "ask", "علی رضایی قرارداد خود را برای چند سال تمدید کرد؟")
    assert isinstance(answer, dict) and not answer["abstained"]
    assert "بازیکن حرفه\u200cای" in answer["answer"] and "سه سال" in answer["answer"]
    # The cited passage is the article's own text, character for character.
    assert answer["citations"][0]["text"] == written("persian-footballer.txt")[0]
    # Typed without its non-joiner, the word is still found: the passage that holds it first.
    again = run(library, capsys, "ask", "بازیکن حرفهای استقلال کیست؟")
    assert isinstance(again, dict)
    assert "بازیکن حرفه\u200cای" in again["citations"][0]["text"]


def test_an_emoji_sequence_is_quoted_whole(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    run(library, capsys, "add", str(SCRIPTS / "emoji-festival.txt"))
    answer = run(library, capsys, "ask", "Who did the mayor thank for keeping the pier safe?")
    assert isinstance(answer, dict) and not answer["abstained"]
    assert "👩🏽\u200d🚒 firefighters" in answer["answer"]


@pytest.mark.parametrize(
    ("paragraph", "question"),
    [
        # Chinese and Japanese put nothing between sentences; a space would be a change of the
        # text (and a link to it that no longer matches the page).
        ("图书馆周六开放。会员可以免费借用工具。", "图书馆什么时候开放？"),
        ("図書館は土曜日に開きます。会員は道具を無料で借りられます。", "図書館はいつ開きますか？"),
    ],
)
def test_sentences_written_without_a_space_between_are_quoted_so(
    paragraph: str,
    question: str,
    library: Library,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    article = tmp_path / "article.txt"
    article.write_text(f"工具图书馆\n\n{paragraph}\n", encoding="utf-8")
    run(library, capsys, "add", str(article))
    answer = run(library, capsys, "ask", question)
    assert isinstance(answer, dict) and not answer["abstained"]
    # A sentence this short takes in its neighbour: both, joined as the article joins them.
    assert answer["citations"][0]["quote"] == paragraph
    assert answer["answer"] == f"{paragraph} [1]"


ARTICLES = {
    "ja": "図書館の新しい予定\n\nすごい！！図書館は来週の土曜日に再開します。本当？！市長はそう"
    "言いました。会員は無料で本を借りられます。。。でも予約が必要です。\n\n新しい建物には三百人"
    "が入れます。工事は二年かかりました。\n",
    "el": "Η νέα βιβλιοθήκη της πόλης\n\nΠότε ανοίγει η νέα βιβλιοθήκη; Ανοίγει το Σάββατο στις "
    "δέκα. Ποιος θα την εγκαινιάσει; Ο δήμαρχος της πόλης.\n\nΤο κτίριο χωράει τριακόσια άτομα. "
    "Η κατασκευή κράτησε δύο χρόνια.\n",
    "my": "မြို့တော် စာကြည့်တိုက်သစ်\n\nစာကြည့်တိုက်သစ်၊ မြို့လယ်တွင် စနေနေ့ ဖွင့်မည်။ "
    "အဖွဲ့ဝင်များ၊ စာအုပ်များကို အခမဲ့ ငှားနိုင်သည်။\n\nအဆောက်အအုံသစ်တွင် လူသုံးရာ ဝင်ဆံ့သည်။ "
    "ဆောက်လုပ်ရေး နှစ်နှစ် ကြာခဲ့သည်။\n",
}


def test_each_quote_is_its_passages_text_as_written_in_every_script(
    library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Runs of marks ("！！", "？！", "。。。"), Greek's ";" and Myanmar's comma "၊", through the
    # command line: each citation's quote is (slices of) its passage, never text with a space
    # or a mark the article does not have there.
    for language, text in ARTICLES.items():
        article = tmp_path / f"{language}.txt"
        article.write_text(text, encoding="utf-8")
        run(library, capsys, "add", str(article))
    questions = [
        "図書館はいつ再開しますか？",
        "会員は本をどう借りられますか？",
        "Πότε ανοίγει η νέα βιβλιοθήκη;",
        "Ποιος θα εγκαινιάσει τη βιβλιοθήκη;",
        "စာကြည့်တိုက်သစ် ဘယ်နေ့ ဖွင့်မလဲ။",
    ]
    for question in questions:
        answer = run(library, capsys, "ask", question)
        assert isinstance(answer, dict) and not answer["abstained"], question
        for citation in answer["citations"]:
            assert slices(citation["quote"], citation["text"]), citation
            assert not TERMINAL.match(citation["quote"]), citation
        assert answer["citations"][0]["quote"] in answer["answer"]
