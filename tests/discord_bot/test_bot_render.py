"""The pure parts of the Discord layer: rendering within limits, lookups, throttling, errors."""

from __future__ import annotations

import re

import discord
import pytest
from discord import app_commands

from bot.errors import GENERIC, Refused, explain
from bot.lookup import MAX_CHOICES, choices, find_article
from bot.render import (
    EMBED_DESCRIPTION,
    EMBED_TITLE,
    EMBED_TOTAL,
    MESSAGE,
    add_result_text,
    added_by,
    adder_id,
    answer_embed,
    article_pages,
    clip,
    progress_text,
    safe,
    source_line,
)
from bot.work import Throttle
from index import AddResult, Answer, Article, ArticleNotFound, BadInput, Citation

PINGS = re.compile(r"@(everyone|here)|<@[!&]?\d+>")


def citation(n: int, **fields: object) -> Citation:
    values: dict[str, object] = {
        "n": n,
        "article_id": 100 + n,
        "title": f"Article {n}",
        "url": f"https://news.example/{n}",
        "paragraph": n + 3,
        "text": f"Passage {n} text.",
        "quote": f"Passage {n} text.",
        "score": 1.0 / n,
        "site": "news.example",
        "published": "2025-02-20T10:00:00",
        "link": f"https://news.example/{n}#:~:text=Passage%20{n}",
    }
    values.update(fields)
    return Citation(**values)  # type: ignore[arg-type]


def article(n: int, **fields: object) -> Article:
    values: dict[str, object] = {
        "id": n,
        "collection": "guild-1",
        "title": f"Article number {n}",
        "url": None,
        "site": None,
        "author": None,
        "published": None,
        "added_by": "ada (123456789012345678)",
        "added_at": "2025-02-20T10:00:00+00:00",
        "content_hash": "x",
        "source": "text",
        "paragraphs": 3,
        "passages": 3,
        "number": n,
    }
    values.update(fields)
    return Article(**values)  # type: ignore[arg-type]


def within_limits(embed: discord.Embed) -> None:
    assert len(embed.title or "") <= EMBED_TITLE
    assert len(embed.description or "") <= EMBED_DESCRIPTION
    assert len(embed) <= EMBED_TOTAL


def test_source_line_has_number_title_paragraph_site_date_and_fragment_link() -> None:
    line = source_line(citation(1))
    assert line == (
        "**[1]** [Article 1](https://news.example/1#:~:text=Passage%201), "
        "¶4 (news.example, Feb 20, 2025)"
    )


def test_source_line_without_url_is_plain_text() -> None:
    line = source_line(citation(2, url=None, link=None, site=None, published=None))
    assert line == "**[2]** Article 2, ¶5"


def test_answer_embed_lists_only_cited_sources_with_their_numbers() -> None:
    answer = Answer(
        "Who?", "Ada did it. [1] Bob helped. [3]", False, [citation(n) for n in (1, 2, 3)]
    )
    embed = answer_embed(answer)
    text = embed.description or ""
    assert text.startswith("> Ada did it. [1] Bob helped. [3]")  # quoted, not the bot's words
    assert "**[1]**" in text and "**[3]**" in text and "**[2]**" not in text
    assert embed.title == "Who?"


def test_abstention_says_so_and_shows_the_closest_passages() -> None:
    answer = Answer("Unrelated?", "I could not find an answer.", True, [citation(1), citation(2)])
    text = answer_embed(answer).description or ""
    assert text.startswith("I could not find an answer.")
    assert "> Passage 1 text." in text and "> Passage 2 text." in text


def test_abstention_shows_three_closest_passages_of_those_asked_for() -> None:
    answer = Answer(
        "Unrelated?", "I could not find an answer.", True, [citation(n) for n in range(1, 6)]
    )
    text = answer_embed(answer).description or ""
    assert "> Passage 3 text." in text and "Passage 4" not in text and "[4]" not in text


def test_huge_answer_is_trimmed_within_limits_keeping_every_marker() -> None:
    giant = "word " * 20_000
    answer = Answer(
        "q" * 5_000,
        f"Short one. [1] {giant}[2] {giant}[3]",
        False,
        [
            citation(n, title="T" * 2_000, link="https://x.example/#:~:text=" + "a" * 3_000)
            for n in (1, 2, 3)
        ],
    )
    embed = answer_embed(answer)
    within_limits(embed)
    text = embed.description or ""
    assert text.startswith("> Short one. [1]")  # a short sentence is not cut for a long one
    for n in (1, 2, 3):
        assert f" [{n}]" in text and f"**[{n}]**" in text


