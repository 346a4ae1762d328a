"""`python -m bot` (or `articlebot-discord`): run the Discord bot until stopped."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from typing import NoReturn

import aiohttp
import discord
import yarl

from index.errors import ArticlebotError, ConfigurationError, StorageError, first_line
from index.library import Library
from index.logs import Redactor, configure_logging
from index.settings import secrets_in_env
from index.storage.claims import Claim
from index.version import version

from .client import ArticleBot, create_bot
from .config import BotSettings, OnPermanentError, on_permanent_error

log = logging.getLogger("bot")

# Seconds the bot waits for a database that does not answer yet, trying every few seconds.
DATABASE_WAIT_S = 120
DATABASE_RETRY_S = 3
# The exit code of an error no restart mends (no token, a refused token, a setting that does
# not parse, shards another process serves, a database that cannot hold articles): a service
# manager must not restart the bot for it (deploy/systemd/articlebot.service).
CONFIGURATION_ERROR = 2
# Seconds between looks at whether another process took this one's shards (index/storage/claims.py).
CLAIM_POLL_S = 0.5

WAITING = (
    "The bot now waits, serving nothing, until it is stopped (ARTICLEBOT_ON_PERMANENT_ERROR="
    "wait): fix what the line above says, then start it again (docker compose up -d)."
)

NO_TOKEN = """\
DISCORD_TOKEN is not set, so the bot cannot log in.

