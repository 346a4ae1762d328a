"""Main text and metadata out of HTML (trafilatura): the only module that imports it."""

from __future__ import annotations

import logging
import re

import trafilatura

from .errors import BadInput

__all__ = ["HtmlArticle", "extract_html"]

logging.getLogger("trafilatura").setLevel(logging.ERROR)
logging.getLogger("htmldate").setLevel(logging.ERROR)


class HtmlArticle:
    def __init__(
        self,
        markdown: str,
        title: str | None,
        site: str | None,
        author: str | None,
        published: str | None,
        url: str | None,
    ) -> None:
        self.markdown = markdown
        self.title = title
        self.site = site
        self.author = author
        self.published = published
        self.url = url


_TITLE_SEPARATOR = re.compile(r"\s+[-|–—:·•]\s+")


def _without_site(title: str | None, site: str | None) -> str | None:
    """The headline without the site's name that pages append ("Headline - The Daily Site")."""
    if not title or not site:
        return title
    parts = _TITLE_SEPARATOR.split(title)

    def same(a: str) -> bool:
        key = re.sub(r"^the\s+", "", a.strip().casefold())
        return key == re.sub(r"^the\s+", "", site.strip().casefold())

    if len(parts) > 1 and same(parts[-1]):
        return title[: title.rfind(parts[-1])].rstrip(" -|–—:·•").strip() or title
    if len(parts) > 1 and same(parts[0]):
        return title[len(parts[0]) :].lstrip(" -|–—:·•").strip() or title
    return title


def extract_html(html: str, url: str | None = None) -> HtmlArticle:
    """Extract the article as Markdown (which keeps paragraph boundaries) plus its metadata."""
    try:
        markdown = trafilatura.extract(
            html,
            url=url,
            output_format="markdown",
            include_comments=False,
            include_tables=True,
            favor_recall=True,
        )
        meta = trafilatura.extract_metadata(html, default_url=url)
    except Exception as exc:
        # Hostile pages break the parser in many ways (thousands of nested tags recurse too
        # deep; a doctype inside an SVG style trips trafilatura's own assertions), as damaged
        # PDFs do pypdf: all mean the same, and are the page's fault.
        raise BadInput(
            "Could not read an article from that page; save its text and add it as a file."
        ) from exc
    if not markdown or not markdown.strip():
        raise BadInput(
            "Found no article text on that page; copy the article's text and add it as text."
        )
    site = meta.sitename if meta else None
    return HtmlArticle(
        markdown=markdown,
        title=_without_site(meta.title, site) if meta else None,
        site=meta.sitename if meta else None,
        author=meta.author if meta else None,
        published=meta.date if meta else None,
        url=(meta.url if meta and meta.url else None) or url,
    )
