"""The PostgreSQL restart drill: the server stopped and started again while questions and adds
run in one library (as in the bot: worker threads sharing one pool); prints the figures.

    .venv/bin/python tests/drills/pg_restart.py                 # about a minute on 2 cores
    .venv/bin/python tests/drills/pg_restart.py --outage 20 --out figures.json

A private server (pgserver, PostgreSQL 16 with pgvector 0.6) in a temporary folder is stopped
with `pg_ctl stop -m fast` (what a service manager's restart does: connections are cut) and
started again on the same socket after `--outage` seconds. Meanwhile three threads ask a question
each every 0.2 s and another adds a new three-paragraph article after each add ends. It measures:

- the outage: from the stop to the server answering again;
- questions asked while it was down: how many failed, how long the longest waited before its
  one-sentence error, and the messages; how long after the server was back the first question
  was answered;
- adds: how many were stored and how many failed, and, read from the database afterwards, that
  every stored article is whole (all its passages, vectors and keyword postings; the
  collection's passage count agrees) and every failed one is whole or absent;
- after it: a question and an add work in the same library, without reopening it;
- what /healthz asks of the store during the outage (how long until it says the store is
  down), and how many warnings the connection pool logged while it tried to reconnect.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

ROOT = Path(__file__).resolve().parents[2]  # the checkout
sys.path.insert(0, str(ROOT))

from index.errors import ArticlebotError  # noqa: E402
from index.library import Library  # noqa: E402

COLLECTION = "drill"
PARAGRAPHS = 3
ASKERS = 3


def log(message: str) -> None:
    print(message, flush=True)


def article(n: int) -> tuple[str, str]:
    """(title, text) of the n-th article: three paragraphs with facts of its own."""
    title = f"Town {n} opens a ferry terminal"
    text = (
        f"The harbor board of Town {n} opened a ferry terminal on Tuesday after {n + 2} years "
        f"of planning.\n\nThe terminal cost {n * 3 + 7} million dollars and serves "
        f"{n * 11 + 40} commuters a day from the islands.\n\nThe mayor of Town {n} said a second "
        f"pier will follow once the budget for {2030 + n % 7} is approved."
    )
    return title, text


class RestartableServer:
    """A private PostgreSQL that can be stopped and started again on the same socket."""

    def __init__(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pgserver
        self.folder = Path(tempfile.mkdtemp(prefix="articlebot-pg-restart-"))
        self._server = pgserver.get_server(self.folder, cleanup_mode="stop")
        info = self._server.get_postmaster_info()
        self.socket_dir = info.socket_dir
        self.url = str(self._server.get_uri())
        with psycopg.connect(self.url, autocommit=True) as db:
            db.execute("CREATE DATABASE drill")
        self.database_url = str(self._server.get_uri("drill"))

    def _pg_ctl(self, *args: str) -> None:
        from pgserver._commands import pg_ctl

        pg_ctl(list(args), pgdata=self._server.pgdata, user=self._server.system_user, timeout=60)

    def stop(self) -> None:
        self._pg_ctl("-w", "-m", "fast", "stop")

    def start(self) -> None:
        socket = f"-k {self.socket_dir}"
        self._pg_ctl("-w", "-o", '-h ""', "-o", socket, "-l", str(self._server.log), "start")

    def close(self) -> None:
        self._server.cleanup()
        shutil.rmtree(self.folder, ignore_errors=True)


@dataclass
class Attempt:
    started: float
    ended: float
    ok: bool
    detail: str  # an add's title, or the error's message

    @property
    def seconds(self) -> float:
        return self.ended - self.started


@dataclass
class Traffic:
    """Questions and adds from two threads until told to stop."""

    library: Library
    questions: list[Attempt] = field(default_factory=list)
    adds: list[Attempt] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    next_article: int = 100

    def ask(self) -> None:
        collection = self.library.collection(COLLECTION)
        n = 0
        while not self.stop.is_set():
            n += 1
            started = time.perf_counter()
            try:
                answer = collection.ask(f"How much did the ferry terminal of Town {n % 3} cost?")
                # Answered, or declined: either way the store answered (an error is a failure).
                ok, detail = True, answer.answer[:80]
            except ArticlebotError as error:
                ok, detail = False, str(error)
            self.questions.append(Attempt(started, time.perf_counter(), ok, detail))
            self.stop.wait(0.2)

    def add(self) -> None:
        collection = self.library.collection(COLLECTION)
        while not self.stop.is_set():
            title, text = article(self.next_article)
            self.next_article += 1
            started = time.perf_counter()
            try:
                collection.add_text(text, title=title)
                ok, detail = True, title
            except ArticlebotError as error:
                ok, detail = False, f"{title}: {error}"
            self.adds.append(Attempt(started, time.perf_counter(), ok, detail))
            self.stop.wait(0.05)


def stored_articles(url: str) -> dict[str, tuple[int, int, int]]:
    """title -> (passages, passages with a vector, passages with keyword postings)."""
    with psycopg.connect(url) as db:
        rows = db.execute(
            "SELECT a.title, COUNT(p.id), COUNT(p.embedding), "
            "COUNT(p.id) FILTER (WHERE EXISTS "
            "(SELECT 1 FROM postings k WHERE k.passage_id = p.id)) "
            "FROM articles a LEFT JOIN passages p ON p.article_id = a.id "
            "WHERE a.collection = %s GROUP BY a.title",
            (COLLECTION,),
        ).fetchall()
        counted = db.execute(
            "SELECT passages FROM collections WHERE name = %s", (COLLECTION,)
        ).fetchone()
        actual = db.execute(
            "SELECT COUNT(*) FROM passages WHERE collection = %s", (COLLECTION,)
        ).fetchone()
    assert counted is not None and actual is not None
    if counted[0] != actual[0]:
        raise AssertionError(f"collection counts {counted[0]} passages, holds {actual[0]}")
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


class _Counter(logging.Handler):
    """Counts the pool's warnings (one a failed reconnection attempt) instead of printing them."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def run_drill(
    embedder: Any = None, *, outage_s: float = 8.0, before_s: float = 4.0, after_s: float = 8.0
) -> dict[str, Any]:
    """Run the drill once; returns its figures (and raises if an article is torn)."""
    pool_log = logging.getLogger("psycopg.pool")
    counter = _Counter()
    pool_log.addHandler(counter)
    pool_log.propagate = False
    try:
        figures = _drill(embedder, outage_s, before_s, after_s)
    finally:
        pool_log.removeHandler(counter)
        pool_log.propagate = True
    figures["pool_warnings"] = counter.count
    return figures


