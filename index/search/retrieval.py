"""Retrieval: the passages that answer a question, ranked, from one collection's backend.

The one owner of candidates, fusion and rescoring. A backend answers narrow questions (dense
candidates, keyword candidates, the scores of given passages, the passages themselves); each
candidate is scored by both signals in candidates.py; the ranking rules live in ranking.py; the
answer is composed elsewhere from what this returns.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from collections.abc import Collection as Container
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from index.embedding.calibration import Calibration
from index.records import Passage
from index.search.candidates import CANDIDATES, Candidates
from index.search.closest_sentence import by_sentence
from index.search.interface import Backend, KeywordSide, QueryModel
from index.search.language import Reading, names_and_numbers, read_question
from index.search.ranking import RESCORE_DEPTH, Hit, rescore, term_weights
from index.search.relevance import (
    CHANCE_MIN_ARTICLES,
    Evidence,
    Judgement,
    min_relevance,
    peak,
    relevance,
    word_evidence,
)
from index.search.sentence_vectors import Meaning, SentenceVectors
from index.search.small_collections import against_unrelated
from index.search.spelling import corrected
from index.text import Analyzer, Profile, normalize, profile

__all__ = ["Retrieved", "Retriever"]

# The first paragraphs of the best few stories join the candidates: on the news tuning half,
# with the position and story priors of ranking.py, R@1 0.404 -> 0.448 and R@5 0.620 -> 0.697.
LEAD_STORIES = 3
LEAD_PARAGRAPHS = 3
# How far the best passage's score leads the best of another story, at most (a lead past it says
# no more); and what it is taken to be when no other story is among the candidates.
STORY_LEAD_CAP = 1.0


# The earlier questions of a conversation lend a follow-up at most this many of their words.
CONTEXT_WORDS = 12


def _with_context(question: str, earlier: Sequence[str], tokenize: Analyzer) -> str:
    """The question, then the content words of the earlier ones (newest first) it lacks.

    Stopwords and pronouns are left out: they would match every passage. The question's own
    words come first, so what it asks for ("why", "how many") still decides the kind of answer.
    """
    own = set(tokenize(question))
    words: list[str] = []
    for text in reversed(earlier):
        for word in normalize(text).split():
            stems = tokenize(word)
            if stems and not own.issuperset(stems):
                own.update(stems)
                words.append(word.strip("?!.,;:\"'“”‘’()"))
    return " ".join([question, *words[:CONTEXT_WORDS]])


@dataclass(frozen=True)
class Retrieved:
    """The ranked hits, their passages, and what composing an answer needs to weigh words."""

    hits: list[Hit]
    passages: dict[int, Passage]
    terms: KeywordSide
    relevant: bool  # whether the best hit is about the question at all
    reading: Reading  # the language the question is read in, and whether the articles share it
    searched: str  # the question as it was searched: its typos corrected
    margin: float = 0.0  # the relevance rule's score less its threshold (relevant at >= 0)
    # How close in meaning some texts (sentences of the passages found) come to the question,
    # on the scale the rules read cosines on; None where no model is at hand.
    meaning: Meaning | None = None
    evidence: Evidence | None = None  # what the judgement of `relevant` read

    @property
    def english(self) -> bool:
        """Whether the rules written for English apply to the question."""
        return self.reading.english

    @property
    def language(self) -> Profile:
        """The language the question was read in: its words, sentences and rules."""
        return profile(self.reading.language)


@functools.lru_cache(maxsize=8)
def _judgement(path: Path | None) -> Judgement | None:
    return Judgement.load(path) if path is not None else None


class Retriever:
    """Ranks one collection's passages for a question: typos corrected, the question encoded,
    dense and keyword candidates fused and rescored, and whether the best is relevant at all."""

    def __init__(self, backend: Backend, model: Callable[[], QueryModel]) -> None:
        self.backend = backend
        self.model = model  # the collection's model, as it is at each question
        self._sentences = SentenceVectors()

    def retrieve(
        self,
        question: str,
        top_k: int,
        article_ids: Container[int] | None = None,
        *,
        earlier: Sequence[str] = (),
    ) -> Retrieved:
        """The top_k passages for `question`, best first, from `article_ids` only if given.

        `earlier` are the questions before this one in a conversation: their content words
        find the story it is about ("why did he go there?" after "Who visited Warsaw?").
        """
        languages = self.backend.languages()
        reading = read_question(question, languages)
        # Both sides search the question with its typos corrected; the answer shows it as asked.
        searched = self.corrected(question, reading)
        model = self.model()
        query = model.encode_query(searched)
        if earlier:
            found = self._follow_up(
                searched, query, earlier, top_k, article_ids, reading, model, languages
            )
            if found is not None:
                return found
        return self._ranked(searched, query, top_k, article_ids, reading, model, languages)

    def _follow_up(
        self,
        question: str,
        query: np.ndarray,
        earlier: Sequence[str],
        top_k: int,
        article_ids: Container[int] | None,
        reading: Reading,
        model: QueryModel,
        languages: dict[str, int],
    ) -> Retrieved | None:
        """A follow-up's passages: the story the conversation is about, found with the earlier
        questions' words, then searched with this question's own words alone, so that the
        answer says something new rather than what answered the earlier question."""
        searched = _with_context(question, earlier, profile(reading.language).words)
        encoded = model.encode_query(searched)
        about = self._ranked(searched, encoded, top_k, article_ids, reading, model, languages)
        if not about.relevant:
            return None
        story = about.passages[about.hits[0].passage_id].article_id
        found = self._ranked(question, query, top_k, {story}, reading, model, languages)
        return found if found.relevant else about

    def _ranked(
        self,
        question: str,
        query: np.ndarray,
        top_k: int,
        article_ids: Container[int] | None,
        reading: Reading,
        model: QueryModel,
        languages: dict[str, int],
    ) -> Retrieved:
        """The top_k passages for `question` as given (its embedding `query`), best first;
        `languages`: the collection's articles per language."""
        scope = set(article_ids) if article_ids is not None else None
        keywords = self.backend.keywords(scope)
        # A question in a language no article is written in shares only names and numbers with
        # them; its other words would match by chance ("die", "was") and drag the ranking.
        searched = question if reading.native else names_and_numbers(question)
        tokenize = profile(reading.language).words
        calibration = model.calibration
        scale = asked = calibration.cosine_scale
        moved = query
        if not reading.native:
            moved, scale = self._across(query, scale, reading, calibration, languages)
        scores = Candidates(self.backend, keywords, tokenize(searched), moved, scale)
        if scope is not None:
            scores.gather(self._dense_among(moved, scope))
        else:
            scores.gather(self.backend.dense(moved, CANDIDATES))
        hits = scores.best(max(top_k, RESCORE_DEPTH))
        passages = self.backend.passages([h.passage_id for h in hits])
        hits = [h for h in hits if h.passage_id in passages]  # one removed meanwhile is gone
        if reading.native:
            hits = self._with_leads(hits, passages, scores, scope)
            ranked = rescore(
                searched, hits, passages, profile(reading.language), keywords, len(hits)
            )
            judged = ranked
        else:
            # Asked in a language no article is written in: its words cannot be weighed against
            # the passages', and the story and position priors then outweigh the embedding, so
            # the fused order stands (English articles, Chinese questions: R@1 0.505 -> 0.655),
            # but for the closest sentences of the best few. Whether to answer is judged on the
            # fused order, as the judgement was fitted: the sentences choose what is quoted.
            judged = hits
            ranked = by_sentence(
                hits,
                passages,
                moved,
                scale,
                model,
                languages,
                self._sentences,
                question,
                reading.asked_in,
            )
        hits = ranked[:top_k]
        # Sentences are weighed against the question as it searched: moved toward the articles'
        # language when it is asked in another (English articles, Chinese questions: a gold
        # answer in the answer 0.538 -> 0.558, Arabic 0.489 -> 0.497).
        meaning = self._sentences.meaning(
            model,
            moved,
            # The rows of the model that embedded the question: a re-embedding swapped in
            # meanwhile has its own.
            lambda ids: self.backend.sentence_vectors(ids, model.name, model.dim),
        )
        margin, evidence = -1.0, None
        if hits:
            best = judged[0]
            if moved is not query:
                # The move ranks; whether the best is about the question at all is read on its
                # cosine with the question as asked, the scale the allowance was fitted on (the
                # best of the moved scores is, by its choosing, higher than its cosine).
                cosine = self.backend.cosines(query, [best.passage_id]).get(best.passage_id)
                if cosine is not None:  # None: removed meanwhile; its moved score stands
                    best = dataclasses.replace(best, dense=asked[0] * cosine + asked[1])
            articles = sum(languages.values())
            lean = 0.0
            if reading.native:
                lean = scale[0] * calibration.background(reading.language, query)
            evidence = self._evidence(
                searched,
                best,
                judged[0].dense,
                lean,
                judged,
                passages,
                keywords,
                reading,
                articles,
                peak(scores.cosine.values()),
            )
            judgement = _judgement(calibration.judgement_file)
            if judgement is not None:
                margin = judgement.margin(evidence)
            else:
                margin = self._hand_margin(evidence)
                margin += (
                    -evidence.background if reading.native else calibration.other_language_allowance
                )
            if (
                articles < CHANCE_MIN_ARTICLES
                and not reading.native
                and calibration.unrelated is not None
            ):
                margin = against_unrelated(
                    margin,
                    query,
                    {h.passage_id: passages[h.passage_id].text for h in judged},
                    reading,
                    languages,
                    articles,
                    model,
                    self.backend,
                )
        return Retrieved(
            hits, passages, keywords, margin >= 0, reading, question, margin, meaning, evidence
        )

    def _across(
        self,
        query: np.ndarray,
        scale: tuple[float, float],
        reading: Reading,
        calibration: Calibration,
        languages: dict[str, int],
    ) -> tuple[np.ndarray, tuple[float, float]]:
        """A question's vector moved toward articles in another language (the model says how:
        `Calibration.across_languages`), and the scale its cosines are then read on: each
        passage's cosine less the move's dot with how the passage differs from the centre, so
        that fused scores and the scores answers show keep their level on average."""
        away = calibration.across_languages(reading.asked_in, languages, self.backend.centre)
        if away is None:
            return query, scale
        slope, intercept = scale
        centre = self.backend.centre()  # made by the model's call, if it read it
        lift = float(away @ centre) if centre is not None else 0.0
        return (query - away).astype(np.float32), (slope, intercept + slope * lift)

    def corrected(self, question: str, reading: Reading | None = None) -> str:
        """An English question with its misspelt words corrected to the articles' words
        (spelling.py, written for English); a question in another language as it is."""
        reading = reading or read_question(question, self.backend.languages())
        if not reading.english:
            return question
        return corrected(question, self.backend.keywords().frequencies)

    def _with_leads(
        self,
        hits: list[Hit],
        passages: dict[int, Passage],
        scores: Candidates,
        scope: set[int] | None,
    ) -> list[Hit]:
        """The hits, and the first paragraphs of the best stories among them (a story's facts
        stand at its top, while its later paragraphs repeat the question's words)."""
        stories = list(dict.fromkeys(passages[h.passage_id].article_id for h in hits))
        lead = self.backend.leading_passages(stories[:LEAD_STORIES], LEAD_PARAGRAPHS)
        new = [p for p in lead if p.id not in passages and (scope is None or p.article_id in scope)]
        if not new:
            return hits
        passages.update({p.id: p for p in new})
        return scores.add([p.id for p in new], keep={h.passage_id for h in hits})

    def _evidence(
        self,
        question: str,
        best: Hit,
        moved: float,
        background: float,
        ranked: list[Hit],
        passages: dict[int, Passage],
        keywords: KeywordSide,
        reading: Reading,
        articles: int,
        standing_out: float | None,
    ) -> Evidence:
        """What is known of the best hit for `question`, among `articles` articles: its cosine
        as asked (`best.dense`) and as searched (`moved`), how far it leads the best of another
        story, the share of the question's words its best sentence and its story hold (beyond
        chance), how far the closest candidate stands out from the ten next closest
        (`standing_out`), and the lean of the question's language (`background`)."""
        language = profile(reading.language)
        weights = term_weights(question, language.words, keywords)
        article_id = passages[best.passage_id].article_id
        story_words, length = self.backend.story_words(article_id, reading.language)
        coverage, in_story = word_evidence(weights, best.coverage, story_words, length, articles)
        others = [h.score for h in ranked if passages[h.passage_id].article_id != article_id]
        # No other story among the candidates: the others lie far behind; with one article there
        # are none, and the lead says nothing.
        lead: float | None = (
            min(STORY_LEAD_CAP, ranked[0].score - max(others)) if others else STORY_LEAD_CAP
        )
        if articles <= 1:
            lead = None
        return Evidence(
            cosine=best.dense,
            moved=moved,
            story_margin=lead,
            peak=standing_out,
            coverage=coverage,
            story=in_story,
            words=len(weights),
            passages=len(keywords),
            background=background,
            native=reading.native,
            english=reading.english,
            pairs=language.pairs,
        )

    @staticmethod
    def _hand_margin(evidence: Evidence) -> float:
        """The hand-tuned rule (relevance.py) for a model without a fitted judgement."""
        score = relevance(
            evidence.cosine, evidence.coverage, evidence.story, evidence.words, pairs=evidence.pairs
        )
        return score - min_relevance(evidence.passages, native=evidence.native)

    def _dense_among(
        self, query: np.ndarray, article_ids: set[int]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Dense candidates from some articles only (one chosen article, a follow-up's sources)."""
        ids = [p.id for p in self.backend.article_passages(article_ids)]
        cosine = self.backend.cosines(query, ids)
        order = sorted(ids, key=lambda i: -cosine[i])[:CANDIDATES]
        return np.array([cosine[i] for i in order]), np.array(order, dtype=np.int64)
