"""A small news site on 127.0.0.1 for the tests: article pages and an RSS feed of them."""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Iterator

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

    @classmethod
    @contextlib.contextmanager
    def serving(cls) -> Iterator[Site]:
        news = cls()
        thread = threading.Thread(target=news.httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield news
        finally:
            news.httpd.shutdown()
            news.httpd.server_close()

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
