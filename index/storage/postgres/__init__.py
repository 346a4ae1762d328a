"""PostgreSQL with pgvector: articles, passages, vectors and keywords shared by many processes.

The only package that imports psycopg. Chosen with `ARTICLEBOT_DATABASE_URL`; the embedded
default (sqlite_store.py, search/embedded_backend.py) needs nothing installed, this one lets
several bot processes on several machines read and write one set of collections.

- Every write is one transaction. Writes to one collection take a transaction-scoped advisory
  lock, as SQLite's write lock does for the embedded store: an article's duplicate check, its
  number and its counters never race another process's add.
- Dense search: exact (a scan of the collection's rows, which the planner reaches through the
  collection's btree) up to EXACT_LIMIT passages, where it is fast and a filtered HNSW scan
  would lose recall among other collections' rows; above it an HNSW index on the vectors. With
  pgvector 0.8 or newer the scan is iterative, so the collection filter still fills the top k;
  with 0.5 to 0.7 one scan reads a beam that grows as the collection's share of the table
  shrinks and, when other collections' rows leave fewer than k of this one's, the search is
  done exactly instead. `stats --json` and the
  log say which (`dense_search`).
- Keyword search is BM25 over a postings table, computed in SQL with the project's own
  tokenizer, bm25s's formula (Lucene idf) and the same k1 and b, so both backends rank alike.
"""

from __future__ import annotations

from index.storage.postgres.backend import PgBackend
from index.storage.postgres.connection import redact
from index.storage.postgres.database import PgDatabase
from index.storage.postgres.keywords import PgKeywords
from index.storage.postgres.store import PgStore
from index.storage.postgres.vectors import EXACT_LIMIT, ITERATIVE_SCANS, MIN_PGVECTOR

__all__ = [
    "EXACT_LIMIT",
    "ITERATIVE_SCANS",
    "MIN_PGVECTOR",
    "PgBackend",
    "PgDatabase",
    "PgKeywords",
    "PgStore",
    "redact",
]
