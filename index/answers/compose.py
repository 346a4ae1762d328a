"""Extractive answers: the sentences that answer a question, each with its source number."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

from index.records import Answer, Article, Citation, Passage
from index.search.question_kinds import expected, supplies
from index.search.ranking import Hit, Terms, coverage, term_weights
from index.search.retrieval import Retrieved
from index.search.sentence_vectors import Meaning
from index.text.analysis import Analyzer
from index.text.profile import profile

__all__ = [
    "ABSTAIN_OTHER_LANGUAGE",
    "ABSTAIN_TEXT",
    "RULES",
    "QuoteRules",
    "compose",
    "fragment_link",
]

# The answer quotes sentences from this many of the best passages.
ANSWER_PASSAGES = 3


@dataclass(frozen=True)
class QuoteRules:
    """How the sentences an answer quotes are chosen: weights fitted by
    `python -m index.ops.bench.quotes` (its figures in the README)."""

    # A sentence's score: the share of the question's word weight it holds plus twice its
    # passage's score relative to the best passage's.
    passage_prior: float = 2.0
    # ... plus its closeness in meaning to the question: its cosine, embedded alone, beyond the
    # best of the candidates', on the rules' scale (retrieval.py), times this (`meaning_across`
    # for a question in another language than the articles', which shares only its names and
    # numbers with them, so that words cannot choose its sentence and meaning does). An answer
    # holds a gold answer (every question of the file), without meaning / with 0.5: XQuAD
    # English 0.869 / 0.873, German 0.789 / 0.816, Arabic 0.751 / 0.776, Turkish 0.785 / 0.805;
    # English articles with Chinese questions 0.397 / 0.557, Arabic 0.355 / 0.494 (1.0: the same
    # within 0.5 points; 2: English and Arabic 1 point lower).
    meaning: float = 0.5
    meaning_across: float = 0.5
    # Embedding a sentence alone costs about 20 ms on one core, so only the `alone` sentences
    # that the words and the stored sentence vectors put first (their score plus
    # `stored_meaning` times their stored cosine beyond the best) are embedded; the rest rank
    # below the last of them in meaning. On the same questions, `alone` 2 / 3 / 5 / every
    # sentence: English 0.871 / 0.870 / 0.873 / 0.873, German 0.812 / 0.815 / 0.817 / 0.816,
    # Arabic 0.776 / 0.776 / 0.776 / 0.776; across languages, where the words say less, Chinese
    # questions 0.533 / 0.540 / 0.555 / 0.557, Arabic 0.475 / 0.482 / 0.491 / 0.494. The stored
    # vectors alone chose worse (Chinese questions 0.487, Arabic 0.429).
    stored_meaning: float = 1.0
    alone: int = 2
    alone_across: int = 3
    # When another of those passages scores at least this share of the best one, the best of its
    # sentences joins the answer: nearly equal passages both speak to the question. On the SQuAD
    # tune half this took containment from 0.75 to 0.79 at 1.4 sentences an answer on average.
    second_passage: float = 0.8
    # A sentence that holds what the question asks for (a number for "how big",
    # question_kinds.py) gains this much over the definition beside it: SQuAD containment +0.5.
    kind: float = 0.3
    # News paragraphs are a sentence or two, and the answer is often in the one without the
    # question's words: a paragraph this short is quoted whole (news containment 0.468 ->
    # 0.492), else the next sentence joins when it scores within this much of the best (SQuAD
    # 0.741 -> 0.789).
    short_passage: int = 350
    next_sentence: float = 0.6
    # A quote shorter than this many characters (a clause, a Thai phrase, a heading-like line)
    # takes in the sentences around it, next first; and the next sentence, or another passage's
    # best, joins only while the answer stays within `budget` characters.
    # A gold answer in the answer (questions about the first half of each file's articles / the
    # second half / median characters): least 0 -> 150, XQuAD Arabic 0.744 / 0.735 / 276 ->
    # 0.747 / 0.742 / 287, German 0.802 / 0.792 / 317 -> 0.809 / 0.796 / 324; with meaning 0.5,
    # a budget of 300 / 400 / 500 / none: English 0.854 / 0.870 / 0.881 / 0.884 (229 / 258 /
    # 275 / 283 characters), Greek 0.742 / 0.755 / 0.767 / 0.794 (244 / 286 / 313 / 344).
    least_quote: int = 150
    budget: int = 440


RULES = QuoteRules()

ABSTAIN_TEXT = (
    "I could not find an answer to that in these articles. The closest passages are listed below."
)
ABSTAIN_OTHER_LANGUAGE = (
    "I could not find an answer to that in these articles, which are written in another "
    "language; asking in their language may help. The closest passages are listed below."
)

# A quotation that its attribution splits in two ("... ,” he said. “...”) is one statement, and
# counts as one sentence: when a chosen sentence ends with its speaker, a next sentence that
# opens a quote continues it.
_ATTRIBUTED = re.compile(
    r"[”\"’'],?\s+(?:\w+\s+){0,3}(?:said|says|added|told|asked|wrote)\b[^”\"“]*$"
)
_OPENS_QUOTE = re.compile(r"^[“\"‘]")
_MARKER_LIKE = re.compile(r"\[\s*(\d+)\s*\]")


@dataclass(frozen=True)
class _Sentence:
    hit_rank: int
    position: int  # the sentence's place in its passage
    text: str
    score: float
    words: float = 0.0  # the score without its closeness in meaning


def fragment_link(url: str | None, quote_text: str) -> str | None:
    """The article URL with a text fragment that scrolls a browser to the quoted sentence."""
    if not url:
        return None
    words = quote_text.split()
    if not words:
        return url

    def enc(part: list[str]) -> str:
        # '-' , '&' and ',' have meanings inside a text directive, so they are escaped too.
        return quote(" ".join(part), safe="").replace("-", "%2D")

    directive = enc(words) if len(words) <= 8 else f"{enc(words[:4])},{enc(words[-4:])}"
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


def _score_sentences(
    question: str,
    hits: list[Hit],
    items: list[tuple[int, int, str]],
    terms: Terms | None,
    tokenize: Analyzer,
    english: bool,
    rules: QuoteRules,
    meaning: Meaning | None,
    weight: float,
    alone: int,
) -> list[_Sentence]:
    weights = term_weights(question, tokenize, terms) if terms else {}
    top = hits[0].score or 1.0
    kind = expected(question) if english else None
    words = []
    for rank, _, sentence in items:
        cover = coverage(weights, [sentence], tokenize) if weights else 0.0
        if kind and supplies(sentence, kind, question):
            cover += rules.kind
        # The passage's own score is a prior: a good sentence in the best passage beats an
        # equally good one further down.
        words.append(cover + rules.passage_prior * hits[rank].score / top)
    close = [0.0] * len(items)
    if meaning is not None and weight and items and alone > 0:
        close = _closeness(hits, items, words, meaning, rules.stored_meaning, alone)
    return [
        _Sentence(rank, position, sentence, said + weight * nearness, said)
        for (rank, position, sentence), said, nearness in zip(items, words, close, strict=True)
    ]


# A sentence not embedded alone ranks this far below the last of those that were.
_NOT_READ_ALONE = 0.5


def _closeness(
    hits: list[Hit],
    items: list[tuple[int, int, str]],
    words: list[float],
    meaning: Meaning,
    stored_weight: float,
    alone: int,
) -> list[float]:
    """Each sentence's closeness in meaning, beyond the closest's: the `alone` sentences first
    by their words and their stored vectors embedded alone, the rest below them."""
    stored = meaning.stored([(hits[rank].passage_id, place, text) for rank, place, text in items])
    known = [c for c in stored if c is not None]
    best_stored = max(known, default=0.0)
    # A sentence without a stored vector is taken as close as the closest: it is not passed
    # over for want of one.
    first = [
        w + stored_weight * ((c if c is not None else best_stored) - best_stored)
        for w, c in zip(words, stored, strict=True)
    ]
    picked = sorted(range(len(items)), key=lambda i: -first[i])[:alone]
    cosines = meaning.alone([items[i][2] for i in picked])
    best, floor = max(cosines), min(cosines)
    close = [floor - best - _NOT_READ_ALONE] * len(items)
    for i, cosine in zip(picked, cosines, strict=True):
        close[i] = cosine - best
    return close


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


def _choose(hits: list[Hit], sentences: list[_Sentence], rules: QuoteRules) -> list[_Sentence]:
    """The best sentence (its whole paragraph when short, or with the next sentence when that
    scores nearly as well, or with those around it when it is too short to read alone), and the
    best of another passage that scores nearly as well."""
    best = max(sentences, key=lambda s: s.score)  # the first of equals: the earlier sentence
    chosen = _with_rest_of_quote(best, sentences)
    own = [s for s in sentences if s.hit_rank == best.hit_rank]
    if len(own) > 1 and sum(len(s.text) for s in own) <= rules.short_passage:
        chosen = own
    elif len(chosen) == 1:
        following = [s for s in own if s.position == best.position + 1]
        # Whether the next sentence goes on with the same statement is read on words alone: the
        # best sentence is, by its choosing, the closest in meaning.
        if (
            following
            and best.words - following[0].words <= rules.next_sentence
            and _length(chosen + following) <= rules.budget
        ):
            chosen = chosen + following
    chosen = _widened(chosen, own, rules)
    if best.hit_rank == 0:
        close = [
            s
            for s in sentences
            if s.hit_rank > 0 and hits[s.hit_rank].score >= rules.second_passage * hits[0].score
        ]
        if close:
            more = _with_rest_of_quote(max(close, key=lambda s: s.score), sentences)
            if _length(chosen + more) <= rules.budget:
                chosen += more
    return chosen


def _as_written(text: str, sentences: list[str]) -> str:
    """Sentences of `text`, in its order, joined as the text joins them where they are
    neighbours in it (Chinese and Japanese sentences with nothing between them, a line break
    where it has one), and by a space where something was left out between them."""
    out, end = "", 0
    for sentence in sentences:
        at = text.find(sentence, end)
        between = text[end:at] if at >= 0 else " "
        if out:
            out += between if at >= 0 and not between.strip() else " "
        out += sentence
        end = at + len(sentence) if at >= 0 else end
    return out


def _length(sentences: list[_Sentence]) -> int:
    return sum(len(s.text) + 1 for s in sentences)


def _widened(chosen: list[_Sentence], own: list[_Sentence], rules: QuoteRules) -> list[_Sentence]:
    """A quote shorter than `rules.least_quote` with the sentences next to it (the next one
    first), as long as it stays within `rules.budget` characters."""
    by_position = {s.position: s for s in own}
    length = sum(len(s.text) + 1 for s in chosen)
    first, last = min(s.position for s in chosen), max(s.position for s in chosen)
    while length < rules.least_quote:
        step = next(
            (
                p
                for p in (last + 1, first - 1)
                if p in by_position and length + len(by_position[p].text) <= rules.budget
            ),
            None,
        )
        if step is None:
            break
        chosen = [*chosen, by_position[step]]
        length += len(by_position[step].text) + 1
        first, last = min(first, step), max(last, step)
    return chosen


def compose(
    question: str,
    retrieved: Retrieved | None,
    articles: dict[int, Article],
    rules: QuoteRules = RULES,
) -> Answer:
    """The cited answer to `question` from what retrieval found (None: nothing to search)."""
    if retrieved is None:
        return _compose(question, [], {}, articles)
    return _compose(
        question,
        retrieved.hits,
        retrieved.passages,
        articles,
        terms=retrieved.terms,
        relevant=retrieved.relevant,
        english=retrieved.english,
        native=retrieved.reading.native,
        tokenize=retrieved.language.words,
        searched=retrieved.searched,
        rules=rules,
        meaning=retrieved.meaning,
    )


def _compose(
    question: str,
    hits: list[Hit],
    passages: dict[int, Passage],
    articles: dict[int, Article],
    *,
    terms: Terms | None = None,
    relevant: bool = True,
    english: bool = True,
    native: bool = True,
    tokenize: Analyzer | None = None,
    searched: str | None = None,
    rules: QuoteRules = RULES,
    meaning: Meaning | None = None,
) -> Answer:
    """Build the answer from ranked hits, or abstain when the best hit is not `relevant`.

    `terms` (the keyword index) weighs the words of `searched`, the question as retrieval
    searched it (misspellings corrected), by default the question itself.
    """
    if not hits:
        return Answer(
            question, "There are no articles to answer from yet; add one first.", True, []
        )
    abstained = not relevant
    # Declined or not, every hit asked for is cited: when declined, they are the closest
    # passages, for the reader to judge.
    shown = hits
    items = _split(shown[:ANSWER_PASSAGES], passages, articles)
    tokenize = tokenize or profile(None).words
    sentences = _score_sentences(
        searched or question,
        shown,
        items,
        terms,
        tokenize,
        english,
        rules,
        None if abstained else meaning,
        rules.meaning if native else rules.meaning_across,
        rules.alone if native else rules.alone_across,
    )
    best_by_rank: dict[int, _Sentence] = {}
    for s in sentences:
        if s.hit_rank not in best_by_rank or s.score > best_by_rank[s.hit_rank].score:
            best_by_rank[s.hit_rank] = s
    chosen = _choose(shown, sentences, rules) if sentences and not abstained else []

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
