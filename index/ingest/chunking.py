"""Paragraphs into passages: a paragraph longer than the model reads is split at sentences.

Token counts come from the model's tokenizer, a list of texts at a time (one call per
paragraph's sentences rather than one per sentence tried). For WordPiece and similar
tokenizers, which split at whitespace before anything else, the tokens of "a b" are the tokens
of "a" plus those of "b", so a passage's count is summed from its sentences'; every passage
built that way is checked with one exact count, and one that a tokenizer counted differently is
packed again sentence by sentence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from index.text import profile

__all__ = ["chunk_paragraphs"]

# Token counts for a list of texts, [CLS] and [SEP] included, as the model will see them.
Counter = Callable[[Sequence[str]], list[int]]


def chunk_paragraphs(
    paragraphs: list[str], count: Counter, max_tokens: int, language: str | None = None
) -> list[tuple[int, int, str]]:
    """(paragraph number from 1, piece number from 0, text) for every passage to embed; a long
    paragraph is cut at its sentences, as `language` (the article's) ends them."""
    # Cheap first test: a paragraph of few characters cannot exceed the token limit.
    maybe_long = [i for i, p in enumerate(paragraphs) if len(p) >= max_tokens - 2]
    sizes = dict(zip(maybe_long, count([paragraphs[i] for i in maybe_long]), strict=True))
    out: list[tuple[int, int, str]] = []
    for index, paragraph in enumerate(paragraphs):
        if sizes.get(index, 0) <= max_tokens:
            pieces = [paragraph]
        else:
            pieces = _split_paragraph(paragraph, count, max_tokens, language)
        out.extend((index + 1, piece, text) for piece, text in enumerate(pieces))
    return out


def _split_paragraph(paragraph: str, count: Counter, limit: int, language: str | None) -> list[str]:
    special = count([""])[0]  # the [CLS]/[SEP] tokens every passage carries
    sentences = list(profile(language).sentences(paragraph))
    parts: list[str] = []
    sizes: list[int] = []
    for sentence, size in zip(sentences, count(sentences), strict=True):
        if size > limit:  # a "sentence" with no full stops in it: cut between words
            cut = _split_long_sentence(sentence, count, limit, special)
            parts += cut
            sizes += count(cut)
        else:
            parts.append(sentence)
            sizes.append(size)
    groups = _pack(parts, [n - special for n in sizes], limit - special)
    pieces: list[str] = []
    for group, size in zip(groups, count([" ".join(g) for g in groups]), strict=True):
        if size <= limit:
            pieces.append(" ".join(group))
        else:  # a tokenizer for which counts do not add up: pack by exact counts instead
            pieces.extend(_pack_exactly(group, count, limit))
    return pieces


def _pack(parts: list[str], sizes: list[int], budget: int) -> list[list[str]]:
    """Consecutive parts grouped so that each group's summed sizes stay within the budget."""
    groups: list[list[str]] = []
    current: list[str] = []
    used = 0
    for part, size in zip(parts, sizes, strict=True):
        if current and used + size > budget:
            groups.append(current)
            current, used = [], 0
        current.append(part)
        used += size
    return groups + [current] if current else groups


def _pack_exactly(parts: list[str], count: Counter, limit: int) -> list[str]:
    pieces: list[str] = []
    current = ""
    for part in parts:
        joined = f"{current} {part}".strip()
        if current and count([joined])[0] > limit:
            pieces.append(current)
            current = part
        else:
            current = joined
    return pieces + [current] if current else pieces


def _split_long_sentence(sentence: str, count: Counter, limit: int, special: int) -> list[str]:
    """A 'sentence' over the limit (a wall of text with no full stops) is cut between words."""
    words = sentence.split()
    sizes = [max(1, n - special) for n in count(words)]
    pieces: list[str] = []
    for group in _pack(words, sizes, limit - special):
        pieces.extend(_halved_to_fit(group, count, limit))
    return pieces


def _halved_to_fit(words: list[str], count: Counter, limit: int) -> list[str]:
    """The words as one piece, or cut in halves until each fits: a tokenizer may read a word
    differently beside others (e5's reads "word1" as one token alone and two in a run), so
    the sum of single words' counts is an estimate to check."""
    joined = " ".join(words)
    if len(words) < 2 or count([joined])[0] <= limit:
        return [joined]
    middle = len(words) // 2
    return _halved_to_fit(words[:middle], count, limit) + _halved_to_fit(
        words[middle:], count, limit
    )
