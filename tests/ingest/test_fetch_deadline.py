"""The fetch deadline covers everything a server can drip: a real socket server on 127.0.0.1.

Each of these servers answers every single read well within a per-read timeout, so only a
deadline enforced from outside the reading loop stops them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from tarpit import (
    Behaviour,
    drip_body,
    drip_chunk_size,
    drip_headers,
    drip_status_line,
    endless_continue,
    endless_trailers,
    serving,
)

from index.errors import FetchRefused
from index.ingest.fetch import fetch

DEADLINE_S = 2.0


@pytest.fixture
def tarpit() -> Iterator[Callable[[Behaviour], str]]:
    with serving() as start:
        yield start


@pytest.mark.parametrize(
    "behaviour",
    [
        drip_status_line,
        drip_headers,
        endless_continue,
        drip_chunk_size,
        endless_trailers,
        drip_body,
    ],
)
def test_a_server_that_drips_is_refused_at_the_deadline(
    tarpit: Callable[[Behaviour], str], behaviour: Behaviour
) -> None:
    url = tarpit(behaviour)
    started = time.monotonic()
    with pytest.raises(FetchRefused, match="took too long"):
        fetch(url, allow_private=True, connect_timeout_s=1.0, total_timeout_s=DEADLINE_S)
    assert time.monotonic() - started < DEADLINE_S + 1.0
