"""Adding articles by URL through the CLI, against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from index import Library, Limits
from index.cli import main

ARTICLE = """<!doctype html><html><head>
<title>Night trains return to the valley | Valley Courier</title>
<meta property="og:site_name" content="Valley Courier">
<meta name="author" content="Ines Marlow">
<meta property="article:published_time" content="2026-10-04">
</head><body><nav>Home · Transport · Weather</nav><article>
<h1>Night trains return to the valley</h1>
<p>The regional rail company will run a night train between Northport and Elmsford from
December, the first overnight service on the line since 1994.</p>
<p>Trains will leave Northport at 11:40 p.m. and arrive in Elmsford at 6:15 a.m., with sleeping
cars for 120 passengers and a seated coach.</p>
<p>The company's director, Malik Osei, said the service would cost 14 million euros a year to
run and would be reviewed after two winters.</p>
<p>SUBSCRIBE TO OUR TRANSPORT NEWSLETTER</p>
</article><footer>© Valley Courier</footer></body></html>"""


class _Handler(http.server.BaseHTTPRequestHandler):
    requests: list[str]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.requests.append(self.path)  # type: ignore[attr-defined]
        body = ARTICLE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[http.server.ThreadingHTTPServer]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def test_a_page_is_added_with_its_metadata_when_private_networks_are_allowed(
    server: http.server.ThreadingHTTPServer,
    make_library: Callable[..., Library],
    capsys: pytest.CaptureFixture[str],
) -> None:
    library = make_library(limits=Limits(allow_private_networks=True))
    url = f"http://127.0.0.1:{server.server_port}/news/night-trains"
    assert main(["add", url, "--json"], library=library) == 0
    added = json.loads(capsys.readouterr().out)
    assert added["title"] == "Night trains return to the valley"
    assert added["site"] == "Valley Courier"
    assert added["paragraphs"] == 3 and added["skipped_lines"] == 1

    question = "How much will the night train cost to run each year?"
    assert main(["ask", question, "--json"], library=library) == 0
    answer = json.loads(capsys.readouterr().out)
    assert "14 million euros" in answer["answer"]
    # The sentence quoted for the fact links to its paragraph of the page.
    (citation,) = [c for c in answer["citations"] if "14 million euros" in c["quote"]]
    assert citation["url"] == url and citation["paragraph"] == 3
    assert citation["link"].startswith(url + "#:~:text=")

    # The same page again is recognised by its URL and not stored twice.
    assert main(["add", url, "--json"], library=library) == 0
    assert json.loads(capsys.readouterr().out)["added"] is False


@pytest.mark.parametrize(
    "template",
    [
        "http://127.0.0.1:{port}/",
        "http://localhost:{port}/",
        "http://[::1]:{port}/",
        "http://2130706433:{port}/",
        "http://0x7f000001:{port}/",
        "http://127.1:{port}/",
        "http://169.254.169.254/latest/meta-data/",
        "file:///etc/passwd",
        "ftp://127.0.0.1:{port}/article.txt",
    ],
)
def test_internal_and_non_web_addresses_are_refused_before_any_request(
    template: str,
    server: http.server.ThreadingHTTPServer,
    library: Library,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = template.format(port=server.server_port)
    assert main(["add", url], library=library) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {url}: ") and err.count("\n") == 1
    assert server.requests == []  # type: ignore[attr-defined]
    assert library.collection().articles() == []
