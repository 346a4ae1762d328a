"""index.ingest.fetch against a real HTTP server on 127.0.0.1 (HTTPS: test_fetch_tls.py).

Private addresses are refused unless allowed, so the tests that fetch from the local server pass
allow_private=True; the refusal tests keep the default and count what reached the server.
"""

from __future__ import annotations

import ipaddress
import json
import socket

import pytest
from fetch_server import HTML, Server, assert_one_sentence, fetch_local

import index.ingest.fetch as fetch_module
from index.errors import FetchRefused
from index.ingest.fetch import Fetched, fetch

# --- what an article fetch returns -------------------------------------------------------------


def test_fetches_an_html_page(server: Server) -> None:
    page = fetch_local(server.url("/page"))
    assert page == Fetched(
        url=server.url("/page"), content_type="text/html", charset="utf-8", body=HTML
    )


def test_content_type_is_lowercased_and_stripped_of_parameters(server: Server) -> None:
    page = fetch_local(server.url("/upper-type"))
    assert (page.content_type, page.charset) == ("text/html", "iso-8859-1")


def test_an_unknown_charset_is_left_to_the_decoder(server: Server) -> None:
    assert fetch_local(server.url("/bad-charset")).charset is None


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/plain", "text/plain"),
        ("/markdown", "text/markdown"),
        ("/pdf", "application/pdf"),
        ("/unlabelled-pdf", "application/pdf"),
        ("/unlabelled-html", "text/html"),
        ("/octet-pdf", "application/pdf"),
    ],
)
def test_article_types_are_accepted_or_sniffed(
    server: Server, path: str, content_type: str
) -> None:
    assert fetch_local(server.url(path)).content_type == content_type


def test_sends_host_user_agent_and_accept(server: Server) -> None:
    sent = json.loads(fetch_local(server.url("/headers")).body)
    assert sent["Host"] == f"127.0.0.1:{server.port}"
    assert sent["User-Agent"] == fetch_module.USER_AGENT
    assert "text/html" in sent["Accept"] and "application/pdf" in sent["Accept"]
    assert sent["Accept-Encoding"] == "identity"  # so the size limit is the real size


def test_fragment_is_neither_sent_nor_kept(server: Server) -> None:
    page = fetch_local(server.url("/echo?q=1#section"))
    assert page.body == b"/echo?q=1"
    assert page.url == server.url("/echo?q=1")


def test_non_ascii_path_is_percent_encoded(server: Server) -> None:
    assert fetch_local(server.url("/echo/café")).body == b"/echo/caf%C3%A9"


# --- only http and https -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://example.com/article.txt",
        "javascript:alert(1)",
        "data:text/html,<p>hi</p>",
        "gopher://127.0.0.1:70/",
        "example.com/article",
        "//example.com/article",
        "",
    ],
)
def test_other_schemes_are_refused_before_any_lookup(
    url: str, fake_dns: dict[str, list[str]], connections: list[tuple[str, int]]
) -> None:
    fake_dns["example.com"] = ["93.184.216.34"]
    with pytest.raises(FetchRefused) as refused:
        fetch(url)
    assert str(refused.value) == (
        "Only http and https links can be added; paste a web address that starts with https://."
    )
    assert connections == []


@pytest.mark.parametrize(
    "url",
    [
        "http://[::1",
        "http://example.com:99999/",
        "http:///path",
        "https://",
        "http://exa mple.com/",
    ],
)
def test_malformed_links_are_refused(url: str, connections: list[tuple[str, int]]) -> None:
    with pytest.raises(FetchRefused, match="not a valid web address"):
        fetch(url)
    assert connections == []


def test_links_with_credentials_are_refused(connections: list[tuple[str, int]]) -> None:
    with pytest.raises(FetchRefused, match="user name or password"):
        fetch("https://alice:secret@example.com/article")
    assert connections == []


# --- internal addresses ------------------------------------------------------------------------

LOOPBACK_SPELLINGS = ["127.1", "2130706433", "0x7f000001", "017700000001", "127.0.0.1"]
INTERNAL_HOSTS = [
    *LOOPBACK_SPELLINGS,
    "localhost",
    "0.0.0.0",
    "[::1]",
    "[::]",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[::127.0.0.1]",  # IPv4-compatible (deprecated) form
    "[64:ff9b::7f00:1]",  # NAT64
    "[2002:7f00:1::]",  # 6to4 around 127.0.0.1
    "[2001:0:4136:e378:8000:63bf:3fff:fdd2]",  # Teredo
    "169.254.169.254",  # cloud metadata
    "10.0.0.1",
    "172.16.0.1",
    "192.168.1.1",
    "100.64.0.1",  # shared address space (carrier-grade NAT)
    "192.0.0.8",
    "224.0.0.1",
    "240.0.0.1",
    "255.255.255.255",
    "[fe80::1]",
    "[fec0::1]",
    "[fc00::1]",
    "[ff02::1]",
]


