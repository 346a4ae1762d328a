"""A small fake of Discord's REST API and gateway on 127.0.0.1, for the loopback smoke test.

Only what a bot needs to log in, sync commands and answer one interaction: HELLO, IDENTIFY ->
READY + GUILD_CREATE, heartbeats, one connection per shard; `GET /gateway/bot` (one shard
recommended), `GET /users/@me`, `GET /oauth2/applications/@me`, `PUT .../commands`; the
interaction callback and the edits or follow-ups that answer it.
It is a fake (the name says so): the real Discord cannot be reached from here.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp import WSMsgType, web

__all__ = ["APP_ID", "CHANNEL_ID", "GUILD_ID", "FakeDiscord", "Request", "interaction", "until"]

APP_ID = 900_000_000_000_000_001
GUILD_ID = 900_000_000_000_000_002
CHANNEL_ID = 900_000_000_000_000_003
MEMBER_ID = 900_000_000_000_000_004
NOW = "2026-01-01T00:00:00+00:00"

BOT_USER = {
    "id": str(APP_ID),
    "username": "articlebot",
    "discriminator": "0",
    "global_name": None,
    "avatar": None,
    "bot": True,
    "flags": 0,
}
MEMBER_USER = {**BOT_USER, "id": str(MEMBER_ID), "username": "reader", "bot": False}


def _json(data: Any, status: int = 200) -> web.Response:
    # discord.py parses a body as JSON only when Content-Type is exactly application/json;
    # aiohttp's json_response would add "; charset=utf-8".
    return web.Response(
        status=status, body=json.dumps(data).encode(), headers={"Content-Type": "application/json"}
    )


@dataclass
class Request:
    method: str
    path: str
    body: Any


@dataclass
class FakeDiscord:
    requests: list[Request] = field(default_factory=list)
    identified: asyncio.Event = field(default_factory=asyncio.Event)
    synced: asyncio.Event = field(default_factory=asyncio.Event)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    commands: list[dict[str, Any]] = field(default_factory=list)
    shards: dict[int, web.WebSocketResponse] = field(default_factory=dict)  # by shard id
    _sockets: list[web.WebSocketResponse] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    async def start(self) -> tuple[web.AppRunner, int]:
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return runner, port

    async def close(self) -> None:
        for ws in self._sockets:
            await ws.close()

    # gateway

    async def _send(self, ws: web.WebSocketResponse, event: str, data: Any) -> None:
        await ws.send_str(json.dumps({"op": 0, "t": event, "s": next(self._seq), "d": data}))

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.append(ws)
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 41_250}}))
        async for message in ws:
            if message.type is not WSMsgType.TEXT:
                break
            payload = json.loads(message.data)
            if payload["op"] == 1:
                await ws.send_str(json.dumps({"op": 11}))
            elif payload["op"] == 2:
                shard = payload["d"].get("shard") or [0, 1]
                self.shards[shard[0]] = ws
                await self._send(ws, "READY", self._ready(str(request.url), shard))
                await self._send(ws, "GUILD_CREATE", self._guild())
                self.identified.set()
                self.changed.set()
        return ws

    async def push_interaction(self, data: dict[str, Any], shard: int | None = None) -> None:
        """Send an interaction over every connection, or over one shard's only."""
        sockets = self._sockets if shard is None else [self.shards[shard]]
        for ws in sockets:
            if not ws.closed:
                await self._send(ws, "INTERACTION_CREATE", data)

    def _ready(self, url: str, shard: list[int]) -> dict[str, Any]:
        return {
            "v": 10,
            "user": BOT_USER,
            "guilds": [{"id": str(GUILD_ID), "unavailable": True}],
            "session_id": "fake-session",
            "resume_gateway_url": url,
            "application": {"id": str(APP_ID), "flags": 0},
            "shard": shard,
        }

    def _guild(self) -> dict[str, Any]:
        everyone = {
            "id": str(GUILD_ID),
            "name": "@everyone",
            "permissions": str((1 << 41) - 1),
            "position": 0,
            "color": 0,
            "hoist": False,
            "managed": False,
            "mentionable": False,
            "flags": 0,
        }
        return {
            "id": str(GUILD_ID),
            "name": "Loopback",
            "owner_id": str(MEMBER_ID),
            "roles": [everyone],
            "channels": [
                {
                    "id": str(CHANNEL_ID),
                    "type": 0,
                    "name": "general",
                    "position": 0,
                    "guild_id": str(GUILD_ID),
                    "permission_overwrites": [],
                }
            ],
            "members": [
                {
                    "user": BOT_USER,
                    "roles": [],
                    "joined_at": NOW,
                    "deaf": False,
                    "mute": False,
                    "flags": 0,
                }
            ],
            "member_count": 2,
            "features": [],
            "emojis": [],
            "stickers": [],
            "threads": [],
            "voice_states": [],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "unavailable": False,
            "large": False,
            "joined_at": NOW,
            "premium_tier": 0,
            "preferred_locale": "en-US",
        }

    # REST

    def _message(self, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": str(10**18 + next(self._ids)),
            "channel_id": str(CHANNEL_ID),
            "author": BOT_USER,
            "content": body.get("content") or "",
            "embeds": body.get("embeds") or [],
            "components": [],
            "attachments": [],
            "mentions": [],
            "mention_roles": [],
            "mention_everyone": False,
            "pinned": False,
            "tts": False,
            "type": 0,
            "flags": body.get("flags") or 0,
            "timestamp": datetime.now(UTC).isoformat(),
            "edited_timestamp": None,
        }

    def _thread(self, message_id: str, name: str) -> dict[str, Any]:
        return {
            "id": message_id,
            "guild_id": str(GUILD_ID),
            "parent_id": str(CHANNEL_ID),
            "owner_id": BOT_USER["id"],
            "name": name,
            "type": 11,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "message_count": 0,
            "member_count": 1,
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": 1440,
                "archive_timestamp": NOW,
                "locked": False,
            },
        }

    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["tail"]
        body = await request.json() if request.can_read_body else None
        self.requests.append(Request(request.method, path, body))
        self.changed.set()
        method = request.method
        if method == "GET" and path == "/gateway/bot":
            gateway = f"ws://{request.host}/gateway"
            limit = {"total": 1000, "remaining": 1000, "reset_after": 0, "max_concurrency": 1}
            return _json({"url": gateway, "shards": 1, "session_start_limit": limit})
        if method == "GET" and path == "/users/@me":
            return _json(BOT_USER)
        if method == "GET" and path == "/oauth2/applications/@me":
            return _json(
                {
                    "id": str(APP_ID),
                    "name": "articlebot",
                    "description": "",
                    "icon": None,
                    "bot_public": True,
                    "bot_require_code_grant": False,
                    "owner": MEMBER_USER,
                    "verify_key": "0" * 64,
                    "flags": 0,
                }
            )
        if method == "PUT" and path.endswith("/commands"):
            self.commands = [
                {**command, "id": str(800 + i), "application_id": str(APP_ID), "version": "1"}
                for i, command in enumerate(body or [])
            ]
            self.synced.set()
            return _json(self.commands)
        if method == "POST" and path.endswith("/callback"):
            interaction_id = path.split("/")[2]
            return _json({"interaction": {"id": interaction_id, "type": 2}})
        if path.startswith(f"/webhooks/{APP_ID}/") and method in ("POST", "PATCH"):
            return _json(self._message(body or {}))
        if path.startswith(f"/webhooks/{APP_ID}/") and method == "DELETE":
            return web.Response(status=204)  # a public "thinking…" taken down for a private error
        if method == "POST" and path.endswith("/typing"):
            return web.Response(status=204)
        if method == "POST" and path.endswith("/threads"):
            # /channels/{channel}/messages/{message}/threads: the thread takes the message's id.
            return _json(self._thread(path.split("/")[4], (body or {}).get("name", "")))
        return _json({"message": "Unknown route in the fake", "code": 0}, status=404)

    def command_id(self, name: str) -> str:
        return next(c["id"] for c in self.commands if c["name"] == name)


