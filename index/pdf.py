"""Text out of PDF files (pypdf): the only module that imports it."""

from __future__ import annotations

import io
import logging

from pypdf import PdfReader

from .errors import BadInput

__all__ = ["pdf_text"]

logging.getLogger("pypdf").setLevel(logging.ERROR)


def pdf_text(data: bytes) -> tuple[str | None, str]:
    """(title from the PDF's metadata, text with blank lines between paragraphs)."""
    if not data.startswith(b"%PDF-"):
        raise BadInput("That file is not a real PDF; export the article as PDF or text again.")
    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
        title = reader.metadata.title if reader.metadata else None
    except Exception as exc:
        # A damaged file fails deep inside pypdf in many ways besides its own errors (an unknown
        # filter is NotImplementedError, a bad stream a zlib or struct error): all mean the same.
        raise BadInput("Could not read that PDF; export the article as PDF or text again.") from exc
    text = "\n\n".join(pages).strip()
    if not text:
        raise BadInput("That PDF has no text layer (it may be scanned); add the text instead.")
    return (str(title).strip() or None) if title else None, text