@pytest.mark.parametrize("host", INTERNAL_HOSTS)
def test_internal_addresses_are_refused_before_connecting(
    server: Server, connections: list[tuple[str, int]], host: str
) -> None:
    with pytest.raises(FetchRefused) as refused:
        fetch(server.url("/page", host=host))
    assert str(refused.value) == fetch_module._PRIVATE
    assert connections == []
    assert server.seen.connections == 0 and server.seen.paths == []


@pytest.mark.parametrize("host", [*LOOPBACK_SPELLINGS, "localhost", "0.0.0.0"])
def test_the_same_spellings_reach_the_server_when_private_is_allowed(
    server: Server, host: str
) -> None:
    # Proves the refusals above stopped real requests, not requests that could not have landed.
    assert fetch_local(server.url("/page", host=host)).body == HTML
    assert server.seen.paths == ["/page"]


@pytest.mark.parametrize("spelling", LOOPBACK_SPELLINGS)
def test_getaddrinfo_reads_numeric_spellings_as_the_address_they_reach(spelling: str) -> None:
    assert fetch_module._checked_addresses(spelling, 80, allow_private=True) == ["127.0.0.1"]


def test_one_internal_address_among_public_ones_refuses_the_name(
    fake_dns: dict[str, list[str]], connections: list[tuple[str, int]]
) -> None:
    fake_dns["rebind.example"] = ["93.184.216.34", "2606:2800:220:1::1", "10.0.0.7"]
    with pytest.raises(FetchRefused, match="private or local"):
        fetch("https://rebind.example/article")
    assert connections == []


def test_public_addresses_pass_the_check(fake_dns: dict[str, list[str]]) -> None:
    fake_dns["news.example"] = ["93.184.216.34", "2606:2800:220:1::1"]
    assert fetch_module._checked_addresses("news.example", 443, allow_private=False) == [
        "93.184.216.34",
        "2606:2800:220:1::1",
    ]


@pytest.mark.parametrize(
    "address",
    ["93.184.216.34", "2606:2800:220:1::1", "::ffff:93.184.216.34", "64:ff9b::5db8:d822"],
)
def test_public_addresses_in_any_form_are_public(address: str) -> None:
    assert fetch_module._is_public(ipaddress.ip_address(address))


def test_unknown_site(fake_dns: dict[str, list[str]]) -> None:
    with pytest.raises(FetchRefused) as refused:
        fetch("https://example.invalid/article")
    assert str(refused.value) == "Could not find the site example.invalid; check the link."


# --- redirects ---------------------------------------------------------------------------------


def test_follows_a_redirect_chain(server: Server) -> None:
    page = fetch_local(server.url("/chain/3"))
    assert page.url == server.url("/page")
    assert page.body == HTML
    assert server.seen.paths == ["/chain/3", "/chain/2", "/chain/1", "/page"]


@pytest.mark.parametrize("path", ["/see-other", "/temporary", "/permanent"])
def test_follows_303_307_308_and_relative_locations(server: Server, path: str) -> None:
    assert fetch_local(server.url(path)).url == server.url("/page")


def test_too_many_redirects_are_refused(server: Server) -> None:
    with pytest.raises(FetchRefused, match="redirects too many times"):
        fetch_local(server.url("/loop"))
    assert len(server.seen.paths) == 6  # the link and five redirects


def test_max_redirects_is_exact(server: Server) -> None:
    assert fetch_local(server.url("/chain/3"), max_redirects=3).body == HTML
    with pytest.raises(FetchRefused, match="redirects too many times"):
        fetch_local(server.url("/chain/3"), max_redirects=2)


def test_redirect_without_location(server: Server) -> None:
    with pytest.raises(FetchRefused) as refused:
        fetch_local(server.url("/no-location"))
    assert str(refused.value) == (
        "The site answered 302 Found without saying where to; check the link."
    )


def test_redirect_to_another_scheme_is_refused(server: Server) -> None:
    with pytest.raises(FetchRefused, match="Only http and https"):
        fetch_local(server.url("/to-file"))


@pytest.mark.parametrize("path", ["/to-loopback", "/to-loopback-name", "/to-metadata"])
def test_each_redirect_is_checked_again(
    server: Server,
    connections: list[tuple[str, int]],
    first_hop_trusted: list[str],
    path: str,
) -> None:
    with pytest.raises(FetchRefused) as refused:
        fetch(server.url(path))  # private addresses not allowed
    assert str(refused.value) == fetch_module._PRIVATE
    assert len(first_hop_trusted) == 2  # the redirect's host was checked...
    assert connections == [("127.0.0.1", server.port)]  # ...and never connected to
    assert server.seen.paths == [path]


