"""Paragraphs into passages: a paragraph longer than the model reads is split at sentences."""

from __future__ import annotations

from collections.abc import Callable

from .sentences import split_sentences

__all__ = ["chunk_paragraphs"]


def _split_long_sentence(sentence: str, count: Callable[[str], int], limit: int) -> list[str]:
    """A 'sentence' over the limit (a wall of text with no full stops) is cut between words."""
    special = count("")  # the [CLS]/[SEP] tokens every passage carries
    pieces: list[str] = []
    current: list[str] = []
    used = special
    for word in sentence.split():
        cost = max(1, count(word) - special)
        if current and used + cost > limit:
            pieces.append(" ".join(current))
            current, used = [], special
        current.append(word)
        used += cost
    if current:
        pieces.append(" ".join(current))
    return pieces


def chunk_paragraphs(
    paragraphs: list[str], count_tokens: Callable[[str], int], max_tokens: int
) -> list[tuple[int, int, str]]:
    """(paragraph number from 1, piece number from 0, text) for every passage to embed."""
    out: list[tuple[int, int, str]] = []
    for number, paragraph in enumerate(paragraphs, start=1):
        # Cheap first test: a paragraph of few words cannot exceed the token limit.
        if len(paragraph) < max_tokens - 2 or count_tokens(paragraph) <= max_tokens:
            out.append((number, 0, paragraph))
            continue
        pieces: list[str] = []
        current = ""
        for sentence in split_sentences(paragraph):
            parts = (
                _split_long_sentence(sentence, count_tokens, max_tokens)
                if count_tokens(sentence) > max_tokens
                else [sentence]
            )
            for part in parts:
                joined = f"{current} {part}".strip()
                if current and count_tokens(joined) > max_tokens:
                    pieces.append(current)
                    current = part
                else:
                    current = joined
        if current:
            pieces.append(current)
        out.extend((number, piece, text) for piece, text in enumerate(pieces))
    return out
