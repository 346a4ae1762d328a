"""Text out of PDF files (pypdf): the only module that imports it."""

from __future__ import annotations

import io
import logging

from pypdf import PdfReader

from index.errors import BadInput
from index.messages.catalogue import N_

__all__ = ["pdf_text"]

logging.getLogger("pypdf").setLevel(logging.ERROR)


def _too_long(limit: int) -> BadInput:
    return BadInput(
        N_(
            "That PDF holds more than {limit} characters of text, the limit for one article; "
            "add the article's own pages as a shorter PDF or as text."
        ),
        limit=f"{limit:,}",
    )


def pdf_text(
    data: bytes, max_chars: int = 2_000_000, max_pages: int = 1_000
) -> tuple[str | None, str]:
    """(title from the PDF's metadata, text with blank lines between paragraphs).

    The limits hold for the text, read page by page: a few kB of PDF can repeat one compressed
    page thousands of times, so the file's size says nothing of what it holds.
    """
    if not data.startswith(b"%PDF-"):
        raise BadInput(N_("That file is not a real PDF; export the article as PDF or text again."))
    try:
        reader = PdfReader(io.BytesIO(data))
        if len(reader.pages) > max_pages:
            raise BadInput(
                N_(
                    "That PDF has {pages} pages, more than the limit of {limit}; "
                    "add the article's own pages as a shorter PDF."
                ),
                pages=f"{len(reader.pages):,}",
                limit=f"{max_pages:,}",
            )
        pages: list[str] = []
        length = 0
        for page in reader.pages:
            pages.append(page.extract_text() or "")
            length += len(pages[-1])
            if length > max_chars:
                raise _too_long(max_chars)
        title = reader.metadata.title if reader.metadata else None
    except BadInput:
        raise
    except Exception as exc:
        # A damaged file fails deep inside pypdf in many ways besides its own errors (an unknown
        # filter is NotImplementedError, a bad stream a zlib or struct error): all mean the same.
        raise BadInput(
            N_("Could not read that PDF; export the article as PDF or text again.")
        ) from exc
    text = "\n\n".join(pages).strip()
    if not text:
        raise BadInput(N_("That PDF has no text layer (it may be scanned); add the text instead."))
    return (str(title).strip() or None) if title else None, text