1. Open https://discord.com/developers/applications, create an application (New Application).
2. Under Bot, press Reset Token and copy the token.
3. Under Bot > Privileged Gateway Intents, turn on Message Content Intent.
4. Put DISCORD_TOKEN=<the token> in a .env file here (see .env.example), or export it.
"""

INTENT_MISSING = (
    "Discord refused the Message Content intent: turn on Bot > Privileged Gateway Intents > "
    "Message Content Intent for this application at https://discord.com/developers/applications."
)


def _point_at(settings: BotSettings) -> None:
    """Test-only: talk to a local fake of Discord instead of discord.com."""
    if settings.api_base:
        # _set_api_version resets Route.BASE, so it must run before the override.
        discord.http._set_api_version(10)
        discord.http.Route.BASE = settings.api_base.rstrip("/")
    if settings.gateway:
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(settings.gateway)


def _stop_for_good(message: str, policy: OnPermanentError) -> NoReturn:
    """An error no restart mends: its message, once, then exit code 2. Where the supervisor
    restarts every exit into the same error again (compose), wait to be stopped instead."""
    print(message.rstrip(), file=sys.stderr, flush=True)
    if policy == "wait":
        print(WAITING, file=sys.stderr, flush=True)
        stop = {signal.SIGTERM, signal.SIGINT}
        if hasattr(signal, "pthread_sigmask"):
            # Blocked first: one that comes meanwhile waits for sigwait rather than ending the
            # process by its default action.
            signal.pthread_sigmask(signal.SIG_BLOCK, stop)
            signal.sigwait(stop)
        else:  # Windows: Ctrl+C ends the wait
            with contextlib.suppress(KeyboardInterrupt):
                while True:
                    time.sleep(3600)
    raise SystemExit(CONFIGURATION_ERROR)


def _policy_alone() -> OnPermanentError:
    """ARTICLEBOT_ON_PERMANENT_ERROR when the other settings did not parse (`exit` when it does
    not parse either)."""
    try:
        return on_permanent_error(os.environ)
    except ArticlebotError:
        return "exit"


def _report_warm_up(task: asyncio.Task[object]) -> None:
    if not task.cancelled() and task.exception() is not None:
        # Questions will try again (and say what is wrong); the log says it once, now.
        log.error("Could not load the embedding model or word list", exc_info=task.exception())


def _open_library(settings: BotSettings) -> Library:
    """The library; a database that is not answering yet (started beside the bot by compose,
    or restarting) is waited for, up to DATABASE_WAIT_S, rather than failed at once."""
    deadline = time.monotonic() + DATABASE_WAIT_S
    while True:
        try:
            return settings.core.library()
        except StorageError as error:
            # A database of the wrong kind (its encoding, its pgvector) stays so: no waiting.
            if isinstance(error, ConfigurationError) or not settings.core.database_url:
                raise
            if time.monotonic() > deadline:
                raise
            log.warning("Waiting for the database: %s", first_line(error))
            time.sleep(DATABASE_RETRY_S)


async def _run(settings: BotSettings) -> None:
    library = await asyncio.to_thread(_open_library, settings)
    # Shards as Discord recommends, unless the settings name a count and range.
    bot = create_bot(settings, library=library, sharded=True)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        # Windows has no loop signal handlers; Ctrl+C still stops the bot there.
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signum, lambda: asyncio.ensure_future(bot.close()))
    try:
        # Before logging in: a second process for the same shards would answer every question
        # twice. Held until the bot stops; the kernel or the database frees it if it dies.
        with library.claim_shards(settings.shard_count, settings.shard_ids) as claim:
            bot.claim = claim  # while it is not held, the bot answers nothing
            await _serve(bot, settings, library, claim)
    finally:
        library.close()


async def _serve(bot: ArticleBot, settings: BotSettings, library: Library, claim: Claim) -> None:
    async with bot:
        assert settings.token is not None
        await bot.login(settings.token)  # first: a refused token or no Discord ends it here
        # Load the model now, in a thread, so the first question does not wait for it.
        warm = asyncio.create_task(asyncio.to_thread(library.warm_up))
        warm.add_done_callback(_report_warm_up)
        watch = asyncio.create_task(_close_when_taken_over(bot, claim))
        try:
            await bot.connect()
        finally:
            watch.cancel()
            warm.cancel()
    taken = claim.taken_over()
    if taken is not None:  # a configuration error: said once, and no restart
        raise taken


async def _close_when_taken_over(bot: discord.Client, claim: Claim) -> None:
    """Close the bot once another process took its shards while its claim was lost."""
    while claim.taken_over() is None:
        await asyncio.sleep(CLAIM_POLL_S)
    await bot.close()


def main() -> None:
    # Until the settings are read, lines are logged with no secret known to take out.
    configure_logging(level=logging.INFO)
    # The bot never joins a voice channel: no warning at each start that voice is unsupported.
    discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False
    # At INFO, sentence-transformers draws a progress bar for every question into the log.
    logging.getLogger("sentence_transformers").setLevel(logging.WARNING)
    try:
        settings = BotSettings.from_env()
    except ArticlebotError as error:
        _stop_for_good(Redactor(secrets_in_env())(str(error)), _policy_alone())
    core = settings.core
    configure_logging(
        log_format=core.log_format,
        secrets=settings.secrets,
        content=core.log_content,
        level=core.log_level or logging.INFO,
    )
    log.info("articlebot %s starting", version())
    policy = settings.on_permanent_error
    if not settings.token:
        _stop_for_good(NO_TOKEN, policy)
    _point_at(settings)
    try:
        asyncio.run(_run(settings))
    except discord.LoginFailure:
        _stop_for_good("Discord refused DISCORD_TOKEN; copy a fresh one from the Bot page.", policy)
    except discord.PrivilegedIntentsRequired:
        _stop_for_good(INTENT_MISSING, policy)
    except ConfigurationError as error:
        # Shards another process serves (or took meanwhile), another shard count or release
        # beside this one, an unfit database.
        _stop_for_good(Redactor(settings.secrets)(str(error)), policy)
    except ArticlebotError as error:  # the metrics address taken, the database gone
        print(Redactor(settings.secrets)(str(error)), file=sys.stderr)
        raise SystemExit(1) from None
    except (aiohttp.ClientError, ConnectionError, TimeoutError, discord.GatewayNotFound) as error:
        # One line through the log (JSON when JSON logs are asked for), not a traceback.
        log.error(
            "Cannot reach Discord (%s); check this machine's network and "
            "https://discordstatus.com, then start the bot again.",
            first_line(error),
        )
        raise SystemExit(1) from None
    except discord.HTTPException as error:  # Discord answered, with an error (a 5xx, a 403)
        log.error(
            "Discord answered the bot with an error (%s); see https://discordstatus.com, then "
            "start the bot again.",
            first_line(error),
        )
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        pass
    log.info("Stopped")


if __name__ == "__main__":
    main()
