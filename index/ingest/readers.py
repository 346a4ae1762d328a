"""Turning what a user gives (a file, a URL, pasted text) into a Document ready to index."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from index.errors import BadInput
from index.ingest.feeds import ParsedFeed, parse_feed
from index.ingest.fetch import FEED_TYPES, Fetched, fetch
from index.ingest.page_check import refuse_non_article
from index.ingest.paragraphs import (
    decode_bytes,
    reflow_lines,
    split_paragraphs,
    split_title,
)
from index.messages.catalogue import N_
from index.records import Document
from index.text import normalize

__all__ = ["Limits", "read_bytes", "read_feed", "read_path", "read_text", "read_url"]

SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm", ".pdf")
_TAG = re.compile(r"<[A-Za-z]")

# What is over a size limit, by what it is: whole sentences, so that each is said in the
# reader's words; a file is named by its name, a field.
_TEXT_TOO_BIG = N_("The text is {size}, over the limit of {limit}; split it into smaller articles.")
_PAGE_TOO_BIG = N_("The page is {size}, over the limit of {limit}; split it into smaller articles.")
_PAGE_TEXT_TOO_BIG = N_(
    "The page's text is {size}, over the limit of {limit}; split it into smaller articles."
)
_FILE_TOO_BIG = N_("{name} is {size}, over the limit of {limit}; split it into smaller articles.")


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int = 20_000_000
    max_page_bytes: int = 10_000_000
    max_paragraphs: int = 5_000
    allow_private_networks: bool = False
    fetch_timeout_s: float = 30.0
    # What an article may hold once read, whatever its file's size: a book is 2 MB of text.
    max_text_chars: int = 2_000_000
    max_pdf_pages: int = 1_000
    # Reading HTML costs time that grows faster than the number of its tags.
    max_html_tags: int = 40_000
    # What one collection (one Discord server) may hold: a server cannot fill the disk or the
    # memory that every other server shares.
    max_articles: int = 10_000
    max_passages: int = 500_000

    def check_room(self, articles: int, stored: int, passages: int) -> None:
        """Refuse an article of `passages` passages to a collection of `articles` articles and
        `stored` passages where it would go past what one collection may hold."""
        if articles >= self.max_articles:
            raise BadInput(
                N_(
                    "This collection holds {articles} articles, its limit; remove some "
                    "(`articlebot remove`, or /remove in Discord) before adding more."
                ),
                articles=f"{articles:,}",
            )
        if stored + passages > self.max_passages:
            raise BadInput(
                N_(
                    "This article's {passages} passages would take the collection past its "
                    "limit of {limit}; remove some articles before adding more."
                ),
                passages=f"{passages:,}",
                limit=f"{self.max_passages:,}",
            )


def _document(
    title: str | None,
    body: str,
    *,
    markdown: bool,
    source: str,
    limits: Limits,
    url: str | None = None,
    site: str | None = None,
    author: str | None = None,
    published: str | None = None,
    page: bool = False,
) -> Document:
    split = split_paragraphs(body, markdown=markdown)
    if page:  # a web page may be a wall or an error rather than an article; a text is the user's
        refuse_non_article(title, split)
    paragraphs = split.paragraphs
    if not paragraphs:
        raise BadInput(N_("Found no article text to index; check that the article has paragraphs."))
    if len(paragraphs) > limits.max_paragraphs:
        raise BadInput(
            N_(
                "That article has {paragraphs} paragraphs, more than the limit of {limit}; "
                "split it into several articles."
            ),
            paragraphs=f"{len(paragraphs):,}",
            limit=f"{limits.max_paragraphs:,}",
        )
    # A given title (the --title option, a PDF's or a page's metadata) is cleaned like the text.
    title = normalize((title or "").replace("\n", " "))[:300].strip()
    title = title or paragraphs[0][:80].strip()
    # A page that repeats its headline as the first subheading: that is no section's heading.
    headings = [None if h and h.casefold() == title.casefold() else h for h in split.headings]
    return Document(
        title, paragraphs, url, site, author, published, source, split.skipped, headings
    )


def _megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f} MB" if size >= 100_000 else f"{size / 1e3:,.1f} kB"


def _check_size(size: int, limit: int, message: str, **fields: object) -> None:
    """Refuse with `message` (one of the `_TOO_BIG`s above, with its `fields`) past the limit."""
    if size > limit:
        raise BadInput(message, size=_megabytes(size), limit=_megabytes(limit), **fields)


def read_text(
    text: str, *, title: str | None = None, source: str = "text", limits: Limits | None = None
) -> Document:
    """Plain text or Markdown: the first non-empty line is the headline unless a title is given."""
    limits = limits or Limits()
    # Characters, not bytes: a cheap bound that holds for any text a file under the limit gives.
    _check_size(len(text), limits.max_file_bytes, _TEXT_TOO_BIG)
    if not text.strip():
        raise BadInput(N_("The text is empty; paste the article's text."))
    if title is None:
        title, text = split_title(text)
        if not text.strip():  # a one-line text is all body, not all headline
            text, title = title, None
    return _document(title, text, markdown=True, source=source, limits=limits)


def read_bytes(
    data: bytes,
    name: str,
    *,
    title: str | None = None,
    content_type: str | None = None,
    url: str | None = None,
    source: str = "file",
    limits: Limits | None = None,
) -> Document:
    """A file's bytes, by content type or by the file name's suffix."""
    limits = limits or Limits()
    # Checked here too, not only by read_path: the bot hands attachments over as bytes.
    if source == "url":
        _check_size(len(data), limits.max_page_bytes, _PAGE_TOO_BIG)
    else:
        _check_size(len(data), limits.max_file_bytes, _FILE_TOO_BIG, name=repr(Path(name).name))
    suffix = Path(name).suffix.lower()
    kind = content_type or ""
    if kind == "application/pdf" or suffix == ".pdf" or data.startswith(b"%PDF-"):
        from index.ingest.pdf import (
            pdf_text,  # imported when needed: pypdf adds 50 ms to every start
        )

        pdf_title, text = pdf_text(data, limits.max_text_chars, limits.max_pdf_pages)
        return _document(
            title or pdf_title,
            reflow_lines(text),
            markdown=False,
            source=source,
            limits=limits,
            url=url,
        )
    text = decode_bytes(data, f"{name!r}" if source == "file" else "The page")
    if (
        "html" in kind
        or suffix in (".html", ".htm")
        or text.lstrip()[:15].lower().startswith(("<!doctype html", "<html"))
    ):
        from index.ingest.extract import extract_html  # trafilatura adds 110 ms to every start

        tags = len(_TAG.findall(text))
        if tags > limits.max_html_tags:
            raise BadInput(
                N_(
                    "That page has {tags} HTML tags, more than the {limit} an article page "
                    "needs; save the article's text and add it as a file."
                ),
                tags=f"{tags:,}",
                limit=f"{limits.max_html_tags:,}",
            )
        page = extract_html(text, url)
        _check_size(len(page.markdown), limits.max_text_chars, _PAGE_TEXT_TOO_BIG)
        # A page's canonical link and site name are its own word: believed only for a page
        # fetched from that same site, never for an uploaded file, which could claim to be any
        # real article (taking its credit, and refusing the real page later as a duplicate).
        fetched = url is not None and source == "url"
        canonical = page.url if fetched and _same_site(page.url, url) else url
        return _document(
            title or page.title,
            page.markdown,
            markdown=True,
            source=source,
            limits=limits,
            url=canonical if fetched else None,
            site=page.site if fetched else None,
            author=page.author,
            published=page.published,
            page=True,
        )
    return read_text(text, title=title, source=source, limits=limits)


def _same_site(claimed: str | None, fetched: str | None) -> bool:
    """Whether a page's canonical link is on the host it was fetched from (or a parent of it)."""
    claimed_host = (urlsplit(claimed or "").hostname or "").removeprefix("www.")
    fetched_host = (urlsplit(fetched or "").hostname or "").removeprefix("www.")
    if not claimed_host or not fetched_host:
        return False
    return fetched_host == claimed_host or fetched_host.endswith("." + claimed_host)


