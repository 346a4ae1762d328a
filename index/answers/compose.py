"""Extractive answers: the sentences that answer a question, each with its source number."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

import numpy as np

from index.answers import quote_choice
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
    "candidates",
    "compose",
    "fragment_link",
]

# The answer quotes sentences from this many of the best passages.
ANSWER_PASSAGES = 3


@dataclass(frozen=True)
class QuoteRules:
    """How the sentences an answer quotes are chosen (quote_choice.py): which are embedded
    alone, and what a character of quote costs. Fitted by `python -m index.ops.bench.quotes`
    (its figures in the README); the weights that read the sentences are data of their own."""

    # Embedding a sentence alone costs about 20 ms on one core, so only the `alone` sentences
    # put first by their words (their share of the question's word weight, plus `kind` when
    # they hold what the question asks for, plus `passage_prior` times their passage's score
    # over the best one's) and by their stored vectors (`stored_meaning` times their stored
    # cosine beyond the best) are; the rest rank below the last of them in meaning. On the same
    # questions (measured with the hand scores that chose quotes before the fitted chances),
    # `alone` 2 / 3 / 5 / every sentence: English 0.871 / 0.870 / 0.873 / 0.873,
    # German 0.812 / 0.815 / 0.817 / 0.816, Arabic 0.776 / 0.776 / 0.776 / 0.776; across
    # languages, where the words say less, Chinese questions 0.533 / 0.540 / 0.555 / 0.557,
    # Arabic 0.475 / 0.482 / 0.491 / 0.494. The stored vectors alone chose worse (Chinese
    # questions 0.487, Arabic 0.429).
    passage_prior: float = 2.0
    kind: float = 0.3
    stored_meaning: float = 1.0
    alone: int = 2
    alone_across: int = 3
    # A run of sentences is worth the chances that one of them holds the answer, less
    # `length_cost` per 100 characters: the quote is the run worth most, and a run from another
    # passage joins it when it is worth more than nothing and the answer stays within `budget`.
    # Fit half / check half / median characters (`python -m index.ops.bench.quotes --grid
    # length`), 0.03 / 0.04 / 0.05 / 0.06: XQuAD English 0.905/0.885/266, 0.902/0.887/257,
    # 0.903/0.887/249, 0.903/0.882/242; Arabic 0.809/0.805/318, 0.805/0.806/292,
    # 0.802/0.797/274, 0.796/0.794/258; SQuAD (2,000 questions) 0.829/0.829/276,
    # 0.831/0.825/263, 0.829/0.822/258, 0.826/0.820/250. 0.05 keeps the median of a language
    # whose sentences run long (Arabic, Greek) clear of 300 characters.
    length_cost: float = 0.05
    # A question in another language than the articles' shares only its names and numbers with
    # them, and the fitted weights, which read words as the training questions (in the
    # articles' language) use them, choose worse for it (English articles, Chinese questions:
    # the likeliest sentence holds a gold answer 0.518 of the time, 0.561 by the hand scores).
    # Its chances are the hand scores (`_across`) times `across_sharpness`, and its quote costs
    # `length_cost_across`: English articles with Chinese / Arabic / Russian questions (fit
    # half / check half / median) 0.590/0.516/292, 0.497/0.504/290, 0.665/0.622/275 (sharpness
    # 4: 0.576/0.496/319, 0.494/0.484/324, 0.668/0.608/320; 16: 0.581/0.516/254,
    # 0.481/0.500/256, 0.646/0.616/240).
    length_cost_across: float = 0.08
    across_sharpness: float = 8.0
    across_meaning: float = 0.5  # the hand score's weight of the cosine embedded alone
    # A quote shorter than this many characters (a clause, a heading-like line) takes in the
    # likelier of the sentences beside it while it stays within `budget` characters: 0 / 80 /
    # 120 / 150, XQuAD English 0.899/0.882/223, 0.900/0.882/226, 0.903/0.887/250,
    # 0.903/0.887/265; Arabic 0.801/0.792/258, 0.801/0.794/260, 0.802/0.797/274,
    # 0.805/0.801/283.
    least_quote: int = 120
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
    score: float  # its chance of holding the answer


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
    alone: int,
    native: bool = True,
) -> list[_Sentence]:
    """Each candidate sentence with its chance of holding the answer (quote_choice.py)."""
    evidence = _evidence(question, hits, items, terms, tokenize, english, rules, meaning, alone)
    weights = quote_choice.shipped() if native else _across(rules)
    chances = weights.chances(quote_choice.table(evidence))
    return [
        _Sentence(rank, position, text, float(chance))
        for (rank, position, text), chance in zip(items, chances, strict=True)
    ]


def _across(rules: QuoteRules) -> quote_choice.QuoteWeights:
    """The chances of a question asked in another language than the articles': its hand scores
    (the share of its word weight a sentence holds, what it asks for, the passage's score, the
    closeness in meaning) as the weights of a softmax."""
    hand = {
        "words": 1.0,
        "kind": rules.kind,
        "passage": rules.passage_prior,
        "alone": rules.across_meaning,
    }
    n = len(quote_choice.FEATURES)
    return quote_choice.QuoteWeights(
        np.array([rules.across_sharpness * hand.get(f, 0.0) for f in quote_choice.FEATURES]),
        np.zeros(n),
        np.ones(n),
    )


def _evidence(
    question: str,
    hits: list[Hit],
    items: list[tuple[int, int, str]],
    terms: Terms | None,
    tokenize: Analyzer,
    english: bool,
    rules: QuoteRules,
    meaning: Meaning | None,
    alone: int,
) -> quote_choice.Evidence:
    """What the words and the model say of each candidate sentence (None: no meaning asked)."""
    weights = term_weights(question, tokenize, terms) if terms else {}
    top = hits[0].score or 1.0
    kind = expected(question) if english else None
    cover = [coverage(weights, [text], tokenize) if weights else 0.0 for _, _, text in items]
    supplied = [1.0 if kind and supplies(text, kind, question) else 0.0 for _, _, text in items]
    # The passage's own score is a prior: a good sentence in the best passage beats an equally
    # good one further down.
    prior = [hits[rank].score / top for rank, _, _ in items]
    close = stored = read = [0.0] * len(items)
    if meaning is not None and items and alone > 0:
        words = [
            c + rules.kind * k + rules.passage_prior * p
            for c, k, p in zip(cover, supplied, prior, strict=True)
        ]
        close, stored, read = _closeness(hits, items, words, meaning, rules.stored_meaning, alone)
    return quote_choice.Evidence(
        places=[(rank, position) for rank, position, _ in items],
        lengths=[len(text) for _, _, text in items],
        words=cover,
        kind=supplied,
        passage=prior,
        alone=close,
        stored=stored,
        read_alone=read,
    )


# A sentence not embedded alone ranks this far below the last of those that were.
_NOT_READ_ALONE = 0.5


def _closeness(
    hits: list[Hit],
    items: list[tuple[int, int, str]],
    words: list[float],
    meaning: Meaning,
    stored_weight: float,
    alone: int,
) -> tuple[list[float], list[float], list[float]]:
    """Each sentence's closeness in meaning, beyond the closest's, embedded alone (the `alone`
    sentences first by their words and their stored vectors; the rest below them) and as
    stored; and 1 for those embedded alone."""
    stored = meaning.stored([(hits[rank].passage_id, place, text) for rank, place, text in items])
    known = [c for c in stored if c is not None]
    best_stored = max(known, default=0.0)
    # A sentence without a stored vector is taken as close as the closest: it is not passed
    # over for want of one.
    beyond = [(c if c is not None else best_stored) - best_stored for c in stored]
    first = [w + stored_weight * b for w, b in zip(words, beyond, strict=True)]
    picked = sorted(range(len(items)), key=lambda i: -first[i])[:alone]
    cosines = meaning.alone([items[i][2] for i in picked])
    best, floor = max(cosines), min(cosines)
    close = [floor - best - _NOT_READ_ALONE] * len(items)
    read = [0.0] * len(items)
    for i, cosine in zip(picked, cosines, strict=True):
        close[i] = cosine - best
        read[i] = 1.0
    return close, beyond, read


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
    chances = [s.score for s in sentences]
    _, run = quote_choice.best_run(places, lengths, chances, cost, rules.budget)
    chosen = [sentences[i] for i in run]
    rank = chosen[0].hit_rank
    own = [s for s in sentences if s.hit_rank == rank]
    chosen = _widened(chosen, own, rules)
    last = max(chosen, key=lambda s: s.position)
    chosen += [s for s in _with_rest_of_quote(last, sentences) if s not in chosen]
    others = [i for i, s in enumerate(sentences) if s.hit_rank != rank]
    if others:
        value, more = quote_choice.best_run(
            [places[i] for i in others],
            [lengths[i] for i in others],
            [chances[i] for i in others],
            cost,
            rules.budget,
        )
        joining = [sentences[others[i]] for i in more]
        if value > 0 and _length(chosen + joining) <= rules.budget:
            chosen += joining
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
    """A quote shorter than `rules.least_quote` with the sentences next to it (the likelier of
    the two first), as long as it stays within `rules.budget` characters."""
    by_position = {s.position: s for s in own}
    length = sum(len(s.text) + 1 for s in chosen)
    first, last = min(s.position for s in chosen), max(s.position for s in chosen)
    while length < rules.least_quote:
        fitting = [
            by_position[p]
            for p in (last + 1, first - 1)
            if p in by_position and length + len(by_position[p].text) <= rules.budget
        ]
        if not fitting:
            break
        step = max(fitting, key=lambda s: s.score)  # the first of equals: the next one
        chosen = [*chosen, step]
        length += len(step.text) + 1
        first, last = min(first, step.position), max(last, step.position)
    return chosen


def candidates(
    question: str,
    retrieved: Retrieved,
    articles: dict[int, Article],
    rules: QuoteRules = RULES,
) -> tuple[list[tuple[int, int, str]], quote_choice.Evidence]:
    """The sentences an answer to `question` would quote from, as (the passage's rank, place in
    it, text), and what is read of each: what `python -m index.ops.fit_quotes` learns from."""
    items = _split(retrieved.hits[:ANSWER_PASSAGES], retrieved.passages, articles)
    native = retrieved.reading.native
    evidence = _evidence(
        retrieved.searched or question,
        retrieved.hits,
        items,
        retrieved.terms,
        retrieved.language.words,
        retrieved.english,
        rules,
        retrieved.meaning,
        rules.alone if native else rules.alone_across,
    )
    return items, evidence


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
        rules.alone if native else rules.alone_across,
        native,
    )
    best_by_rank: dict[int, _Sentence] = {}
    for s in sentences:
        if s.hit_rank not in best_by_rank or s.score > best_by_rank[s.hit_rank].score:
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
