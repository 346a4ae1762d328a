"""Main text and metadata out of HTML (trafilatura): the only module that imports it."""

from __future__ import annotations

import logging
import re

import trafilatura
from lxml.html import HtmlElement
from trafilatura.utils import load_html

from index.errors import BadInput
from index.ingest.bylines import clean_author
from index.ingest.page_check import refuse_non_article
from index.ingest.paragraphs import split_paragraphs
from index.messages.catalogue import N_
from index.text import KEPT_SPACES

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


# What a cell of a layout table holds and a data table's cell does not: the blocks of a page.
_BLOCKS = "p|div|h1|h2|h3|h4|h5|h6|ul|ol|table|blockquote|article|section"
_LAYOUT_WORDS = 60


def _is_layout(table: HtmlElement) -> bool:
    """A table that lays out a page (old sites put the whole article in one cell), not data."""
    cells = table.xpath("./tr/td|./tr/th|./*/tr/td|./*/tr/th")
    for cell in cells:
        blocks = cell.xpath(f".//*[self::{' or self::'.join(_BLOCKS.split('|'))}]")
        if len(blocks) >= 2 or len(cell.text_content().split()) > _LAYOUT_WORDS:
            return True
    return False


def _unwrap_layout_tables(tree: HtmlElement) -> None:
    """Turn layout tables into plain blocks, so that the extractor reads their paragraphs as
    paragraphs rather than one table cell of 2,000 words. Inner tables first: a data table
    inside a layout table stays a table."""
    for table in reversed(tree.xpath("//table")):
        if _is_layout(table):
            for part in table.xpath("./tr|./*/tr|./tr/td|./tr/th|./*/tr/td|./*/tr/th|./*"):
                part.tag = "div"
            table.tag = "div"


# The spaces an author writes (a no-break space, an ideographic one: index/text keeps them):
# trafilatura folds every space of a page into a plain one, and drops what does not print, so
# they are handed to it as stand-ins it keeps (the control pictures ␀␁␂␃, symbols no article
# writes; a page that holds one keeps its spaces folded) and put back in what it returns.
_STAND_INS = {ord(space): chr(0x2400 + i) for i, space in enumerate(KEPT_SPACES)}
_PUT_BACK = {ord(stand_in): chr(space) for space, stand_in in _STAND_INS.items()}


def _stand_in_for_kept_spaces(tree: HtmlElement) -> dict[int, str]:
    """Put the stand-ins in; what turns them back into spaces (nothing for a page that writes
    a stand-in itself: putting back would make its symbol a space)."""
    if any(chr(c) in text for text in tree.itertext() for c in _PUT_BACK):
        return {}
    for node in tree.iter():
        if isinstance(node.text, str):
            node.text = node.text.translate(_STAND_INS)
        if isinstance(node.tail, str):
            node.tail = node.tail.translate(_STAND_INS)
    return _PUT_BACK


def extract_html(html: str, url: str | None = None) -> HtmlArticle:
    """Extract the article as Markdown (which keeps paragraph boundaries) plus its metadata."""
    try:
        tree = load_html(html)
        if tree is None:
            raise ValueError("not HTML")
        _unwrap_layout_tables(tree)
        put_back = _stand_in_for_kept_spaces(tree)
        markdown = trafilatura.extract(
            tree,
            url=url,
            output_format="markdown",
            include_comments=False,
            include_tables=True,
            favor_recall=True,
        )
        meta = trafilatura.extract_metadata(tree, default_url=url)
        markdown = markdown.translate(put_back) if markdown else markdown
        if meta:
            for field in ("title", "sitename", "author"):
                if isinstance(value := getattr(meta, field), str):
                    setattr(meta, field, value.translate(put_back))
    except Exception as exc:
        # Hostile pages break the parser in many ways (thousands of nested tags recurse too
        # deep; a doctype inside an SVG style trips trafilatura's own assertions), as damaged
        # PDFs do pypdf: all mean the same, and are the page's fault.
        raise BadInput(
            N_("Could not read an article from that page; save its text and add it as a file.")
        ) from exc
    if not markdown or not markdown.strip():
        # The extractor found no article; the page's own words may still say what it is
        # (a bot check, a consent wall), which tells the user more than "no text".
        visible = tree.xpath("//body//text()[not(ancestor::script or ancestor::style)]")
        words = split_paragraphs("\n".join(visible)[:100_000].translate(put_back))
        refuse_non_article(meta.title if meta else None, words, min_words=0)
        raise BadInput(
            N_("Found no article text on that page; copy the article's text and add it as text.")
        )
    site = meta.sitename if meta else None
    return HtmlArticle(
        markdown=markdown,
        title=_without_site(meta.title, site) if meta else None,
        site=meta.sitename if meta else None,
        author=clean_author(meta.author, site) if meta else None,
        published=meta.date if meta else None,
        url=(meta.url if meta and meta.url else None) or url,
    )