def test_many_sources_with_huge_urls_fit() -> None:
    cites = [citation(n, url="https://x.example/" + "p" * 5_000, link=None) for n in range(1, 51)]
    answer = Answer("q", " ".join(f"S{n}. [{n}]" for n in range(1, 51)), False, cites)
    within_limits(answer_embed(answer))


@pytest.mark.parametrize(
    "text",
    ["@everyone look", "@here", "hi <@123456789012345678>", "<@&123456789012345678>", "<@!42>"],
)
def test_safe_neutralizes_every_mention(text: str) -> None:
    assert not PINGS.search(safe(text))
    assert "\u200b" in safe(text)


def test_article_text_with_mentions_renders_without_mention_syntax() -> None:
    loud = citation(
        1, title="@everyone news", text="@here <@123456789012345678> <@&98765432109876543>"
    )
    answer = Answer("q", "Hey @everyone and <@123456789012345678>. [1]", False, [loud])
    embed = answer_embed(answer)
    assert not PINGS.search(embed.description or "")
    abstained = answer_embed(Answer("@here?", "None.", True, [loud]))
    assert not PINGS.search((abstained.description or "") + (abstained.title or ""))


def test_clip_marks_the_cut() -> None:
    assert clip("abcdef", 10) == "abcdef"
    assert clip("abcdef", 4) == "abc…"
    assert len(clip("x" * 5000, 2000)) == 2000


def test_add_result_text_is_one_sentence_with_title_site_paragraphs_and_skipped() -> None:
    item = article(
        7, title="Big news", site="news.example", url="https://news.example/a", paragraphs=14
    )
    text = add_result_text(AddResult(item, True, ["Subscribe now", "Share this"]))
    assert text == (
        "Added **Big news** from news.example (#7): 14 paragraphs indexed, 2 lines skipped as "
        "not part of the article. <https://news.example/a>"
    )
    again = add_result_text(AddResult(item, False, []))
    assert "already" in again and "nothing was added" in again


def test_add_result_text_neutralizes_a_loud_title() -> None:
    text = add_result_text(AddResult(article(1, title="@everyone " * 400), True, []))
    assert len(text) <= MESSAGE and not PINGS.search(text)


def test_article_pages_ten_per_page_newest_first_with_adder_and_time() -> None:
    pages = article_pages([article(n) for n in range(25, 0, -1)], "Guild")
    assert len(pages) == 3
    first = pages[0].description or ""
    assert first.splitlines()[0].startswith("`#25`")
    assert "added by <@123456789012345678> <t:" in first
    assert pages[2].footer.text == "Page 3 of 3 · 25 articles, newest first"
    assert all(len(p) <= EMBED_TOTAL for p in pages)
    empty = article_pages([], "Guild")[0].description or ""
    assert "No articles yet" in empty


def test_adder_round_trip() -> None:
    user = discord.Object(123456789012345678)
    user.name = "ada"  # type: ignore[attr-defined]
    assert adder_id(added_by(user)) == 123456789012345678  # type: ignore[arg-type]
    assert adder_id("the CLI") is None and adder_id(None) is None


def test_progress_text() -> None:
    assert progress_text("Re-embedding", 1204, 5000) == "Re-embedding 1,204 / 5,000 passages (24%)"
    assert progress_text("Indexing", 0, 1) == "Indexing…"


def test_throttle_shows_each_new_stage_then_steps_of_five_percent_at_most_once_a_second() -> None:
    now = [0.0]
    throttle = Throttle(interval=1.0, step=5.0, clock=lambda: now[0])
    assert throttle.due("Embedding", 1, 100)  # first report of a stage
    assert not throttle.due("Embedding", 3, 100)  # too small a step
    now[0] = 0.5
    assert not throttle.due("Embedding", 50, 100)  # too soon
    now[0] = 2.0
    assert throttle.due("Embedding", 50, 100)
    assert throttle.due("Indexing", 0, 1)  # a new stage is always shown