def interaction(
    command_id: str,
    name: str,
    options: list[dict[str, Any]],
    snowflake: int,
    token: str = "fake-interaction-token",
) -> dict:
    """An INTERACTION_CREATE for a slash command used by a plain member in the guild."""
    return {
        "id": str(snowflake),
        "application_id": str(APP_ID),
        "type": 2,
        "data": {"id": command_id, "name": name, "type": 1, "options": options},
        "guild_id": str(GUILD_ID),
        "channel_id": str(CHANNEL_ID),
        "channel": {
            "id": str(CHANNEL_ID),
            "type": 0,
            "guild_id": str(GUILD_ID),
            "name": "general",
            "position": 0,
            "permission_overwrites": [],
        },
        "member": {
            "user": MEMBER_USER,
            "roles": [],
            "joined_at": NOW,
            "permissions": str((1 << 41) - 1 - (1 << 5)),  # everything but Manage Server
            "deaf": False,
            "mute": False,
            "flags": 0,
        },
        "token": token,
        "version": 1,
        "app_permissions": str((1 << 41) - 1),
        "locale": "en-US",
        "guild_locale": "en-US",
        "entitlements": [],
        "authorizing_integration_owners": {"0": str(GUILD_ID)},
        "context": 0,
        "attachment_size_limit": 26_214_400,
    }


async def until(
    fake: FakeDiscord,
    processes: list[asyncio.subprocess.Process],
    found: Callable[[list[Request]], bool],
    deadline: float,
    logs: list[Path],
) -> None:
    """Wait until `found(requests)` holds; fail with the bots' logs if one exits or time is up."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    tails = lambda: "\n".join(log.read_text()[-3000:] for log in logs)  # noqa: E731
    while not found(fake.requests):
        for process in processes:
            if process.returncode is not None:
                pytest.fail(f"a bot exited with {process.returncode}:\n{tails()}")
        if loop.time() > end:
            pytest.fail(f"the bots did not get there in time:\n{tails()}")
        fake.changed.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(fake.changed.wait(), timeout=1.0)
