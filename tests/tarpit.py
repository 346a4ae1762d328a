"""Servers on 127.0.0.1 that answer slowly in every way HTTP allows, one read at a time.

Each answers every single read well within a per-read timeout, so only a deadline enforced from
outside the reading loop stops them.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator

Behaviour = Callable[[socket.socket, threading.Event], None]

HEADERS = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"


def drip_status_line(conn: socket.socket, stop: threading.Event) -> None:
    while not stop.is_set():
        conn.sendall(b"H")
        time.sleep(0.2)


def drip_headers(conn: socket.socket, stop: threading.Event) -> None:
    conn.sendall(HEADERS)
    while not stop.is_set():
        conn.sendall(b"X-Padding: a\r\n")
        time.sleep(0.2)


def endless_continue(conn: socket.socket, stop: threading.Event) -> None:
    while not stop.is_set():
        conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        time.sleep(0.1)


def drip_chunk_size(conn: socket.socket, stop: threading.Event) -> None:
    conn.sendall(HEADERS + b"Transfer-Encoding: chunked\r\n\r\n5\r\n<p>a<\r\n")
    while not stop.is_set():
        conn.sendall(b"0")  # a chunk-size line of zeros that never ends
        time.sleep(0.2)


def endless_trailers(conn: socket.socket, stop: threading.Event) -> None:
    conn.sendall(HEADERS + b"Transfer-Encoding: chunked\r\n\r\n5\r\n<p>a<\r\n0\r\n")
    while not stop.is_set():
        conn.sendall(b"X-Trailer: a\r\n")
        time.sleep(0.1)


def drip_body(conn: socket.socket, stop: threading.Event) -> None:
    conn.sendall(HEADERS + b"Content-Length: 100000\r\n\r\n")
    while not stop.is_set():
        conn.sendall(b"a")
        time.sleep(0.2)


@contextlib.contextmanager
def serving() -> Iterator[Callable[[Behaviour], str]]:
    """Start servers that answer every connection with a behaviour; each start gives its URL."""
    stop = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    threads: list[threading.Thread] = []

    def serve(behaviour: Behaviour) -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(65536)  # the request
                with contextlib.suppress(OSError):  # the client hung up: what a deadline does
                    behaviour(conn, stop)

    def start(behaviour: Behaviour) -> str:
        thread = threading.Thread(target=serve, args=(behaviour,), daemon=True)
        thread.start()
        threads.append(thread)
        return f"http://127.0.0.1:{listener.getsockname()[1]}/article"

    yield start
    stop.set()
    for thread in threads:
        thread.join(timeout=5)
    listener.close()