def _drill(embedder: Any, outage_s: float, before_s: float, after_s: float) -> dict[str, Any]:
    server = RestartableServer()
    work = Path(tempfile.mkdtemp(prefix="articlebot-pg-restart-data-"))
    library = Library(work, database_url=server.database_url, embedder=embedder)
    try:
        collection = library.collection(COLLECTION)
        for n in range(3):
            collection.add_text(article(n)[1], title=article(n)[0])
        traffic = Traffic(library)
        # Three members asking at once, and one add after another.
        threads = [threading.Thread(target=traffic.ask) for _ in range(ASKERS)]
        threads.append(threading.Thread(target=traffic.add))
        for thread in threads:
            thread.start()
        time.sleep(before_s)
        down = time.perf_counter()
        server.stop()
        stopped = time.perf_counter()
        # What /healthz asks of the store while the server is down: how long until it says so.
        try:
            library.store.ping()
            health = "answered"
        except ArticlebotError as error:
            health = str(error)
        health_s = time.perf_counter() - stopped
        time.sleep(max(0.0, outage_s - health_s))
        server.start()
        up = time.perf_counter()
        time.sleep(after_s)
        traffic.stop.set()
        for thread in threads:
            thread.join()

        during = [q for q in traffic.questions if q.started < up and q.ended > down]
        failed = [q for q in during if not q.ok]
        answered_after = [q for q in traffic.questions if q.ok and q.ended > up]
        stored = stored_articles(server.database_url)
        added_ok = [a for a in traffic.adds if a.ok]
        added_failed = [a for a in traffic.adds if not a.ok]
        torn = {t: c for t, c in stored.items() if c != (PARAGRAPHS, PARAGRAPHS, PARAGRAPHS)}
        missing = [a.detail for a in added_ok if a.detail not in stored]
        failed_present = [a for a in added_failed if a.detail.split(":")[0] in stored]
        # After the drill, in the same library: a question and an add.
        final_title, final_text = article(999)
        final_add = collection.add_text(final_text, title=final_title)
        final = collection.ask("How much did the ferry terminal of Town 999 cost?")
        figures = {
            "outage_s": round(up - down, 2),
            "stop_s": round(stopped - down, 2),
            "questions": len(traffic.questions),
            "questions_during_outage": len(during),
            "questions_failed": len(failed),
            "questions_failed_outside_outage": [
                q.detail for q in traffic.questions if not q.ok and q not in during
            ],
            "longest_failed_wait_s": round(max((q.seconds for q in failed), default=0.0), 2),
            "longest_question_s": round(max(q.seconds for q in traffic.questions), 2),
            "health_check_during_outage": health,
            "health_check_s": round(health_s, 2),
            "first_answer_after_up_s": round(
                min((q.ended for q in answered_after), default=float("nan")) - up, 2
            ),
            "error_messages": sorted({q.detail for q in failed}),
            "adds": len(traffic.adds),
            "adds_stored": len(added_ok),
            "adds_failed": len(added_failed),
            "adds_failed_but_stored_whole": len(failed_present),
            "articles_torn": len(torn),
            "adds_reported_but_missing": len(missing),
            "after_add_ok": bool(final_add.added),
            # Answered or declined, the store answered: the library works without a restart.
            "after_question_ok": bool(final.answer),
        }
        if torn:
            raise AssertionError(f"torn articles: {torn}")
        return figures
    finally:
        library.close()
        server.close()
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--outage", type=float, default=8.0, help="seconds the server is down")
    parser.add_argument("--before", type=float, default=4.0, help="seconds of traffic first")
    parser.add_argument("--after", type=float, default=8.0, help="seconds of traffic after")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()
    from index.embedding.embedder import load_embedder

    # The model as the tests keep it (its int8 export made once, in the virtual environment).
    cache = Path(sys.prefix) / "articlebot-test-models"
    cache.mkdir(exist_ok=True)
    embedder = load_embedder(cache_dir=cache)
    figures = run_drill(embedder, outage_s=args.outage, before_s=args.before, after_s=args.after)
    for key, value in figures.items():
        log(f"{key}: {value}")
    if args.out:
        args.out.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