def test_choices_filter_by_what_is_typed_and_stop_at_25() -> None:
    articles = [article(n, title=f"Mayor story {n}") for n in range(1, 40)]
    articles.append(article(99, title="The harbor", site="port.example"))
    assert len(choices(articles, "")) == MAX_CHOICES
    assert [c.value for c in choices(articles, "harb")] == ["99"]
    assert [c.value for c in choices(articles, "port.ex")] == ["99"]
    assert choices(articles, "Mayor story 7")[0].value == "7"
    assert all(len(c.name) <= 100 for c in choices([article(1, title="x" * 500)], ""))


def test_find_article_by_id_or_title() -> None:
    articles = [article(1, title="Harbor plan"), article(2, title="Harbor budget")]
    assert find_article(articles, "2").id == 2
    assert find_article(articles, "harbor plan").id == 1
    with pytest.raises(ArticleNotFound, match="Several articles"):
        find_article(articles, "harbor")
    with pytest.raises(ArticleNotFound, match="No article"):
        find_article(articles, "zoo @everyone")


def test_explain_maps_each_failure_to_what_to_do() -> None:
    cooldown = app_commands.CommandOnCooldown(app_commands.Cooldown(1, 30), 12.2)
    assert explain(cooldown) == ("Slow down a little: try again in 13 s.", False)
    missing = app_commands.MissingPermissions(["manage_guild"])
    assert explain(missing)[0] == "You need the Manage Server permission to use this."
    assert explain(app_commands.MissingRole("Editors"))[0].startswith(
        "Only members with the Editors"
    )
    assert explain(BadInput("The text is empty; paste it.")) == (
        "The text is empty; paste it.",
        False,
    )
    assert explain(Refused("No.")) == ("No.", False)
    assert explain(RuntimeError("boom")) == (GENERIC, True)


def test_no_masked_link_in_article_text_or_titles_stays_a_live_link() -> None:
    text = "See [one](https://a.example) and [two](https://b.example), \\[three](https://c.example)"
    shown = safe(text)
    # Every "[" that opens link text is preceded by an odd run of backslashes: shown literally.
    assert not re.search(r"(?<!\\)(?:\\\\)*\[[^\]]*\]\(https?://", shown)
    for label in ("one", "two", "three"):
        assert label in shown


def test_a_refusal_that_repeats_a_huge_input_still_fits_a_message() -> None:
    text, unexpected = explain(BadInput(f"Could not find the site {'a' * 1983}.com; check it."))
    assert not unexpected and len(text) <= 600 and text.endswith("…")


def test_an_answers_title_shows_mentions_as_words_not_numbers() -> None:
    answer = Answer(
        "What did <@123456789012345678> say about <#42>?", "Ada did it. [1]", False, [citation(1)]
    )
    assert answer_embed(answer).title == "What did @someone say about #channel?"


def test_a_declined_answer_suggests_what_to_try_and_invites_no_follow_up() -> None:
    answer = Answer("Unrelated?", "I could not find an answer.", True, [citation(1)])
    embed = answer_embed(answer)
    assert "/articles" in (embed.description or "") and "article:" in (embed.description or "")
    assert embed.footer.text is None


def test_source_lines_name_the_author_and_adds_mention_skipped_lines_only_if_any() -> None:
    line = source_line(citation(1, author="Dana Whitfield"))
    assert "(news.example, Dana Whitfield, Feb 20, 2025)" in line
    clean = AddResult(article(1), added=True, skipped=[])
    assert "skipped" not in add_result_text(clean)
    promo = AddResult(article(1), added=True, skipped=["CLICK HERE FOR THE APP"])
    assert "1 line skipped as not part of the article" in add_result_text(promo)


def test_an_articles_title_is_shown_once_per_answer() -> None:
    same = {"article_id": 7, "title": "A very long title of the one article quoted twice"}
    answer = Answer(
        "Why?",
        "He went there. [1] To sign it. [2]",
        False,
        [citation(1, **same), citation(2, **same)],
    )
    lines = (answer_embed(answer).description or "").splitlines()
    assert lines[-2].startswith("**[1]** [A very long title of the one article quoted twice]")
    assert lines[-1] == "**[2]** [¶5](https://news.example/2#:~:text=Passage%202) of [1]"
