"""Pages that are not articles: a consent or login wall, a bot check, an error page, a stub;
and links to no page at all (an image, a video).

Such a page is refused with one sentence that says which it is and what to do, instead of being
stored as an article called "Consent" whose paragraph is "Already a subscriber? Log in.". A wall
is recognised by its wording and by the little article text left beside it: a real article that
mentions cookies, or carries a subscription prompt beside 150 words of story or more, is kept.
"""

from __future__ import annotations

import re

from index.errors import BadInput, FetchRefused
from index.ingest.paragraphs import Split
from index.messages.catalogue import N_

__all__ = ["MIN_WORDS", "not_an_article", "refuse_non_article"]

# Fewer words than this is not an article (a headline with a teaser, a gallery's caption).
MIN_WORDS = 25
# Beside a wall, fewer words than this are its teaser, not the article.
_TEASER_WORDS = 150

# A content type as a message may name it: anything else a server sends is not shown.
_MEDIA_TYPE = re.compile(r"[a-z0-9][a-z0-9.+_-]{0,63}/[a-z0-9][a-z0-9.+_-]{0,63}")

_FLAGS = re.IGNORECASE | re.VERBOSE
_SCRIPT = re.compile(
    r"""\b(enable\ javascript|javascript\ (is\ )?(disabled|required|turned\ off|needed)
      | (requires|needs)\ javascript|turn\ on\ javascript|checking\ (if\ the\ site|your\ browser)
      | verify(ing)?\ (that\ )?you\ are\ (a\ )?human|are\ you\ a\ robot|not\ a\ robot
      | captcha|unusual\ traffic|just\ a\ moment|ddos\ protection|access\ denied)\b""",
    _FLAGS,
)
_CONSENT = re.compile(
    r"""\b((we|this\ (web)?site)\ uses?\ cookies|accept\ (all|cookies)|reject\ all
      | cookie\ (policy|settings|preferences|notice|consent|banner)
      | manage\ (cookies|preferences|options|consent|settings)
      | we\ and\ our\ (\d+\ )?(partners|vendors)|privacy\ (choices|settings|preferences)
      | consent\ to\ (the|our)\ use|legitimate\ interests?|before\ you\ continue)\b""",
    _FLAGS,
)
_WALL = re.compile(
    r"""\b((subscribe|sign\ up|register|log\ ?in|sign\ in)\ (now\ |today\ )?to\ (continue|keep|read)
      | already\ a\ (subscriber|member)|for\ subscribers\ only|subscribers?\ only
      | (this|the)\ (article|story|content)\ is\ (only\ )?(for|available\ to)\ (subscribers|members)
      | create\ a\ free\ account|reached\ your\ (free\ )?(article\ )?limit
      | free\ articles?\ (left|remaining)|continue\ reading\ with\ a\ subscription)\b""",
    _FLAGS,
)
_ERROR = re.compile(
    r"""\b(page\ (not\ found|cannot\ be\ found|could\ not\ be\ found|does\ not\ exist
      | doesn[\'’]t\ exist|no\ longer\ exists)|(error|http)\ 40[34]|40[34]\ (error|not\ found)
      | error\ 5\d\d|5\d\d\ (internal\ )?server\ error|internal\ server\ error
      | service\ unavailable|(article|story|page)\ (is\ )?(no\ longer|not)\ available
      | we\ can(no|[\'’])t\ find\ (that|the|this)\ page)\b""",
    _FLAGS,
)

_REFUSALS = [
    (
        _SCRIPT,
        N_(
            "That page shows a “JavaScript required” or bot check instead of the article; open "
            "it in a browser, copy the article's text and paste it instead."
        ),
    ),
    (
        _CONSENT,
        N_(
            "That page shows a cookie-consent notice instead of the article; open it in a "
            "browser, answer the notice, copy the article's text and paste it instead."
        ),
    ),
    (
        _WALL,
        N_(
            "That page is behind a login or subscription wall; if you can read it, copy the "
            "article's text and paste it or attach it as a file instead."
        ),
    ),
]


def _words(lines: list[str]) -> int:
    return sum(len(line.split()) for line in lines)


def refuse_non_article(title: str | None, split: Split, *, min_words: int = MIN_WORDS) -> None:
    """Raise BadInput, naming what the page is, when its main text is not an article."""
    lines = [*split.paragraphs, *split.skipped]
    heads = [title or "", *(h for h in split.headings if h)]
    walls = (_SCRIPT, _CONSENT, _WALL, _ERROR)
    story = _words([p for p in split.paragraphs if not any(w.search(p) for w in walls)])
    if story < _TEASER_WORDS:
        for pattern, refusal in _REFUSALS:
            if any(pattern.search(line) for line in heads + lines):
                raise BadInput(refusal)
        error = next((line for line in heads + lines if _ERROR.search(line)), None)
        if error is not None:
            raise BadInput(
                N_("That page is an error page (“{quote}”), not an article; check the link."),
                quote=" ".join(error.split()[:8]),
            )
    words = _words(split.paragraphs)
    if words < min_words:
        raise BadInput(
            N_(
                "That page holds only {words} word of article text, too few for an article; "
                "check the link, or paste the article's text instead."
            )
            if words == 1
            else N_(
                "That page holds only {words} words of article text, too few for an article; "
                "check the link, or paste the article's text instead."
            ),
            words=f"{words:,}",
        )


def not_an_article(content_type: str) -> FetchRefused:
    """The refusal of a link served as `content_type` (an image, a video), which names what it
    is instead (the type itself only when it is well formed: a stranger's header may hold
    anything)."""
    if not _MEDIA_TYPE.fullmatch(content_type):
        return FetchRefused(
            N_(
                "That link is a file of an unsupported type, not an article; "
                "link to a web page, text or PDF."
            )
        )
    if content_type.startswith("image/"):
        message = N_(
            "That link is an image ({type}), not an article; link to a web page, text or PDF."
        )
    elif content_type.startswith("video/"):
        message = N_(
            "That link is a video ({type}), not an article; link to a web page, text or PDF."
        )
    elif content_type.startswith("audio/"):
        message = N_(
            "That link is an audio file ({type}), not an article; link to a web page, text or PDF."
        )
    else:
        message = N_(
            "That link is a file of type {type}, not an article; link to a web page, text or PDF."
        )
    return FetchRefused(message, type=content_type)
