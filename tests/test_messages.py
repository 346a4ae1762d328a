"""The bot's own words in every locale: the template holds every marked message, every
catalogue translates each one (placeholders, commands and Discord markup intact, the same word
for a source throughout), and a question gets its own language's locale."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from index.answers.compose import ABSTAIN_TEXT
from index.cli.output import render_answer
from index.messages import LOCALES, discord_locale, env_locale, question_locale, translate
from index.messages.catalogue import FOLDER, messages
from index.records import Answer, Citation

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "index" / "messages" / "articlebot.pot"
TRANSLATED = [loc for loc in LOCALES if not loc.startswith("en")]
FIELD = re.compile(r"\{[a-z_]+\}")
COMMAND = re.compile(r"/[a-z]+(?: [a-z]+:)?")
# Two locales speak one language's words where their catalogues say so.
SAME_LANGUAGE = {"es-419": "es-ES"}


def _marked() -> set[str]:
    """Every message marked with N_ in the package and the bot, as `pybabel extract` finds them."""
    return {
        str(message)
        for folder in ("index", "bot")
        for _, _, message, *_ in extract_from_dir(ROOT / folder, keywords={"N_": None})
    }


def test_the_template_holds_every_marked_message() -> None:
    with TEMPLATE.open("rb") as pot:
        template = {str(m.id) for m in read_po(pot) if m.id}
    assert _marked() == template  # run `make messages` after marking or changing one


@pytest.mark.parametrize("locale", TRANSLATED)
def test_every_catalogue_translates_every_message_keeping_its_markup(locale: str) -> None:
    with TEMPLATE.open("rb") as pot:
        template = [str(m.id) for m in read_po(pot) if m.id]
    assert (FOLDER / locale.replace("-", "_") / "LC_MESSAGES" / "articlebot.po").is_file()
    translated = messages(locale)
    assert sorted(translated) == sorted(template), "untranslated or fuzzy messages"
    for english, theirs in translated.items():
        assert theirs.strip() and theirs != english or english == "Sources", (locale, english)
        assert FIELD.findall(theirs) == FIELD.findall(english), (locale, english)
        assert COMMAND.findall(theirs) == COMMAND.findall(english), (locale, english)
        for mark in ("**", "`", "[", "@"):
            assert theirs.count(mark) == english.count(mark), (locale, english, mark)
    # One word for a source: the heading's word is in the other headings that name sources.
    word = translated["Sources"]
    assert translated["Sources:"].startswith(word[:3]) or word in translated["Sources:"]


@pytest.mark.parametrize("locale", TRANSLATED)
def test_each_catalogue_s_own_decline_reads_as_its_language(locale: str) -> None:
    """The locale chosen for a question, tried on each catalogue's own sentences."""
    decline = translate(locale, ABSTAIN_TEXT)
    assert question_locale(decline) == SAME_LANGUAGE.get(locale, locale)


def test_the_command_line_frame_is_in_the_question_s_language_or_lang_s() -> None:
    cited = Citation(1, 7, "الفيضانات في الجنوب", None, 4, "text", "quote", 0.8)
    declined = Answer("¿Cuántos gramos de harina?", ABSTAIN_TEXT, True, [cited])
    out = render_answer(declined, question_locale(declined.question))
    assert "Pasajes más cercanos:" in out and "Closest passages:" not in out
    # The numbering stays whole beside a right-to-left title.
    assert "[1] الفيضانات في الجنوب, ¶4" in out
    assert question_locale("ok?", env_locale({"LANG": "pt_BR.UTF-8"})) == "pt-BR"
    assert question_locale("ok?", env_locale({"LANG": "C.UTF-8"})) == "en-US"
    assert env_locale({"LC_MESSAGES": "zh_TW.UTF-8", "LANG": "de_DE"}) == "zh-TW"
    assert discord_locale("es-419") == "es-419" and discord_locale("en-GB") == "en-GB"
    assert discord_locale("xx-YY", "fr") == "fr"


def test_an_article_s_own_text_is_never_translated() -> None:
    """Only the bot's own sentences are looked up; an article's text that happens to read like
    one of them is not the bot's, and a message with braces is not formatted."""
    assert translate("de", "Sources of {the river}") == "Sources of {the river}"
    assert translate("ja", "Sources") == "出典"
