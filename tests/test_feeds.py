"""Following news feeds, shown and refreshed articles: real HTTP on 127.0.0.1, real add path."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable, Iterator

import pytest

from index import BadInput, Library, Limits
from index.cli import main

STORIES = {
    "ferry": (
        "Harbor gets a ferry terminal",
        [
            "The harbor authority approved a new ferry terminal on Tuesday after a long debate.",
            "The terminal will cost 80 million dollars and is due to open in the spring of 2027.",
        ],
    ),
    "library": (
        "Tool library opens in the old fire station",
        [
            "Millbrook opened a tool library on Saturday where residents borrow drills for free.",
            "The council approved 18,000 dollars for the renovation of the station in March.",
        ],
    ),
    "bridge": (
        "Bridge closes for repairs",
        [
            "The Quarry Street bridge closes on Monday for six weeks of repairs to its deck.",
            "Buses will take a detour through Mill Lane while the work goes on, the town said.",
        ],
    ),
}


def page(slug: str) -> bytes:
    title, paragraphs = STORIES[slug]
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f"<!doctype html><html><head><title>{title}</title></head><body><article>"
        f"<h1>{title}</h1>{body}</article></body></html>"
    ).encode()


class Site:
    """A news site: its feed lists `self.listed`, newest first; pages can be changed."""

    def __init__(self) -> None:
        self.listed = ["library", "ferry"]
        self.pages = {slug: page(slug) for slug in STORIES}
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
                path = self.path.strip("/")
                if path == "feed.xml":
                    body, kind = site.feed(), "application/rss+xml"
                elif path in site.pages:
                    body, kind = site.pages[path], "text/html; charset=utf-8"
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def feed(self) -> bytes:
        items = "".join(
            f"<item><title>{STORIES[s][0]}</title><link>{self.base}/{s}</link>"
            f"<guid>{self.base}/{s}</guid></item>"
            for s in self.listed
        )
        return (
            '<?xml version="1.0"?><rss version="2.0"><channel><title>Millbrook Weekly</title>'
            f"<link>{self.base}/</link><description>News</description>{items}</channel></rss>"
        ).encode()


@pytest.fixture
def site() -> Iterator[Site]:
    news = Site()
    thread = threading.Thread(target=news.httpd.serve_forever, daemon=True)
    thread.start()
    yield news
    news.httpd.shutdown()
    news.httpd.server_close()


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
    from index.subscriptions import add_feed

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
