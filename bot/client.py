"""The Bot subclass: holds the library, loads one extension per feature, syncs commands."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from index import Collection, Library
from index.errors import ArticlebotError
from index.logs import Redactor
from index.messages import N_
from index.storage.claims import Claim

from .activity import Activity, classify
from .config import BotSettings
from .errors import Refused, report
from .health import HealthServer
from .recent import RecentAdds
from .server_settings import ServerSettingsStore, collection_name
from .words import CatalogueTranslator
from .writing import Rewriter

__all__ = ["EXTENSIONS", "ArticleBot", "ArticleTree"]

log = logging.getLogger(__name__)

EXTENSIONS = (
    "bot.cogs.ask",
    "bot.cogs.add",
    "bot.cogs.articles",
    "bot.cogs.admin",
    "bot.cogs.guide",
    "bot.cogs.feeds",
    "bot.cogs.settings",
    "bot.cogs.feedback",
    "bot.cogs.summaries",
)


# While the claim on this process's shards is not held, another process may be answering them.
NOT_HELD = N_(
    "This bot cannot confirm now that it alone answers for this server ({problem}), so it "
    "answers nothing until it can; try again in a minute."
)


class ArticleTree(app_commands.CommandTree):
    """The command tree with the bot's one error handler, its servers-only rule and its
    claim's: no command while the claim on the shards is not held."""

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        if interaction.guild_id is None:
            # Each server is its own collection; a DM has none to answer from.
            raise app_commands.NoPrivateMessage()
        client = interaction.client
        problem = client.claim.problem() if isinstance(client, ArticleBot) else None
        if problem is not None:
            if interaction.type is discord.InteractionType.autocomplete:
                return False
            raise Refused(NOT_HELD, problem=problem)
        return True

    async def on_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError, /
    ) -> None:
        client = interaction.client
        # /ask and /add count their own errors (bot/activity.py); the other commands' are here.
        counted = interaction.extras.get("counted")
        if isinstance(client, ArticleBot) and not counted and classify(error) == "failed":
            client.telemetry.error(error)
        await report(interaction, error)


