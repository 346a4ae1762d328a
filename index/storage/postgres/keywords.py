"""Keyword search in SQL: each passage's terms in a postings table, written with the passage and
derived again when the tokenizer changes, scored with BM25 as bm25s scores the embedded keyword
index; and PgKeywords, the keyword side of one question."""

from __future__ import annotations

import functools
from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg

from index.ingest.terms import BM25_B, BM25_K1, TOKENIZER_VERSION
from index.storage.postgres.connection import PgConnection
from index.text import analyze

if TYPE_CHECKING:
    from index.storage.postgres.store import PgStore

__all__ = ["PgKeywords", "PgPostings"]


def _terms(title: str, text: str, language: str | None) -> Counter[str]:
    # The title joins each passage's keywords, as in the embedded keyword index; an article
    # stored before languages were is read as English, as it was then.
    return Counter(analyze(f"{title}\n{text}", language or "en"))


class PgPostings(PgConnection):
    """The store's keyword postings, the totals BM25 weighs them with, and their scores."""

    # keyword postings (derived from the passages' text; rebuilt by `rebuild`)

    def keyword_totals(self, collection: str) -> tuple[int, int]:
        """(passages, tokens) of a collection, kept up to date by every write."""
        with self._conn() as db:
            row = db.execute(
                "SELECT passages, tokens FROM collections WHERE name = %s", (collection,)
            ).fetchone()
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def rebuild_postings(self, collection: str) -> None:
        with self._write(collection) as db:
            _derive_postings(db, collection)

    def refresh_postings(self, collection: str) -> None:
        """Derive the collection's postings again if an older tokenizer derived them."""
        sql = "SELECT tokenizer FROM collections WHERE name = %s"
        found = self._rows(sql, (collection,))
        if not found or found[0]["tokenizer"] >= TOKENIZER_VERSION:
            return
        with self._write(collection) as db:
            row = db.execute(sql, (collection,)).fetchone()
            if row and row[0] < TOKENIZER_VERSION:  # no other process did it meanwhile
                _derive_postings(db, collection)

    def document_frequencies(self, collection: str, terms: list[str]) -> dict[str, int]:
        with self._conn() as db:
            rows = db.execute(
                "SELECT term, COUNT(*) FROM postings WHERE collection = %s AND term = ANY(%s) "
                "GROUP BY term",
                (collection, terms),
            ).fetchall()
        return {r[0]: int(r[1]) for r in rows}

    def bm25(
        self,
        collection: str,
        weights: list[tuple[str, float]],
        avg_length: float,
        *,
        k: int | None = None,
        ids: list[int] | None = None,
    ) -> list[tuple[int, float]]:
        """(passage id, BM25) of the best k passages, or of the given ones, with `weights` the
        query's terms (repeated as often as the question repeats them) and their idf."""
        terms = [t for t, _ in weights]
        idf = [w for _, w in weights]
        sql = (
            "SELECT p.passage_id, SUM(q.idf * p.tf / "
            "(p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.length / %(avg)s))) AS score "
            "FROM postings p JOIN unnest(%(terms)s::text[], %(idf)s::float8[]) AS q(term, idf) "
            "ON p.term = q.term WHERE p.collection = %(collection)s "
        )
        args: dict[str, Any] = {
            "k1": BM25_K1,
            "b": BM25_B,
            "avg": max(avg_length, 1e-9),
            "terms": terms,
            "idf": idf,
            "collection": collection,
        }
        if ids is not None:
            sql += "AND p.passage_id = ANY(%(ids)s) "
            args["ids"] = [int(i) for i in ids]
        sql += "GROUP BY p.passage_id ORDER BY score DESC, p.passage_id"
        if k is not None:
            sql += " LIMIT %(k)s"
            args["k"] = k
        with self._conn() as db:
            rows = db.execute(sql, args).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]


class PgKeywords:
    """The keyword side of one question over PostgreSQL postings: a collection, or some of its
    passages (one article, a follow-up's sources) weighed with the whole collection's idf."""

    def __init__(self, store: PgStore, collection: str, ids: list[int] | None = None) -> None:
        self.store, self.collection, self.ids = store, collection, ids
        self._df: dict[str, int] = {}

    @functools.cached_property
    def _totals(self) -> tuple[int, float]:
        # Read when first needed: respelling a question (frequencies alone) needs no totals.
        total, tokens = self.store.keyword_totals(self.collection)
        return total, tokens / total if total else 1.0

    @property
    def total(self) -> int:
        return self._totals[0]

    @property
    def avg_length(self) -> float:
        return self._totals[1]

    def __len__(self) -> int:
        return len(self.ids) if self.ids is not None else self.total

    def _weights(self, terms: list[str]) -> list[tuple[str, float]]:
        tokens = list(terms)
        self._fetch(tokens)
        # Words in no passage are left out, as bm25s leaves out words not in its vocabulary.
        return [(t, self.idf(t)) for t in tokens if self._df.get(t)]

    def _fetch(self, terms: list[str]) -> None:
        missing = [t for t in dict.fromkeys(terms) if t not in self._df]
        if missing:
            found = self.store.document_frequencies(self.collection, missing)
            self._df.update({t: found.get(t, 0) for t in missing})

    def frequencies(self, terms: list[str]) -> dict[str, int]:
        """How many passages of the collection hold each term; a term in none is left out."""
        self._fetch(terms)
        return {t: self._df[t] for t in terms if self._df[t]}

    def idf(self, term: str) -> float:
        self._fetch([term])
        df = self._df[term]
        return float(np.log(1 + (self.total - df + 0.5) / (df + 0.5)))

    def search(self, terms: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        weights = self._weights(terms)
        if not weights or k <= 0:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        found = self.store.bm25(self.collection, weights, self.avg_length, k=k, ids=self.ids)
        found = [(pid, s) for pid, s in found if s > 0]
        return (
            np.array([s for _, s in found], dtype=np.float32),
            np.array([pid for pid, _ in found], dtype=np.int64),
        )

    def scores(self, terms: list[str], ids: list[int]) -> dict[int, float]:
        weights = self._weights(terms)
        out = dict.fromkeys(ids, 0.0)
        if weights and ids:
            out.update(self.store.bm25(self.collection, weights, self.avg_length, ids=ids))
        return out


def _derive_postings(db: psycopg.Connection[Any], collection: str) -> None:
    """The collection's postings and totals from its passages, with this tokenizer."""
    db.execute("DELETE FROM postings WHERE collection = %s", (collection,))
    rows = db.execute(
        "SELECT p.id, a.title, p.text, a.language FROM passages p JOIN articles a "
        "ON a.id = p.article_id WHERE p.collection = %s",
        (collection,),
    ).fetchall()
    total = 0
    with db.cursor() as cur:
        for pid, title, text, language in rows:
            terms = _terms(title, text, language)
            length = max(1, sum(terms.values()))
            total += length
            cur.executemany(
                "INSERT INTO postings VALUES (%s,%s,%s,%s,%s)",
                [(collection, t, pid, n, length) for t, n in terms.items()],
            )
            db.execute("UPDATE passages SET length = %s WHERE id = %s", (length, pid))
    db.execute(
        "UPDATE collections SET passages = %s, tokens = %s, tokenizer = %s WHERE name = %s",
        (len(rows), total, TOKENIZER_VERSION, collection),
    )
