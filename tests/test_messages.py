"""The bot's own words in every locale: the template holds every marked message, every
catalogue translates each one (placeholders, commands and Discord markup intact, the same word
for a source throughout), and a question gets its own language's locale."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from babel.messages.catalog import Message
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from index.answers.compose import ABSTAIN_TEXT
from index.cli.output import render_answer
from index.messages import LOCALES, discord_locale, env_locale, question_locale, translate
from index.messages.catalogue import FOLDER, messages, number, plurals, translate_count
from index.records import Answer, Citation

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "index" / "messages" / "articlebot.pot"
TRANSLATED = [loc for loc in LOCALES if not loc.startswith("en")]
FIELD = re.compile(r"\{[a-z_]+\}")
COMMAND = re.compile(r"/[a-z]+(?: [a-z]+:)?")
# Two locales speak one language's words where their catalogues say so.
SAME_LANGUAGE = {"es-419": "es-ES"}


def _marked() -> set[str]:
    """Every message marked with N_ (or NP_, by its singular) in the package and the bot, as
    `pybabel extract` finds them."""
    found = set()
    for folder in ("index", "bot"):
        keywords = {"N_": None, "NP_": (1, 2)}
        for _, _, message, *_ in extract_from_dir(ROOT / folder, keywords=keywords):
            found.add(str(message[0] if isinstance(message, tuple) else message))
    return found


def _template() -> list[Message]:
    with TEMPLATE.open("rb") as pot:
        return [m for m in read_po(pot) if m.id]


def _singular(message: Message) -> str:
    return str(message.id[0] if isinstance(message.id, tuple | list) else message.id)


def test_the_template_holds_every_marked_message() -> None:
    template = {_singular(m) for m in _template()}
    assert _marked() == template  # run `make messages` after marking or changing one


def _keeps_markup(locale: str, english: str, theirs: str) -> None:
    assert theirs.strip(), (locale, english)
    # A short word may read the same in another language ("Index", "Model"); a sentence not.
    assert theirs != english or len(english) <= 12 or english == "Sources", (locale, english)
    assert sorted(FIELD.findall(theirs)) == sorted(FIELD.findall(english)), (locale, english)
    assert COMMAND.findall(theirs) == COMMAND.findall(english), (locale, english)
    for mark in ("**", "`", "[", "@", "<#", "||"):
        assert theirs.count(mark) == english.count(mark), (locale, english, mark)


@pytest.mark.parametrize("locale", TRANSLATED)
def test_every_catalogue_translates_every_message_keeping_its_markup(locale: str) -> None:
    template = _template()
    assert (FOLDER / locale.replace("-", "_") / "LC_MESSAGES" / "articlebot.po").is_file()
    translated = messages(locale)
    singles = [str(m.id) for m in template if not isinstance(m.id, tuple | list)]
    assert sorted(translated) == sorted(singles), "untranslated or fuzzy messages"
    for english, theirs in translated.items():
        _keeps_markup(locale, english, theirs)
    # Messages with a count: every plural form the locale's rule names, each with its markup.
    forms, rule = plurals(locale)
    counted = [m for m in template if isinstance(m.id, tuple | list)]
    assert sorted(forms) == sorted(_singular(m) for m in counted), "untranslated plural forms"
    needed = 1 + max(rule(n) for n in range(0, 1_000))
    for message in counted:
        theirs = forms[_singular(message)]
        assert len(theirs) == needed, (locale, message.id)
        for index, form in enumerate(theirs):
            # A form may leave the number out ("the last day") only where it is the form of
            # one alone; a form that 21 also takes must say which.
            english = str(message.id[1])
            if "{count}" not in form:
                assert [n for n in range(1_000) if rule(n) == index] == [1], (locale, form)
                english = str(message.id[0])
            _keeps_markup(locale, english, form)
    # One word for a source: the heading's word is in the other headings that name sources.
    word = translated["Sources"]
    assert translated["Sources:"].startswith(word[:3]) or word in translated["Sources:"]


@pytest.mark.parametrize("locale", TRANSLATED)
def test_each_plural_form_is_the_one_its_count_reads(locale: str) -> None:
    """The form a count gets follows the locale's rule: 1, 2, 5 and 21 articles, each in the
    form the catalogue gives that count."""
    forms, rule = plurals(locale)
    message = ("{count} article, newest first", "{count} articles, newest first")
    for count in (1, 2, 5, 21):
        said = translate_count(locale, message, count)
        assert said == forms[message[0]][rule(count)].format(count=number(count, locale))


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


# What operators read (start-up, /healthz, /metrics, settings errors, log lines) stays English,
# as the log and the docs are; everything a member reads is marked.
OPERATOR_MODULES = {
    "__init__.py",
    "__main__.py",
    "activity.py",
    "config.py",
    "health.py",
    "healthcheck.py",
    "metrics.py",
}
# Two words of letters: a phrase someone reads, not an identifier or a command in backticks.
PHRASE = re.compile(r"[^\W\d_]{2,}\s+[^\W\d_]{2,}")
BACKTICKED = re.compile(r"`[^`]*`")


def _unmarked_phrases(path: Path) -> list[tuple[int, str]]:
    """String literals of `path` that hold a phrase and are neither a docstring, nor marked
    (N_, NP_), nor a log line's or a regular expression's."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    exempt: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            exempt.add(id(body[0].value))  # a docstring
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            owner = getattr(func.value, "id", "") if isinstance(func, ast.Attribute) else ""
            if name in ("N_", "NP_", "compile") or owner == "log":
                exempt.update(id(sub) for sub in ast.walk(node))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if id(node) not in exempt and PHRASE.search(BACKTICKED.sub("", node.value))
    ]


def test_every_phrase_the_bot_says_to_members_is_marked_for_the_catalogue() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {text[:80]!r}"
        for path in sorted((ROOT / "bot").rglob("*.py"))
        if path.name not in OPERATOR_MODULES
        for line, text in _unmarked_phrases(path)
    ]
    assert found == []  # mark each with N_ (or NP_) and run `make messages`


def test_a_catalogue_s_broken_placeholder_falls_back_to_the_english_sentence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A slip in a catalogue (a field renamed, a stray brace) costs the translation, never the
    message: the member reads the English sentence rather than an error."""
    slipped = {"Page {page} of {pages}": "Seite {Seite} von {pages", "Sources": "Quellen"}
    monkeypatch.setattr("index.messages.catalogue.messages", lambda locale: slipped)
    assert translate("de", "Page {page} of {pages}", page=2, pages=3) == "Page 2 of 3"
    assert translate("de", "Sources") == "Quellen"