class ArticleBot(commands.Bot):
    def __init__(self, settings: BotSettings, library: Library, **shards: Any) -> None:
        intents = discord.Intents.default()
        # Privileged: needed to read the question in a mention or a reply to an answer.
        intents.message_content = True
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=intents,
            # Nothing the bot sends may ping: article text can contain @everyone or <@id>.
            allowed_mentions=discord.AllowedMentions.none(),
            tree_cls=ArticleTree,
            help_command=None,
            **shards,
        )
        self.settings = settings
        self.library = library
        # Adds wait for slow sites and embed whole articles: they get threads of their own, so
        # that questions, on the loop's default threads, never queue behind them.
        self.add_pool = ThreadPoolExecutor(
            settings.add_workers, thread_name_prefix="articlebot-add"
        )
        # Beside the articles: what was asked and answered, how members judged it, and what
        # each server's admins chose; all of it outlives a restart.
        self.conversations = library.conversations()
        self.server_settings = ServerSettingsStore(
            library.collection_settings(), settings.editor_role
        )
        # Questions, adds and feed rounds, counted and logged; /metrics shows the counts.
        self.telemetry = Activity()
        self.recent_adds = RecentAdds()
        # Answers worded by the configured writer, edited in once checked (bot/writing.py).
        self.writing = Rewriter(self)
        # The claim on the shards this process serves, once bot/__main__.py has taken it.
        self.claim = Claim()
        self.health: HealthServer | None = None
        if settings.metrics_address is not None:
            self.health = HealthServer(
                self,
                library,
                self.telemetry.metrics,
                *settings.metrics_address,
                redact=Redactor(settings.secrets),
                claim=lambda: self.claim,
            )

    async def close(self) -> None:
        if self.health is not None:
            await self.health.stop()
        await self.writing.close()
        await super().close()
        # Queued adds are dropped; one in progress ends within its fetch deadline.
        self.add_pool.shutdown(wait=False, cancel_futures=True)
        self.conversations.close()
        self.server_settings.close()

    def collection(self, guild_id: int | None) -> Collection:
        """This server's own collection: nothing crosses between servers."""
        if guild_id is None:
            raise app_commands.NoPrivateMessage()
        return self.library.collection(collection_name(guild_id))

    async def setup_hook(self) -> None:
        if self.health is not None:
            # First, so that /healthz says "not connected yet" while the bot logs in.
            await self.health.start()
        for extension in EXTENSIONS:
            await self.load_extension(extension)
        # Descriptions in each Discord locale a catalogue speaks (bot/words.py).
        await self.tree.set_translator(CatalogueTranslator())
        await self.sync_commands()

    async def on_guild_available(self, guild: discord.Guild, /) -> None:
        # A server's settings are read off the event loop as it comes online, so that no
        # mention waits on the database (or the settings file) for the first read.
        try:
            await asyncio.to_thread(self.server_settings.get, guild.id)
        except ArticlebotError as error:  # the store is down: read again at the first use
            log.warning("Could not read the settings of server %s: %s", guild.id, error)
            self.telemetry.error(error)

    async def on_message(self, message: discord.Message, /) -> None:
        # No prefix commands: mentions are questions, handled by the ask cog's listener.
        return

    def dispatch(self, event_name: str, /, *args: Any, **kwargs: Any) -> None:
        # A message while the claim is not held is left to the process that may hold it: a
        # mention, a reply or a thread's follow-up would otherwise be answered twice. (Commands
        # are told why in ArticleTree; Discord takes one response to an interaction.)
        if event_name == "message" and self.claim.problem() is not None:
            return
        super().dispatch(event_name, *args, **kwargs)

    async def sync_commands(self) -> None:
        """Register the slash commands with Discord, only when they changed.

        A development server gets them at once; global commands can take a while to show, and
        Discord rate-limits creating them, so an unchanged set is not sent again.
        """
        if self.settings.dev_guild:
            guild = discord.Object(self.settings.dev_guild)
            self.tree.copy_global_to(guild=guild)
            await self.tree.sync(guild=guild)
            log.info("Synced commands to development server %s", guild.id)
            return
        # What Discord would be sent, translations included: a catalogue that changed is a
        # change to sync.
        translator = self.tree.translator
        commands = [
            await command.get_translated_payload(self.tree, translator)
            if translator is not None
            else command.to_dict(self.tree)
            for command in self.tree.get_commands()
        ]
        payload = json.dumps(commands, sort_keys=True)
        digest = hashlib.sha256(payload.encode()).hexdigest()
        marker = Path(self.library.data_dir) / f"discord-commands-{self.application_id}.sha256"
        if marker.exists() and marker.read_text().strip() == digest:
            log.info("Commands unchanged since the last sync; not syncing")
            return
        await self.tree.sync()
        marker.parent.mkdir(parents=True, exist_ok=True)
        scratch = marker.with_suffix(".tmp")
        scratch.write_text(digest)
        os.replace(scratch, marker)
        log.info("Synced %d global commands", len(self.tree.get_commands()))


class ShardedArticleBot(ArticleBot, commands.AutoShardedBot):
    """The bot over several of Discord's shards, each a gateway connection of its own (Discord
    requires them past 2,500 servers): all the shards Discord recommends, or the count and range
    the settings name, so that several processes, on several machines, share the servers."""

    def __init__(self, settings: BotSettings, library: Library) -> None:
        super().__init__(
            settings, library, shard_count=settings.shard_count, shard_ids=settings.shard_ids
        )


def create_bot(
    settings: BotSettings | None = None,
    *,
    library: Library | None = None,
    sharded: bool | None = None,
) -> ArticleBot:
    """The configured bot, not connected; settings come from the environment and `.env`.

    It runs shards (an AutoShardedBot, still a commands.Bot) when `sharded`, which defaults to
    whether ARTICLEBOT_SHARD_COUNT is set. The embedding model is not loaded here: the library
    loads it on first use, in a worker thread.
    """
    settings = settings or BotSettings.from_env()
    library = library or settings.core.library()
    if sharded if sharded is not None else settings.shard_count is not None:
        return ShardedArticleBot(settings, library)
    return ArticleBot(settings, library)
