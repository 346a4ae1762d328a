"""The one module that talks to the writer: an OpenAI-compatible server's `/chat/completions`.

Plain HTTP (http.client, as the fetcher uses) rather than the `openai` package: the request is
one POST and its reply one stream of lines, and owning them keeps what matters here in view:
one deadline over the whole reply (a server that drips a word a second is cut off at it), no
retries behind the caller's back (the client's default retries would double the wait), no
settings read from `OPENAI_*` variables, and no dependency the bot does not otherwise need.

A server that refuses `response_format` is asked again in plain text, and remembered; one that
does not stream answers in one body, which is read the same way. Writes under way are capped:
past the cap a question is answered without the writer rather than queued. While the server is
down (unreachable, timing out, failing), one question a while tries it again and the rest are
answered at once without it; the outage is logged once, and again when it ends.
"""

from __future__ import annotations

import http.client
import json
import logging
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from index.errors import BadInput, without_passwords
from index.writer import prompt
from index.writer.seam import Draft, Request, WriterSettings

__all__ = ["OUTAGE_RETRY_S", "OpenAICompatible", "endpoint"]

log = logging.getLogger("index.writer")

# While the server is down, one question in this many seconds tries it again.
OUTAGE_RETRY_S = 30.0
# What is read of a reply at most: far past any answer the checks would pass.
MAX_REPLY_CHARS = 8_000
MAX_BODY_BYTES = 1_000_000
# The kinds of failure that say the server is down, not that one reply was bad.
_OUTAGES = frozenset({"timeout", "unreachable", "http_error"})


class _Refused(Exception):
    """The server refused `response_format` (HTTP 400 or 422 that names it)."""


def endpoint(base_url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path of /chat/completions) of a base URL such as
    http://127.0.0.1:8080/v1; one sentence that names the fix when it is not one."""
    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadInput(
            "ARTICLEBOT_LLM_BASE_URL must be an http:// or https:// address such as "
            "http://localhost:11434/v1; fix it in .env."
        )
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise BadInput("ARTICLEBOT_LLM_BASE_URL has a port that is not a number.") from None
    return parts.scheme, parts.hostname, port, parts.path.rstrip("/") + "/chat/completions"


