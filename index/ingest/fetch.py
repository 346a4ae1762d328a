"""Fetch one article URL over HTTP(S): the only module in the project that talks to the network.

Anyone who may add an article can make the bot request a URL, so every request is treated as
coming from a stranger (server-side request forgery):

- only http and https;
- the host is resolved once, every address it resolves to is checked, and the connection goes to
  a checked address: http.client would resolve the name again, and a second answer could point
  inside the network (DNS rebinding). TLS still sends the host name (SNI) and verifies the
  certificate against it;
- each redirect is checked again from scratch, as if it were a new link;
- the size limit is enforced while reading, and the deadline covers the whole fetch: a watchdog
  closes the connection when it passes, whatever the reader is waiting for (a status line or a
  header dripped a byte at a time, endless `100 Continue`s, chunk framing, trailers), so a huge
  or slow page costs seconds, not memory.

Nothing is logged, and messages never echo what a server sent beyond a status code and a
well-formed content type.
"""

from __future__ import annotations

import codecs
import contextlib
import http.client
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http import HTTPStatus
from urllib.parse import urljoin

from index.errors import FetchRefused
from index.ingest.addresses import DEFAULT_PORTS, INVALID, NOT_WEB, Target, is_public, parse_link
from index.ingest.page_check import not_an_article
from index.messages.catalogue import N_

__all__ = ["FEED_TYPES", "Fetched", "fetch"]

USER_AGENT = "articlebot/0.1 (+https://github.com/articlebot)"
# Articles only; `*/*` last so that servers which answer 406 to a narrow Accept still serve.
_ACCEPT = (
    "text/html,application/xhtml+xml;q=0.9,text/plain;q=0.8,text/markdown;q=0.8,"
    "application/pdf;q=0.8,*/*;q=0.1"
)
_ARTICLE_TYPES = frozenset(
    {"text/html", "application/xhtml+xml", "text/plain", "text/markdown", "application/pdf"}
)
# What a news feed is served as, in practice: sites label RSS and Atom in all of these ways.
FEED_TYPES = frozenset(
    {
        "application/rss+xml",
        "application/atom+xml",
        "application/xml",
        "text/xml",
        "application/rdf+xml",
        "application/feed+json",
        "application/json",
    }
)
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_CHUNK_BYTES = 64 * 1024

_PRIVATE = N_(
    "That link points to a private or local network address, which the bot may not visit; "
    "link to a public web page instead."
)
_TOO_SLOW = N_("The site took too long to answer; try again later or attach the article as a file.")
_NOT_FOUND = N_("Could not find the site {host}; check the link.")
# What the network and the server can do wrong, for the user ({host}: the site's name).
_UNVERIFIED = N_(
    "The security certificate of {host} could not be verified; "
    "check the link or attach the article as a file."
)
_INSECURE = N_(
    "Could not open a secure connection to {host}; check the link or attach the article as a file."
)
_UNREADABLE = N_(
    "The site {host} sent an answer that could not be read; "
    "try again later or attach the article as a file."
)
_UNREACHABLE = N_("Could not connect to {host}; check the link or try again later.")
# The link checks' messages and address test, reachable from this module under these names too.
_NOT_WEB, _INVALID, _is_public = NOT_WEB, INVALID, is_public


@dataclass(frozen=True)
class Fetched:
    """A page as the server sent it, after redirects."""

    url: str  # final URL after redirects, without its #fragment
    content_type: str  # e.g. "text/html", lowercased, without parameters
    charset: str | None  # as declared by the server, only if Python knows the codec
    body: bytes


