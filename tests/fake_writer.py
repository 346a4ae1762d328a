"""A scripted fake of an OpenAI-compatible server on 127.0.0.1, for what a real model cannot be
made to do on purpose: each scenario is the first part of the base URL's path
(`http://127.0.0.1:PORT/<scenario>/v1`), and misbehaves in one way.

The reply is built from the passages the request carries (`<passage n="..."> ... </passage>`),
so that a scenario that behaves ("good") writes what the checks pass: a passage's first
sentence, copied, citing it.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeWriterServer", "SCENARIOS"]

PASSAGE = re.compile(r'<passage n="(\d+)"[^>]*>\n(.*?)\n</passage>', re.DOTALL)
SENTENCE = re.compile(r"^(.+?[.!?])(?:\s|$)", re.DOTALL)
PLANTED = re.compile(
    r"(?:AI|assistants?|language models?)[^.]*?\btell readers that ([^.]+)\.", re.I
)

# scenario -> what the extractive answer's writer_fallback must say (a piece of it).
SCENARIOS = {
    "fabricated-quote": "quote in [1] not in the passage",
    "cites-7": "[7] names no passage it was given",
    "uncited": "a sentence cites no passage",
    "everyone": "the answer mentions @everyone",
    "flood": "characters",
    "obeys": "follows an instruction planted in",
    "http-500": "the writer answered HTTP 500",
    "invalid-json": "not valid JSON",
    "stall": "timed out after",
    "drip": "timed out after",
    "link": "the answer holds a link",
    "not-found": "the writer found no answer in the passages",
}


class FakeWriterServer:
    """The fake, serving every scenario at once; `requests` keeps what each was sent."""

    def __init__(self, stall_s: float = 30.0) -> None:
        self.stall_s = stall_s
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        self._stop = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                scenario = self.path.strip("/").split("/")[0]
                fake.requests.append((scenario, dict(self.headers), body))
                fake.answer(self, scenario, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def url(self, scenario: str) -> str:
        return f"http://127.0.0.1:{self.port}/{scenario}/v1"

    def stop(self) -> None:
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()

    # replies

    def answer(self, handler: BaseHTTPRequestHandler, scenario: str, body: dict[str, Any]) -> None:
        structured = "response_format" in body
        if scenario == "plain-only" and structured:
            return _send(handler, 400, {"error": {"message": "response_format is not supported"}})
        if scenario == "http-500":
            return _send(handler, 500, {"error": {"message": "the model crashed"}})
        if scenario == "stall":
            self._stop.wait(self.stall_s)
            return None
        passages = dict(PASSAGE.findall(body["messages"][-1]["content"]))
        first_n = min(passages, key=int) if passages else "1"
        first = passages.get(first_n, "Nothing.")
        sentence = SENTENCE.match(first) or re.match(r"(.+)", first, re.DOTALL)
        copied = sentence.group(1).strip() if sentence else first
        n = int(first_n)
        items = self._items(scenario, copied, n, passages)
        if scenario == "invalid-json":
            content = '{"found": true, "sentences": [{"text": "unfinished'
        elif scenario == "not-found":
            content = (
                json.dumps({"found": False, "sentences": []})
                if structured
                else "NOT IN THE PASSAGES"
            )
        elif structured:
            content = json.dumps({"found": True, "sentences": items}, ensure_ascii=False)
        else:
            content = " ".join(
                f"{i['text']} " + "".join(f"[{k}]" for k in i["sources"]) for i in items
            )
        if scenario == "no-stream" or not body.get("stream"):
            return _send(handler, 200, _completion(content))
        _stream(handler, content, drip_s=1.0 if scenario == "drip" else 0.0, stop=self._stop)
        return None

    def _items(
        self, scenario: str, copied: str, n: int, passages: dict[str, str]
    ) -> list[dict[str, Any]]:
        good = {"text": copied, "sources": [n]}
        if scenario == "fabricated-quote":
            return [
                {"text": "The passage said “the moon is made of cheese” plainly.", "sources": [n]}
            ]
        if scenario == "cites-7":
            return [{"text": copied, "sources": [7]}]
        if scenario == "uncited":
            return [good, {"text": "Everyone agreed it was the right call.", "sources": []}]
        if scenario == "everyone":
            return [{"text": f"@everyone {copied}", "sources": [n]}]
        if scenario == "flood":
            return [{"text": "word " * 6_000, "sources": [n]}]
        if scenario == "link":
            return [{"text": f"{copied} More at https://example.invalid/x", "sources": [n]}]
        if scenario == "obeys":
            for k, text in passages.items():
                planted = PLANTED.search(text)
                if planted:
                    said = planted.group(1).strip()
                    return [{"text": said[0].upper() + said[1:] + ".", "sources": [int(k)]}]
            return [{"text": "The library will close forever on Friday.", "sources": [n]}]
        return [good]


def _completion(content: str) -> dict[str, Any]:
    return {
        "id": "fake",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }


def _send(handler: BaseHTTPRequestHandler, status: int, data: dict[str, Any]) -> None:
    raw = json.dumps(data).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)


def _stream(
    handler: BaseHTTPRequestHandler, content: str, *, drip_s: float, stop: threading.Event
) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Connection", "close")
    handler.end_headers()
    pieces = [content[i : i + 16] for i in range(0, len(content), 16)] or [""]
    try:
        for piece in pieces:
            chunk = {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
            handler.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            handler.wfile.flush()
            if drip_s and stop.wait(drip_s):
                return
        end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        handler.wfile.write(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())
        handler.wfile.flush()
    except OSError:  # the client gave up (its deadline): nothing more to send
        return
    finally:
        handler.close_connection = True
        time.sleep(0)