class OpenAICompatible:
    """A Writer over any OpenAI-compatible server (Ollama, llama-server, vLLM, LM Studio,
    OpenAI)."""

    def __init__(
        self, settings: WriterSettings, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.settings = settings
        self._scheme, self._host, self._port, self._path = endpoint(settings.base_url)
        self._where = without_passwords(settings.base_url)
        self._slots = threading.BoundedSemaphore(settings.concurrency)
        self._clock = clock
        self._lock = threading.Lock()
        self._structured = True  # until the server refuses response_format
        self._down: Draft | None = None  # the failure that began an outage
        self._down_at = 0.0
        self._tried_at = 0.0

    @property
    def model(self) -> str:
        return self.settings.model

    def write(self, request: Request) -> Draft:
        waiting = self._while_down()
        if waiting is not None:
            return waiting
        if not self._slots.acquire(blocking=False):
            under_way = self.settings.concurrency
            return Draft(
                problem=f"the writer was busy ({under_way} write{'s' * (under_way > 1)} under way)",
                kind="busy",
            )
        started = self._clock()
        try:
            draft = self._ask(request, started + self.settings.timeout_s)
        finally:
            self._slots.release()
        draft = replace(draft, seconds=self._clock() - started)
        self._note(draft)
        return draft

    # outages

    def _while_down(self) -> Draft | None:
        """During an outage, the answer for all but one question a while."""
        with self._lock:
            if self._down is None:
                return None
            now = self._clock()
            if now - self._tried_at >= OUTAGE_RETRY_S:
                self._tried_at = now
                return None
            ago = round(now - self._down_at)
            return Draft(
                problem=f"the writer is not answering ({self._down.problem}, {ago} s ago)",
                kind="outage",
            )

    def _note(self, draft: Draft) -> None:
        with self._lock:
            if draft.kind in _OUTAGES:
                if self._down is None:
                    self._down, self._down_at = draft, self._clock()
                    log.warning(
                        "The writer at %s is not answering (%s); answers stay extractive until "
                        "it does, and it is tried again every %d s",
                        self._where,
                        draft.problem,
                        OUTAGE_RETRY_S,
                    )
                self._tried_at = self._clock()
            elif self._down is not None:
                self._down = None
                log.warning("The writer at %s answers again", self._where)

    # one request

    def _ask(self, request: Request, deadline: float) -> Draft:
        timeout = f"timed out after {self.settings.timeout_s:g} s"
        for structured in (True, False) if self._structured else (False,):
            try:
                content, finish = self._post(request, structured, deadline)
            except _Refused:
                self._structured = False
                log.info(
                    "The writer at %s refuses response_format; asking in plain text", self._where
                )
                continue
            except TimeoutError:
                return Draft(problem=timeout, kind="timeout")
            except http.client.HTTPException as error:
                return Draft(problem=f"the writer's reply broke off ({error!r})", kind="http_error")
            except (OSError, ssl.SSLError) as error:
                reason = getattr(error, "strerror", None) or type(error).__name__
                return Draft(problem=f"could not reach the writer ({reason})", kind="unreachable")
            except _Failed as failure:
                return failure.draft
            if len(content) > MAX_REPLY_CHARS:
                return Draft(
                    problem=f"the reply ran past {MAX_REPLY_CHARS:,} characters", kind="too_long"
                )
            if finish == "length":
                return Draft(
                    problem="the reply was cut off at the token cap "
                    f"({self.settings.max_tokens} tokens)",
                    kind="cut_off",
                )
            return prompt.read_json(content) if structured else prompt.read_plain(content)
        return Draft(problem=timeout, kind="timeout")  # unreachable: the loop returns

    def _post(self, request: Request, structured: bool, deadline: float) -> tuple[str, str]:
        body: dict[str, Any] = {
            "model": self.settings.model,
            "messages": prompt.messages(request, structured=structured),
            "max_tokens": self.settings.max_tokens,
            "temperature": 0,
            "stream": True,
        }
        if structured:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": "cited_answer",
                    "strict": True,
                    "schema": prompt.schema(len(request.sources)),
                },
            }
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        connection = self._connection(deadline)
        try:
            connection.request("POST", self._path, json.dumps(body).encode(), headers)
            self._keep_within(connection, deadline)
            response = connection.getresponse()
            if response.status != 200:
                text = response.read(4_096).decode("utf-8", "replace").lower()
                refused = any(w in text for w in ("response_format", "json_schema", "schema"))
                if structured and response.status in (400, 422) and refused:
                    raise _Refused()
                raise _Failed(
                    Draft(problem=f"the writer answered HTTP {response.status}", kind="http_error")
                )
            if "text/event-stream" in (response.getheader("Content-Type") or ""):
                return self._streamed(response, connection, deadline)
            return self._whole(response)
        finally:
            connection.close()

    def _connection(self, deadline: float) -> http.client.HTTPConnection:
        left = max(deadline - self._clock(), 0.01)
        if self._scheme == "https":
            return http.client.HTTPSConnection(self._host, self._port, timeout=left)
        return http.client.HTTPConnection(self._host, self._port, timeout=left)

    def _keep_within(self, connection: http.client.HTTPConnection, deadline: float) -> None:
        """Every read waits at most until the deadline, however the server drips."""
        left = deadline - self._clock()
        if left <= 0:
            raise TimeoutError()
        if connection.sock is not None:
            connection.sock.settimeout(left)

    def _streamed(
        self,
        response: http.client.HTTPResponse,
        connection: http.client.HTTPConnection,
        deadline: float,
    ) -> tuple[str, str]:
        content: list[str] = []
        size, finish = 0, ""
        for event in _events(response, lambda: self._keep_within(connection, deadline)):
            choice = _first_choice(event)
            piece = (choice.get("delta") or {}).get("content") or ""
            if isinstance(piece, str):
                content.append(piece)
                size += len(piece)
            finish = choice.get("finish_reason") or finish
            if size > MAX_REPLY_CHARS:
                break
        return "".join(content), str(finish)

    def _whole(self, response: http.client.HTTPResponse) -> tuple[str, str]:
        raw = response.read(MAX_BODY_BYTES + 1)
        if len(raw) > MAX_BODY_BYTES:
            return "x" * (MAX_REPLY_CHARS + 1), ""
        try:
            choice = _first_choice(json.loads(raw))
        except ValueError:
            raise _Failed(
                Draft(problem="the writer's reply is not valid JSON", kind="invalid_reply")
            ) from None
        content = (choice.get("message") or {}).get("content") or ""
        return str(content), str(choice.get("finish_reason") or "")


class _Failed(Exception):
    """A reply that ends the request with this draft."""

    def __init__(self, draft: Draft) -> None:
        super().__init__(draft.problem)
        self.draft = draft


def _first_choice(event: Any) -> dict[str, Any]:
    choices = event.get("choices") if isinstance(event, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return {}
    return choices[0]


def _events(response: http.client.HTTPResponse, before_read: Callable[[], None]) -> Iterator[Any]:
    """The JSON of each `data:` line of a server-sent event stream, until `[DONE]`."""
    while True:
        before_read()
        line = response.readline(MAX_BODY_BYTES)
        if not line:
            return
        text = line.decode("utf-8", "replace").strip()
        if not text.startswith("data:"):
            continue
        data = text[5:].strip()
        if data == "[DONE]":
            return
        try:
            yield json.loads(data)
        except ValueError:
            raise _Failed(
                Draft(problem="the writer's reply is not valid JSON", kind="invalid_reply")
            ) from None