def test_redirect_to_loopback_is_followed_when_private_is_allowed(server: Server) -> None:
    assert fetch_local(server.url("/to-loopback")).body == HTML


# --- what the server answers -------------------------------------------------------------------


def test_image_is_refused_before_its_body_is_read(server: Server) -> None:
    with pytest.raises(FetchRefused) as refused:
        fetch_local(server.url("/image"))
    assert str(refused.value) == (
        "That link is an image (image/png), not an article; link to a web page, text or PDF."
    )


@pytest.mark.parametrize("path", ["/zip", "/octet-other"])
def test_other_files_are_refused(server: Server, path: str) -> None:
    with pytest.raises(FetchRefused, match="not an article"):
        fetch_local(server.url(path))


def test_not_found_names_the_status(server: Server) -> None:
    with pytest.raises(FetchRefused) as refused:
        fetch_local(server.url("/missing"))
    assert str(refused.value) == "The site answered 404 Not Found; check the link."


def test_server_error_says_try_later(server: Server) -> None:
    with pytest.raises(FetchRefused) as refused:
        fetch_local(server.url("/broken"))
    assert str(refused.value) == "The site answered 503 Service Unavailable; try again later."


def test_the_server_reason_phrase_is_never_echoed(server: Server) -> None:
    with pytest.raises(FetchRefused) as refused:
        fetch_local(server.url("/teapot-reason"))
    assert str(refused.value) == "The site answered 500 Internal Server Error; try again later."


def test_a_body_cut_short_is_refused(server: Server) -> None:
    with pytest.raises(FetchRefused, match="could not be read"):
        fetch_local(server.url("/short"))


def test_connection_refused(connections: list[tuple[str, int]]) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago and has no listener
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(FetchRefused) as refused:
        fetch_local(f"http://127.0.0.1:{port}/")
    assert str(refused.value) == (
        "Could not connect to 127.0.0.1; check the link or try again later."
    )


# --- size and time limits ----------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/huge-stream", "/huge-declared"])
def test_a_200_mb_page_is_refused_without_being_read(server: Server, path: str) -> None:
    with pytest.raises(FetchRefused) as refused:
        fetch_local(server.url(path))  # the default limit: 10 MB
    assert str(refused.value) == (
        "The page is larger than 10 MB, the limit for one article; "
        "attach a shorter version as a file."
    )
    assert server.seen.stream_done.wait(10), "the server kept sending after the client left"
    # The limit plus what the kernel's socket buffers absorbed; far from 200 MB.
    assert server.seen.bytes_served < 40_000_000


def test_declared_size_over_the_limit_is_refused_at_once(server: Server) -> None:
    with pytest.raises(FetchRefused, match="larger than 1 MB"):
        fetch_local(server.url("/huge-declared"), max_bytes=1_000_000)
    server.seen.stream_done.wait(10)
    assert server.seen.bytes_served < 20_000_000  # only the socket buffers, none of it read


def test_size_limit_is_inclusive(server: Server) -> None:
    assert fetch_local(server.url("/page"), max_bytes=len(HTML)).body == HTML
    with pytest.raises(FetchRefused, match="larger than"):
        fetch_local(server.url("/page"), max_bytes=len(HTML) - 1)


@pytest.mark.parametrize("path", ["/slow", "/drip"])
def test_slow_sites_hit_the_overall_deadline(server: Server, path: str) -> None:
    with pytest.raises(FetchRefused) as refused:
        fetch_local(server.url(path), total_timeout_s=0.3)
    assert str(refused.value) == fetch_module._TOO_SLOW


def test_connect_timeout_covers_the_tls_handshake() -> None:
    with socket.socket() as silent:  # accepts TCP (in the backlog) but never speaks TLS
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        with pytest.raises(FetchRefused) as refused:
            fetch_local(f"https://127.0.0.1:{port}/", connect_timeout_s=0.2)
    assert str(refused.value) == fetch_module._TOO_SLOW


def test_every_message_is_one_sentence() -> None:
    for message in (fetch_module._NOT_WEB, fetch_module._INVALID, fetch_module._PRIVATE):
        assert_one_sentence(message)
    assert_one_sentence(fetch_module._TOO_SLOW)
    assert_one_sentence(fetch_module._not_an_article("image/png"))
    assert_one_sentence(fetch_module._not_an_article("bad type\r\n@everyone"))
    assert "@everyone" not in fetch_module._not_an_article("bad type\r\n@everyone")