def fetch(
    url: str,
    *,
    allow_private: bool = False,
    max_bytes: int = 10_000_000,
    connect_timeout_s: float = 10.0,
    total_timeout_s: float = 30.0,
    max_redirects: int = 5,
    accept: frozenset[str] = _ARTICLE_TYPES,
) -> Fetched:
    """Fetch an article's page (HTML, text or PDF), or raise FetchRefused with a one-line reason.

    `accept` widens or narrows the content types taken (FEED_TYPES for a news feed).

    `allow_private` (the setting ARTICLEBOT_ALLOW_PRIVATE_NETWORKS=1) lets the bot visit loopback
    and private addresses: for tests, and for private deployments that add intranet articles.
    The host name lookup itself is not under the deadline: getaddrinfo cannot be interrupted.
    """
    deadline = time.monotonic() + total_timeout_s
    current = url
    for _hop in range(max_redirects + 1):
        # Each hop is checked from scratch: a public page may redirect anywhere.
        target = parse_link(current)
        addresses = _checked_addresses(target.host, target.port, allow_private)
        with _network_errors(target.host):
            conn, sock = _open(target, addresses, connect_timeout_s, deadline)
            # Close the response too: its file keeps the socket open, and a refused 200 MB page
            # would otherwise go on arriving until the exception is garbage-collected.
            try:
                with _watchdog(sock, deadline) as expired:
                    try:
                        with _request(conn, sock, target, deadline) as response:
                            if response.status in _REDIRECTS:
                                current = _redirect_location(target, response)
                                continue
                            _refuse_status(response.status)
                            page = _read_page(
                                target.url, response, sock, max_bytes, deadline, accept
                            )
                    except (OSError, http.client.HTTPException, ValueError) as exc:
                        if expired.is_set():
                            raise FetchRefused(_TOO_SLOW) from exc
                        raise
                    if expired.is_set():  # the close may have looked like a normal end
                        raise FetchRefused(_TOO_SLOW)
                    return page
            finally:
                conn.close()
                sock.close()
    raise FetchRefused(
        N_("The link redirects too many times; link straight to the article's page.")
    )


