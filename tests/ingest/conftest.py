"""Fixtures of the fetch tests: the local server, and watches on what fetch() connects to and
resolves."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from fetch_server import Server, serving

import index.ingest.fetch as fetch_module


@pytest.fixture
def server() -> Iterator[Server]:
    with serving(Server()) as running:
        yield running


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every address fetch() connects to; the real connection is still made."""
    made: list[tuple[str, int]] = []
    real = socket.create_connection

    def spy(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        made.append(address)
        return real(address, *args, **kwargs)

    monkeypatch.setattr(fetch_module.socket, "create_connection", spy)
    return made


@pytest.fixture
def fake_dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Names resolved from this table instead of DNS; a missing name does not exist."""
    table: dict[str, list[str]] = {}

    def getaddrinfo(host: str, port: int, *args: Any, **kwargs: Any) -> list[Any]:
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        infos: list[Any] = []
        for address in table[host]:
            if ":" in address:
                infos.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0)))
            else:
                infos.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port)))
        return infos

    monkeypatch.setattr(fetch_module.socket, "getaddrinfo", getaddrinfo)
    return table


@pytest.fixture
def first_hop_trusted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The first link's host passes the address check; every redirect is checked for real.

    A test has no public host to start from, so the first hop to 127.0.0.1 plays one.
    """
    real = fetch_module._checked_addresses
    hosts: list[str] = []

    def checked(host: str, port: int, allow_private: bool) -> list[str]:
        hosts.append(host)
        return real(host, port, allow_private or len(hosts) == 1)

    monkeypatch.setattr(fetch_module, "_checked_addresses", checked)
    return hosts
