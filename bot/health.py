"""`GET /healthz` and `GET /metrics`, served by the bot when ARTICLEBOT_METRICS_ADDRESS is set.

/healthz answers 200 `ok` while the gateway is connected, the store answers, the model is
loaded and the claim on the process's shards is held, and 503 with the reasons, one a line,
otherwise: what a service manager or a load balancer asks. Its last line is the release
(`articlebot 1.1.0`). /metrics is Prometheus's text format (bot/metrics.py). The server runs on
the bot's own event loop through aiohttp (which discord.py itself runs on); anything that reads
the store runs in a worker thread, so a slow database never holds up the gateway.

The server is handed only what it reads (the Discord client, the library, the metrics, the
claim and how to take secrets out of a line), not the bot: no import of bot/client.py, which
starts it. Anyone who can reach its port can send it anything: a request that does not finish
its headers within REQUEST_TIMEOUT_S is dropped, and a malformed one is a debug line, not an
error with a traceback.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import discord
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from index.errors import BadInput, first_line, without_passwords
from index.library import Library, Totals
from index.ops.backup_record import read_record
from index.storage.claims import Claim
from index.version import version

from .metrics import CONTENT_TYPE, Metrics, Snapshot

__all__ = ["HealthServer", "gateway_problem", "is_loopback", "problems"]

log = logging.getLogger(__name__)

# Seconds the store gets to answer a health check: past it, it counts as down.
STORE_TIMEOUT_S = 3.0
# Seconds a connection may take to send a whole request (a scraper sends one in milliseconds).
REQUEST_TIMEOUT_S = 5.0


def gateway_problem(bot: discord.Client) -> str | None:
    """Why the bot is not connected to Discord's gateway, or None while it is."""
    if bot.is_closed():
        return "the bot is shutting down"
    if not bot.is_ready():
        return "not connected to Discord's gateway yet"
    if isinstance(bot, discord.AutoShardedClient):
        down = sorted(i for i, shard in bot.shards.items() if shard.is_closed())
        if down:
            return f"disconnected from Discord's gateway (shard {', '.join(map(str, down))})"
        return None
    socket = bot.ws
    if socket is None or not socket.open:
        return "disconnected from Discord's gateway"
    return None


async def problems(
    client: discord.Client, library: Library, claim: Claim | None = None
) -> list[str]:
    """What keeps the bot from answering: empty when it is healthy."""
    found = []
    gateway = gateway_problem(client)
    if gateway:
        found.append(gateway)
    if claim is not None and (problem := claim.problem()) is not None:
        found.append(f"the claim on {claim.serving} is not held: {problem}")
    if not library.model_loaded:
        found.append("the embedding model is not loaded yet")
    try:
        await asyncio.wait_for(asyncio.to_thread(library.store.ping), STORE_TIMEOUT_S)
    except TimeoutError:
        found.append(f"the store did not answer within {STORE_TIMEOUT_S:g} s")
    except Exception as error:  # a StorageError says which database, without its password
        found.append(f"the store does not answer: {first_line(error)}")
    return found


def _totals(library: Library) -> Totals | None:
    """What the store holds, or None when it does not answer (run in a worker thread)."""
    try:
        return library.totals()
    except Exception as error:  # said in a line: the store is down, no traceback needed
        log.warning("The store did not answer for /metrics: %s", first_line(error))
        return None


def is_loopback(host: str) -> bool:
    """Whether `host` is reachable from this machine only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve anywhere
        return False


class _RequestLog(logging.LoggerAdapter):
    """aiohttp's server log, where a request the client got wrong (a bad request line, headers
    too long, not HTTP at all) is a debug line without a traceback, not an error: anyone who
    can reach the port can send one, and the bot did nothing wrong."""

    def log(self, level: int, msg: object, *args: object, **kwargs: Any) -> None:
        error = kwargs.get("exc_info")
        if isinstance(error, HttpProcessingError):
            why = error.message or type(error).__name__
            super().log(logging.DEBUG, "%s: %s", str(msg) % args, why)
        else:
            super().log(level, msg, *args, **kwargs)


class HealthServer:
    """The HTTP server of /healthz and /metrics, started in setup_hook and stopped on close."""

    def __init__(
        self,
        client: discord.Client,
        library: Library,
        metrics: Metrics,
        host: str,
        port: int,
        *,
        redact: Callable[[str], str] = without_passwords,
        claim: Callable[[], Claim] | None = None,
    ) -> None:
        self.client, self.library, self.metrics = client, library, metrics
        self.claim = claim  # the claim on the process's shards, as it is at each request
        self.host, self.port = host, port
        self.redact = redact  # the body of /healthz names the store's error: no password in it
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/metrics", self._metrics)
        runner = web.AppRunner(
            app,
            access_log=None,
            handle_signals=False,
            # From the connection's start: one that never finishes its request is closed.
            keepalive_timeout=REQUEST_TIMEOUT_S,
            logger=_RequestLog(logging.getLogger("aiohttp.server"), {}),
        )
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, self.port).start()
        except OSError as error:
            await runner.cleanup()
            raise BadInput(
                f"Cannot serve /metrics on {self.host}:{self.port} "
                f"({error.strerror or error}); set ARTICLEBOT_METRICS_ADDRESS to a free port."
            ) from None
        self._runner = runner
        log.info("Serving /healthz and /metrics on %s:%s", self.host, self.port)
        if not is_loopback(self.host):
            log.warning(
                "/healthz and /metrics are served on %s, which other machines may reach, and "
                "have no password; set ARTICLEBOT_METRICS_ADDRESS=127.0.0.1:%s unless a firewall "
                "keeps the port private.",
                self.host,
                self.port,
            )

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _healthz(self, request: web.Request) -> web.Response:
        found = await problems(
            self.client, self.library, self.claim() if self.claim is not None else None
        )
        # The release last, on a line of its own: what an upgrade's check reads.
        release = f"articlebot {version()}\n"
        if found:
            return web.Response(status=503, text=self.redact("\n".join(found)) + "\n" + release)
        return web.Response(text="ok\n" + release)

    async def _metrics(self, request: web.Request) -> web.Response:
        totals = await asyncio.to_thread(_totals, self.library)
        backups = await asyncio.to_thread(read_record, Path(self.library.data_dir))
        # The rest is read here, on the loop that changes it (the servers, the gateway).
        self.metrics.show(
            Snapshot(
                totals=totals,
                gateway_connected=gateway_problem(self.client) is None,
                model_loaded=self.library.model_loaded,
                guilds=len(self.client.guilds),
                backup=backups,
            )
        )
        return web.Response(body=self.metrics.render(), headers={"Content-Type": CONTENT_TYPE})
