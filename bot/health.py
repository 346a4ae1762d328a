"""`GET /healthz` and `GET /metrics`, served by the bot when ARTICLEBOT_METRICS_ADDRESS is set.

/healthz answers 200 `ok` while the gateway is connected, the store answers and the model is
loaded, and 503 with the reasons, one a line, otherwise: what a service manager or a load
balancer asks. /metrics is Prometheus's text format (bot/metrics.py). The server runs on the
bot's own event loop through aiohttp (which discord.py itself runs on); anything that reads
the store runs in a worker thread, so a slow database never holds up the gateway.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

import discord
from aiohttp import web

from index.errors import BadInput
from index.library import Library, Totals

from .metrics import CONTENT_TYPE, Snapshot

if TYPE_CHECKING:
    from .client import ArticleBot

__all__ = ["HealthServer", "gateway_problem", "problems"]

log = logging.getLogger(__name__)

# Seconds the store gets to answer a health check: past it, it counts as down.
STORE_TIMEOUT_S = 3.0


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


async def problems(bot: ArticleBot) -> list[str]:
    """What keeps the bot from answering: empty when it is healthy."""
    found = []
    gateway = gateway_problem(bot)
    if gateway:
        found.append(gateway)
    if not bot.library.model_loaded:
        found.append("the embedding model is not loaded yet")
    try:
        await asyncio.wait_for(asyncio.to_thread(bot.library.store.ping), STORE_TIMEOUT_S)
    except TimeoutError:
        found.append(f"the store did not answer within {STORE_TIMEOUT_S:g} s")
    except Exception as error:  # a StorageError says which database, without its password
        found.append(f"the store does not answer: {_first_line(error)}")
    return found


def _totals(library: Library) -> Totals | None:
    """What the store holds, or None when it does not answer (run in a worker thread)."""
    try:
        return library.totals()
    except Exception as error:  # said in a line: the store is down, no traceback needed
        log.warning("The store did not answer for /metrics: %s", _first_line(error))
        return None


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


class HealthServer:
    """The HTTP server of /healthz and /metrics, started in setup_hook and stopped on close."""

    def __init__(self, bot: ArticleBot, host: str, port: int) -> None:
        self.bot, self.host, self.port = bot, host, port
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/metrics", self._metrics)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
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

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _healthz(self, request: web.Request) -> web.Response:
        found = await problems(self.bot)
        if found:
            return web.Response(status=503, text="\n".join(found) + "\n")
        return web.Response(text="ok\n")

    async def _metrics(self, request: web.Request) -> web.Response:
        bot = self.bot
        totals = await asyncio.to_thread(_totals, bot.library)
        # The rest is read here, on the loop that changes it (the servers, the gateway).
        metrics = bot.telemetry.metrics
        metrics.show(
            Snapshot(
                totals=totals,
                gateway_connected=gateway_problem(bot) is None,
                model_loaded=bot.library.model_loaded,
                guilds=len(bot.guilds),
            )
        )
        return web.Response(body=metrics.render(), headers={"Content-Type": CONTENT_TYPE})
