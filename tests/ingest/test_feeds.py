"""Following news feeds, shown and refreshed articles: real HTTP on 127.0.0.1, real add path."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from news_site import STORIES, Site

from index import BadInput, Library, Limits
from index.cli import main


@pytest.fixture
def site() -> Iterator[Site]:
    with Site.serving() as news:
        yield news


@pytest.fixture
def web_library(make_library: Callable[..., Library]) -> Library:
    return make_library(limits=Limits(allow_private_networks=True))


def run(library: Library, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, object]:
    code = main([*argv, "--json"], library=library)
    return code, json.loads(capsys.readouterr().out)


def test_a_followed_feed_adds_its_new_articles_once(
    site: Site, web_library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    code, feed = run(web_library, capsys, "feed", "add", f"{site.base}/feed.xml")
    assert code == 0 and feed["title"] == "Millbrook Weekly" and feed["added"]
    code, polled = run(web_library, capsys, "feed", "poll")
    assert code == 0
    assert polled == {"feeds": 1, "checked": 1, "added": 2, "failed": 0, "errors": []}
    titles = {a.title for a in web_library.collection().articles()}
    assert titles == {STORIES["ferry"][0], STORIES["library"][0]}
    answer = web_library.collection().ask("How much will the ferry terminal cost?")
    assert "80 million dollars" in answer.answer

    _, again = run(web_library, capsys, "feed", "poll")
    assert again["added"] == 0  # nothing new
    site.listed.insert(0, "bridge")
    _, newer = run(web_library, capsys, "feed", "poll")
    assert newer["added"] == 1
    assert len(web_library.collection().articles()) == 3


def test_feeds_are_listed_and_removed_and_their_articles_stay(
    site: Site, web_library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    _, feed = run(web_library, capsys, "feed", "add", f"{site.base}/feed.xml")
    _, same = run(web_library, capsys, "feed", "add", f"{site.base}/feed.xml")
    assert same["feed_id"] == feed["feed_id"] and not same["added"]
    run(web_library, capsys, "feed", "poll")
    _, listed = run(web_library, capsys, "feed", "list")
    assert [f["url"] for f in listed] == [f"{site.base}/feed.xml"]
    assert listed[0]["checked_at"]
    _, removed = run(web_library, capsys, "feed", "remove", str(feed["feed_id"]))
    assert removed["removed"]["feed_id"] == feed["feed_id"]
    _, listed = run(web_library, capsys, "feed", "list")
    assert listed == []
    assert len(web_library.collection().articles()) == 2
    assert main(["feed", "remove", str(feed["feed_id"])], library=web_library) == 1
    assert "no feed" in capsys.readouterr().err


def test_a_page_that_is_not_a_feed_is_refused_with_what_to_do(
    site: Site, web_library: Library
) -> None:
    from index.ingest.feed_polling import add_feed

    with pytest.raises(BadInput, match="not a news feed"):
        add_feed(web_library.collection(), f"{site.base}/ferry")


def test_feeds_of_one_collection_are_not_polled_for_another(
    site: Site, web_library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    run(web_library, capsys, "feed", "add", f"{site.base}/feed.xml", "--collection", "guild-1")
    _, polled = run(web_library, capsys, "feed", "poll", "--collection", "guild-2")
    assert polled["feeds"] == 0 and polled["added"] == 0
    assert web_library.collection("guild-2").articles() == []


def test_show_gives_the_stored_article_and_refresh_takes_a_changed_page(
    site: Site, web_library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    _, added = run(web_library, capsys, "add", f"{site.base}/bridge")
    article_id = added["article_id"]
    _, shown = run(web_library, capsys, "show", str(article_id))
    assert shown["title"] == STORIES["bridge"][0]
    assert shown["url"] == f"{site.base}/bridge"
    assert [p["paragraph"] for p in shown["passages"]] == [1, 2]
    assert shown["passages"][0]["text"] == STORIES["bridge"][1][0]

    _, same = run(web_library, capsys, "refresh", str(article_id))
    assert not same["changed"] and same["article_id"] == article_id
    site.pages["bridge"] = site.pages["bridge"].replace(b"six weeks", b"eight weeks")
    _, changed = run(web_library, capsys, "refresh", str(article_id))
    assert changed["changed"] and changed["article_id"] != article_id
    [article] = web_library.collection().articles()
    assert article.id == changed["article_id"]
    answer = web_library.collection().ask("How long will the bridge be closed?")
    assert "eight weeks" in answer.answer