def read_path(
    path: str | Path, *, title: str | None = None, limits: Limits | None = None
) -> Document:
    limits = limits or Limits()
    path = Path(path)
    try:
        exists = path.exists()
    except (OSError, ValueError):  # a name too long for the system, or with a NUL in it
        exists = False
    if not exists:
        raise BadInput(N_("No such file: {path}; check the path."), path=str(path))
    if path.is_dir():
        raise BadInput(N_("{path} is a folder; give the article files inside it."), path=str(path))
    if path.suffix.lower() not in SUFFIXES and path.suffix:
        raise BadInput(
            N_("Cannot read {suffix} files; add a .txt, .md, .html or .pdf file instead."),
            suffix=path.suffix,
        )
    # Checked before reading, and the read stops past the limit: the file may grow meanwhile
    # (or be a device or pipe that never ends) and must not fill memory.
    _check_size(os.path.getsize(path), limits.max_file_bytes, _FILE_TOO_BIG, name=path.name)
    try:
        with path.open("rb") as f:
            data = f.read(limits.max_file_bytes + 1)
    except OSError as exc:
        raise BadInput(
            N_("Cannot read {path}: {reason}; check its permissions."),
            path=str(path),
            reason=exc.strerror,
        ) from exc
    _check_size(len(data), limits.max_file_bytes, _FILE_TOO_BIG, name=path.name)
    return read_bytes(data, path.name, title=title, limits=limits)


def _fetch(url: str, limits: Limits, **options: Any) -> Fetched:
    """Fetch under the limits' address rule, size and deadline."""
    return fetch(
        url,
        allow_private=limits.allow_private_networks,
        max_bytes=limits.max_page_bytes,
        total_timeout_s=limits.fetch_timeout_s,
        **options,
    )


def read_url(url: str, *, title: str | None = None, limits: Limits | None = None) -> Document:
    limits = limits or Limits()
    page = _fetch(url, limits)
    name = urlsplit(page.url).path or "page"
    doc = read_bytes(
        page.body,
        name,
        title=title,
        content_type=page.content_type,
        url=page.url,
        source="url",
        limits=limits,
    )
    # A page without a canonical link is known by the address it was fetched from, and a site
    # without a name by its host, so every citation can say where it came from.
    host = urlsplit(page.url).hostname
    return replace(doc, url=doc.url or page.url, site=doc.site or host)


def read_feed(url: str, *, limits: Limits | None = None) -> tuple[str, ParsedFeed]:
    """A news feed's final address (after redirects) and its entries."""
    limits = limits or Limits()
    # Feeds are served under many types, text/html among them; the parser decides.
    page = _fetch(url, limits, accept=FEED_TYPES | {"text/html", "text/plain"})
    return page.url, parse_feed(page.body, page.url)
