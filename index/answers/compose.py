"""Extractive answers: the sentences that answer a question, each with its source number."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

from index.answers import quote_choice
from index.answers.quote_choice import RULES, QuoteRules
from index.messages.catalogue import N_
from index.records import Answer, Article, Citation, Passage
from index.search.ranking import Hit
from index.search.retrieval import Retrieved
from index.text import profile

__all__ = [
    "ABSTAIN_OTHER_LANGUAGE",
    "ABSTAIN_TEXT",
    "NO_ARTICLES",
    "candidates",
    "compose",
    "fragment_link",
]

# The answer quotes sentences from this many of the best passages.
ANSWER_PASSAGES = 3


# The bot's own words, in English: the edges give them in the reader's language (index/messages).
ABSTAIN_TEXT = N_(
    "I could not find an answer to that in these articles. The closest passages are listed below."
)
ABSTAIN_OTHER_LANGUAGE = N_(
    "I could not find an answer to that in these articles, which are written in another "
    "language; asking in their language may help. The closest passages are listed below."
)
NO_ARTICLES = N_("There are no articles to answer from yet; add one first.")

# A quotation that its attribution splits in two ("... ,” he said. “...”) is one statement, and
# counts as one sentence: when a chosen sentence ends with its speaker, a next sentence that
# opens a quote continues it.
_ATTRIBUTED = re.compile(
    r"[”\"’'],?\s+(?:\w+\s+){0,3}(?:said|says|added|told|asked|wrote)\b[^”\"“]*$"
)
_OPENS_QUOTE = re.compile(r"^[“\"‘]")
_MARKER_LIKE = re.compile(r"\[\s*(\d+)\s*\]")
# Where a quote leaves something of its passage out (`_as_written`).
_LEFT_OUT = re.compile(" … |…")


@dataclass(frozen=True)
class _Sentence:
    hit_rank: int
    position: int  # the sentence's place in its passage
    text: str
    chance: float  # of holding the answer


def fragment_link(url: str | None, quote_text: str) -> str | None:
    """The article URL with a text fragment that scrolls a browser to the quoted sentence (from
    the first words of a quote's first slice to the last words of its last: the ellipsis
    between slices is not on the page)."""
    if not url:
        return None
    parts = [words for part in _LEFT_OUT.split(quote_text) if (words := part.split())]
    if not parts:
        return url

    def enc(part: list[str]) -> str:
        # '-' , '&' and ',' have meanings inside a text directive, so they are escaped too.
        return quote(" ".join(part), safe="").replace("-", "%2D")

    if len(parts) == 1 and len(parts[0]) <= 8:
        directive = enc(parts[0])
    else:
        directive = f"{enc(parts[0][:4])},{enc(parts[-1][-4:])}"
    return f"{url.split('#', 1)[0]}#:~:text={directive}"


def _split(
    hits: list[Hit], passages: dict[int, Passage], articles: dict[int, Article]
) -> list[tuple[int, int, str]]:
    items: list[tuple[int, int, str]] = []
    for rank, hit in enumerate(hits):
        passage = passages[hit.passage_id]
        language = profile(articles[passage.article_id].language)
        for position, sentence in enumerate(language.sentences(passage.text)):
            items.append((rank, position, sentence))
    return items


def _with_rest_of_quote(sentence: _Sentence, sentences: list[_Sentence]) -> list[_Sentence]:
    """The sentence, and the next one too when it carries on a quotation this one attributes."""
    if not _ATTRIBUTED.search(sentence.text):
        return [sentence]
    following = [
        s
        for s in sentences
        if s.hit_rank == sentence.hit_rank and s.position == sentence.position + 1
    ]
    if following and _OPENS_QUOTE.match(following[0].text):
        return [sentence, following[0]]
    return [sentence]


def _choose(sentences: list[_Sentence], rules: QuoteRules, cost: float) -> list[_Sentence]:
    """The run of neighbouring sentences worth most (quote_choice.best_run), widened when too
    short to read alone, carried on when it ends by attributing a quotation that goes on; and
    the run of another passage worth more than nothing, when it fits."""
    places = [(s.hit_rank, s.position) for s in sentences]
    lengths = [len(s.text) for s in sentences]
    chances = [s.chance for s in sentences]
    _, run = quote_choice.best_run(places, lengths, chances, cost, rules.budget)
    chosen = [sentences[i] for i in run] or [max(sentences, key=lambda s: s.chance)]
    rank = chosen[0].hit_rank
    own = [s for s in sentences if s.hit_rank == rank]
    chosen = _widened(chosen, own, rules)
    last = max(chosen, key=lambda s: s.position)
    chosen += [s for s in _with_rest_of_quote(last, sentences) if s not in chosen]
    room = rules.budget - _length(chosen)
    # Only sentences that fit the room join: one longer would be priced at the room alone.
    others = [i for i, s in enumerate(sentences) if s.hit_rank != rank and lengths[i] < room]
    if others and room > 0:
        value, more = quote_choice.best_run(
            [places[i] for i in others],
            [lengths[i] for i in others],
            [chances[i] for i in others],
            cost,
            room,
        )
        joining = [sentences[others[i]] for i in more]
        if value > 0 and _length(chosen + joining) <= rules.budget:
            chosen += joining
    return chosen


def _as_written(text: str, sentences: list[str]) -> str:
    """Sentences of `text`, in its order, as slices of it: neighbours joined as the text joins
    them (Chinese and Japanese sentences with nothing between them, a line break where it has
    one), and an ellipsis where something was left out between them: "…" where the text has no
    space there, " … " where it has one."""
    out, end = "", 0
    for sentence in sentences:
        at = text.find(sentence, end)
        if at < 0:  # not in the text after the last one: what follows is not a slice of it
            break
        between = text[end:at]
        if out:
            if between.strip():
                between = " … " if any(c.isspace() for c in between) else "…"
            out += between
        out += sentence
        end = at + len(sentence)
    return out


def _length(sentences: list[_Sentence]) -> int:
    return sum(len(s.text) + 1 for s in sentences)


def _widened(chosen: list[_Sentence], own: list[_Sentence], rules: QuoteRules) -> list[_Sentence]:
    """A quote shorter than `rules.least_quote` with the sentences next to it (the likelier of
    the two first), as long as it stays within `rules.budget` characters."""
    by_position = {s.position: s for s in own}
    length = sum(len(s.text) + 1 for s in chosen)
    first, last = min(s.position for s in chosen), max(s.position for s in chosen)
    while length < rules.least_quote:
        fitting = [
            by_position[p]
            for p in (last + 1, first - 1)
            if p in by_position and length + len(by_position[p].text) + 1 <= rules.budget
        ]
        if not fitting:
            break
        step = max(fitting, key=lambda s: s.chance)  # the first of equals: the next one
        chosen = [*chosen, step]
        length += len(step.text) + 1
        first, last = min(first, step.position), max(last, step.position)
    return chosen


def candidates(
    question: str,
    retrieved: Retrieved,
    articles: dict[int, Article],
    rules: QuoteRules = RULES,
    *,
    meaning: bool = True,
) -> tuple[list[tuple[int, int, str]], quote_choice.Evidence]:
    """The sentences an answer to `question` would quote from, as (the passage's rank, place in
    it, text), and what is read of each (`meaning`: their closeness in meaning too): what the
    answer chooses from, and what `python -m tools.fit_quotes` learns from."""
    items = _split(retrieved.hits[:ANSWER_PASSAGES], retrieved.passages, articles)
    native = retrieved.reading.native
    evidence = quote_choice.evidence(
        retrieved.searched or question,
        retrieved.hits,
        items,
        retrieved.terms,
        retrieved.language.words,
        retrieved.english,
        rules,
        retrieved.meaning if meaning else None,
        rules.alone if native else rules.alone_across,
        retrieved.reading.asked_in,
    )
    return items, evidence


def compose(
    question: str,
    retrieved: Retrieved | None,
    articles: dict[int, Article],
    rules: QuoteRules = RULES,
) -> Answer:
    """The cited answer to `question` from what retrieval found (None: nothing to search), or
    a decline when its best passage is not `relevant`."""
    if retrieved is None or not retrieved.hits:
        return Answer(question, NO_ARTICLES, True, [])
    abstained = not retrieved.relevant
    native = retrieved.reading.native
    # Declined or not, every hit asked for is cited: when declined, they are the closest
    # passages, for the reader to judge. A declined answer quotes each passage's likeliest
    # sentence by its words: no sentence is embedded for it.
    shown, passages = retrieved.hits, retrieved.passages
    items, evidence = candidates(question, retrieved, articles, rules, meaning=not abstained)
    weights = quote_choice.shipped() if native else quote_choice.across_weights(rules)
    sentences = [
        _Sentence(rank, position, text, float(chance))
        for (rank, position, text), chance in zip(
            items, weights.chances(quote_choice.table(evidence)), strict=True
        )
    ]
    best_by_rank: dict[int, _Sentence] = {}
    for s in sentences:
        if s.hit_rank not in best_by_rank or s.chance > best_by_rank[s.hit_rank].chance:
            best_by_rank[s.hit_rank] = s
    cost = rules.length_cost if native else rules.length_cost_across
    chosen = _choose(sentences, rules, cost) if sentences and not abstained else []

    citations: list[Citation] = []
    for n, hit in enumerate(shown, start=1):
        passage = passages[hit.passage_id]
        article = articles[passage.article_id]
        used = sorted((s for s in chosen if s.hit_rank == n - 1), key=lambda s: s.position)
        fallback = best_by_rank.get(n - 1)
        quote_text = _as_written(passage.text, [s.text for s in used]) or (
            fallback.text if fallback else passage.text
        )
        citations.append(
            Citation(
                n=n,
                article_id=article.id,
                title=article.title,
                url=article.url,
                paragraph=passage.paragraph,
                text=passage.text,
                quote=quote_text,
                score=hit.score,
                site=article.site,
                published=article.published,
                author=article.author,
                link=fragment_link(article.url, quote_text),
            )
        )
    if abstained:
        return Answer(question, ABSTAIN_TEXT if native else ABSTAIN_OTHER_LANGUAGE, True, citations)
    # Sentences keep the order they have in the sources, so the answer reads naturally.
    chosen.sort(key=lambda s: (s.hit_rank, s.position))
    parts = []
    for rank in dict.fromkeys(s.hit_rank for s in chosen):
        text = passages[shown[rank].passage_id].text
        quoted = _as_written(text, [s.text for s in chosen if s.hit_rank == rank])
        # Only the answer's own markers are "[n]": an article's "[2]" would cite another source.
        quoted = _MARKER_LIKE.sub(r"(\1)", quoted)
        parts.append(f"{quoted} [{rank + 1}]")
    return Answer(question, " ".join(parts), False, citations)
