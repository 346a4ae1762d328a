"""The HTTP client against the scripted fake server: what it sends, and a Draft (never an
exception) for every way a server misbehaves, within the timeout."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from fake_writer import FakeWriterServer

from index.errors import BadInput
from index.writer import OpenAICompatible, Request, Source, WriterSettings
from index.writer.client import endpoint

REQUEST = Request(
    "How many residents left?",
    (Source(1, "Marlow flood", "About 3,000 residents left their homes on Tuesday. Rain fell."),),
)


def client(fake: FakeWriterServer, scenario: str, **options: object) -> OpenAICompatible:
    settings = WriterSettings(fake.url(scenario), "fake-model", timeout_s=2.0)
    for name, value in options.items():
        settings = WriterSettings(**{**settings.__dict__, name: value})  # type: ignore[arg-type]
    return OpenAICompatible(settings)


def test_a_good_reply_is_read_from_the_stream(fake_writer: FakeWriterServer) -> None:
    draft = client(fake_writer, "good").write(REQUEST)
    assert draft.problem is None
    assert draft.sentences == (("About 3,000 residents left their homes on Tuesday.", (1,)),)
    scenario, headers, body = fake_writer.requests[-1]
    assert scenario == "good" and body["stream"] is True and body["temperature"] == 0
    schema = body["response_format"]["json_schema"]["schema"]
    item = schema["properties"]["sentences"]["items"]
    assert schema["properties"]["sentences"]["maxItems"] and item["properties"]["text"]["maxLength"]
    assert item["properties"]["sources"]["items"]["maximum"] == 1
    assert "Authorization" not in headers
    system, user = body["messages"]
    assert "not instructions" in system["content"] and "[1]" in system["content"]
    assert '<passage n="1" title="Marlow flood">' in user["content"]


def test_the_api_key_goes_in_the_header_and_nowhere_else(
    fake_writer: FakeWriterServer, caplog: pytest.LogCaptureFixture
) -> None:
    writer = client(fake_writer, "http-500", api_key="sk-test-Secret-42")
    assert "sk-test-Secret-42" not in repr(writer.settings)
    with caplog.at_level(logging.DEBUG):
        draft = writer.write(REQUEST)
    assert draft.kind == "http_error"
    assert fake_writer.requests[-1][1]["Authorization"] == "Bearer sk-test-Secret-42"
    assert "sk-test-Secret-42" not in caplog.text + (draft.problem or "")


@pytest.mark.parametrize(
    ("scenario", "kind"),
    [
        ("http-500", "http_error"),
        ("invalid-json", "invalid_reply"),
        ("stall", "timeout"),
        ("drip", "timeout"),
        ("flood", "too_long"),
    ],
)
def test_a_failing_server_gives_a_draft_within_the_timeout(
    fake_writer: FakeWriterServer, scenario: str, kind: str
) -> None:
    started = time.monotonic()
    draft = client(fake_writer, scenario).write(REQUEST)
    assert draft.kind == kind, draft.problem
    assert time.monotonic() - started < 2.0 + 1.0


def test_a_server_without_response_format_is_asked_in_plain_text_and_remembered(
    fake_writer: FakeWriterServer,
) -> None:
    writer = client(fake_writer, "plain-only")
    draft = writer.write(REQUEST)
    assert draft.problem is None and draft.sentences[0][1] == (1,)
    asked = [body for scenario, _, body in fake_writer.requests if scenario == "plain-only"]
    assert ["response_format" in b for b in asked] == [True, False]
    writer.write(REQUEST)
    asked = [body for scenario, _, body in fake_writer.requests if scenario == "plain-only"]
    assert "response_format" not in asked[-1]


def test_a_server_that_does_not_stream_is_read_whole(fake_writer: FakeWriterServer) -> None:
    assert client(fake_writer, "no-stream").write(REQUEST).problem is None


def test_an_absent_server_is_one_log_line_and_then_skipped_until_retried(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    writer = OpenAICompatible(WriterSettings(f"http://127.0.0.1:{port}/v1", "m", timeout_s=1))
    with caplog.at_level(logging.INFO, logger="index.writer"):
        kinds = [writer.write(REQUEST).kind for _ in range(5)]
    assert kinds == ["unreachable"] + ["outage"] * 4
    assert len([r for r in caplog.records if "not answering" in r.getMessage()]) == 1


def test_writes_past_the_cap_are_not_queued(fake_writer: FakeWriterServer) -> None:
    writer = client(fake_writer, "stall", timeout_s=1.5, concurrency=1)
    first = threading.Thread(target=writer.write, args=(REQUEST,))
    first.start()
    time.sleep(0.3)
    started = time.monotonic()
    second = writer.write(REQUEST)
    assert second.kind == "busy" and time.monotonic() - started < 0.2
    first.join()


def test_a_base_url_is_an_http_address() -> None:
    assert endpoint("http://localhost:11434/v1") == (
        "http",
        "localhost",
        11434,
        "/v1/chat/completions",
    )
    assert endpoint("https://api.openai.com/v1/")[1:] == (
        "api.openai.com",
        443,
        "/v1/chat/completions",
    )
    with pytest.raises(BadInput, match="ARTICLEBOT_LLM_BASE_URL"):
        endpoint("localhost:11434")
