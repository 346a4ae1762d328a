"""A database that restarts: the PostgreSQL server stopped and started again while questions
and adds run (tests/drills/pg_restart.py, shorter): questions fail fast with one sentence, the
same library answers and adds again afterwards, and no add is torn."""

from __future__ import annotations

from drills.pg_restart import run_drill

from index.embedding.base import Embedder
from index.storage.postgres.store import WAIT_TIMEOUT_S


def test_questions_fail_fast_during_a_restart_and_work_after_it(embedder: Embedder) -> None:
    figures = run_drill(embedder, outage_s=6.0, before_s=2.0, after_s=5.0)
    print(figures)  # the drill's figures, in the test's output with -s

    assert figures["questions_during_outage"] >= 3
    assert figures["questions_failed"] >= 1
    # Fast: a question waits the pool's few seconds at most, then is told why, in one sentence.
    assert figures["longest_failed_wait_s"] <= WAIT_TIMEOUT_S + 1.5
    for message in figures["error_messages"]:
        assert message.endswith("try again in a minute.") and message.count(". ") == 0
        assert ":***@" in message  # the URL shown without its password
    assert figures["questions_failed_outside_outage"] == []
    # Back without restarting anything: the pool replaced the connections the restart cut.
    assert figures["first_answer_after_up_s"] <= 5.0
    assert figures["after_question_ok"] and figures["after_add_ok"]
    # Every add is whole or absent, and every add reported as stored is there.
    assert figures["adds_stored"] >= 3
    assert figures["articles_torn"] == 0
    assert figures["adds_reported_but_missing"] == 0