def _checked_addresses(host: str, port: int, allow_private: bool) -> list[str]:
    """Resolve `host` once; refuse unless every address is public (or private ones are allowed).

    getaddrinfo also reads the odd numeric spellings (`127.1`, `2130706433`, `0x7f000001`,
    `017700000001`) the way the C library would connect to them, so checking its answer rather
    than the text of the link catches them all.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError, ValueError) as exc:
        raise FetchRefused(_NOT_FOUND, host=host) from exc
    addresses: list[str] = []
    for family, _type, _proto, _name, sockaddr in infos:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        text = str(sockaddr[0])
        if text not in addresses:
            addresses.append(text)
    if not addresses:
        raise FetchRefused(_NOT_FOUND, host=host)
    # One bad address refuses the whole name: the connection could go to any of them.
    if not allow_private and not all(is_public(ipaddress.ip_address(a)) for a in addresses):
        raise FetchRefused(_PRIVATE)
    return addresses


class _PinnedConnection(http.client.HTTPConnection):
    """An HTTP(S) connection to one address that was already checked.

    `host` serves only for the Host header, SNI and the certificate check; connect() never
    resolves it again.
    """

    def __init__(
        self, host: str, port: int, address: str, tls: ssl.SSLContext | None, timeout: float
    ) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address
        self._tls = tls

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), timeout=self.timeout)
        if self._tls is not None:
            try:
                sock = self._tls.wrap_socket(sock, server_hostname=self.host)
            except BaseException:
                sock.close()
                raise
        self.sock = sock


def _open(
    target: Target, addresses: list[str], connect_timeout_s: float, deadline: float
) -> tuple[_PinnedConnection, socket.socket]:
    """Connect to the first checked address that answers, like a browser would."""
    # A fresh context per fetch, so it follows the system's certificate store as it is now.
    tls = ssl.create_default_context() if target.scheme == "https" else None
    last_error: OSError | None = None
    for address in addresses:
        timeout = min(connect_timeout_s, _time_left(deadline))
        conn = _PinnedConnection(target.host, target.port, address, tls, timeout)
        try:
            conn.connect()
        except ssl.SSLError:
            conn.close()
            raise  # the same certificate would fail at every address
        except OSError as exc:
            conn.close()
            last_error = exc
            continue
        # getresponse() forgets conn.sock when the server closes; keep it to set timeouts on.
        return conn, conn.sock
    assert last_error is not None  # getaddrinfo answered at least one address
    raise last_error


def _request(
    conn: _PinnedConnection, sock: socket.socket, target: Target, deadline: float
) -> http.client.HTTPResponse:
    default_port = DEFAULT_PORTS[target.scheme]
    host = f"[{target.host}]" if ":" in target.host else target.host
    headers = {
        "Host": host if target.port == default_port else f"{host}:{target.port}",
        "User-Agent": USER_AGENT,
        "Accept": _ACCEPT,
        # Compressed bodies would need a second size limit on the decompressed bytes.
        "Accept-Encoding": "identity",
        "Connection": "close",
    }
    sock.settimeout(_time_left(deadline))
    conn.request("GET", target.path, headers=headers)
    sock.settimeout(_time_left(deadline))
    return conn.getresponse()


def _redirect_location(target: Target, response: http.client.HTTPResponse) -> str:
    location = response.getheader("Location")
    if not location or not location.strip():
        raise FetchRefused(
            N_("The site answered {status} without saying where to; check the link."),
            status=_status_text(response.status),
        )
    return urljoin(target.url, location.strip())


def _refuse_status(status: int) -> None:
    if 200 <= status < 300:
        return
    again = N_("The site answered {status}; try again later.")
    check = N_("The site answered {status}; check the link.")
    raise FetchRefused(again if status >= 500 else check, status=_status_text(status))


def _status_text(status: int) -> str:
    # The standard phrase, not the server's: the reason line is free text from a stranger.
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)


def _read_page(
    url: str,
    response: http.client.HTTPResponse,
    sock: socket.socket,
    max_bytes: int,
    deadline: float,
    accept: frozenset[str] = _ARTICLE_TYPES,
) -> Fetched:
    declared = response.getheader("Content-Type") is not None
    content_type = response.msg.get_content_type() if declared else None
    charset = _known_charset(response.msg.get_content_charset()) if declared else None
    if content_type in accept:
        body = _read_body(response, sock, max_bytes, deadline)
        return Fetched(url=url, content_type=content_type, charset=charset, body=body)
    # Refuse an image or a video before downloading it; unlabelled bodies are judged by content.
    if content_type is not None and content_type != "application/octet-stream":
        raise not_an_article(content_type)
    body = _read_body(response, sock, max_bytes, deadline)
    if body.startswith(b"%PDF-"):
        sniffed = "application/pdf"
    elif content_type is None:
        sniffed = "text/html"  # what a browser assumes for an unlabelled page
    else:
        raise not_an_article(content_type)
    return Fetched(url=url, content_type=sniffed, charset=charset, body=body)


def _read_body(
    response: http.client.HTTPResponse, sock: socket.socket, max_bytes: int, deadline: float
) -> bytes:
    too_big = N_(
        "The page is larger than {size} MB, the limit for one article; "
        "attach a shorter version as a file."
    )
    size = f"{max_bytes / 1e6:g}"
    if response.length is not None and response.length > max_bytes:
        raise FetchRefused(
            too_big, size=size
        )  # declared too big: not a single byte of the body is read
    chunks: list[bytes] = []
    received = 0
    while True:
        # A per-read timeout alone would let a server that drips one byte at a time run forever.
        sock.settimeout(_time_left(deadline))
        chunk = response.read1(_CHUNK_BYTES)  # read1: at most one recv, so the checks run often
        if not chunk:
            break
        received += len(chunk)
        if received > max_bytes:
            raise FetchRefused(too_big, size=size)
        chunks.append(chunk)
    if response.length:  # read1 does not complain when the server stops short of Content-Length
        raise http.client.IncompleteRead(b"", response.length)
    return b"".join(chunks)


def _known_charset(charset: str | None) -> str | None:
    if charset is None:
        return None
    try:
        codecs.lookup(charset)
    except LookupError:
        return None  # let the decoder guess rather than fail on a misspelt label
    return charset


def _not_an_article(content_type: str) -> str:
    """The sentence of that refusal, in English."""
    return str(not_an_article(content_type))


@contextmanager
def _watchdog(sock: socket.socket, deadline: float) -> Iterator[threading.Event]:
    """Shut the connection down when the deadline passes; the event says whether it did.

    Per-read timeouts bound each wait, not their sum: http.client reads the status line, the
    headers, any number of interim `100 Continue` responses, chunk sizes and trailers in loops
    of its own, each read well within a timeout. Only closing the socket from outside ends them.
    """
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        with contextlib.suppress(OSError):  # already closed
            sock.shutdown(socket.SHUT_RDWR)

    timer = threading.Timer(max(0.0, deadline - time.monotonic()), expire)
    timer.daemon = True
    timer.start()
    try:
        yield expired
    finally:
        timer.cancel()


def _time_left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise FetchRefused(_TOO_SLOW)
    return left


@contextmanager
def _network_errors(host: str) -> Iterator[None]:
    """Turn what the network and the server can do wrong into one sentence for the user."""
    try:
        yield
    except TimeoutError as exc:  # socket.timeout is TimeoutError, including in TLS handshakes
        raise FetchRefused(_TOO_SLOW) from exc
    except ssl.SSLCertVerificationError as exc:
        raise FetchRefused(_UNVERIFIED, host=host) from exc
    except ssl.SSLError as exc:
        raise FetchRefused(_INSECURE, host=host) from exc
    except http.client.HTTPException as exc:
        raise FetchRefused(_UNREADABLE, host=host) from exc
    except OSError as exc:  # refused, reset, unreachable
        raise FetchRefused(_UNREACHABLE, host=host) from exc
