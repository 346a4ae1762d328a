"""Asking: `/ask`, a mention of the bot, or a follow-up in a conversation.

A conversation starts with an answer: its thread (opened on it where the server allows), or a
reply to it, carries on from the earlier questions and the articles they quoted. Conversations
are kept where the articles are (the data folder, or PostgreSQL), so they carry on after a
restart, and in any process.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass

import discord
from discord import app_commands
from discord.ext import commands

from index import Answer
from index.errors import ArticlebotError
from index.messages import N_, question_locale
from index.storage.conversations import Turn

from ..activity import Asking, classify
from ..checks import editor_role, may_add, role_name
from ..client import ArticleBot
from ..errors import GUILD_ONLY, NO_PINGS, explain
from ..feedback import with_buttons
from ..lookup import article_choices, find_article
from ..render import (
    FOLLOW_UP_HINT,
    IN_THREAD_HINT,
    THREAD_HINT,
    answer_embed,
    guide_embed,
)
from ..server_settings import collection_name
from ..threads import opens_thread, remember
from ..words import interaction_locale, message_locale, translate
from ..work import MemberCooldown, defer, finish

log = logging.getLogger(__name__)

HOW_TO_ASK = N_(
    "Ask me something after the mention, for example: `@articlebot what did the mayor say?` "
    "(or use `/ask`)."
)
NEED_EMBEDS = N_("I need the Embed Links permission in this channel to show answers; ask an admin.")
# "@bot help", "@bot what can you do?": a request for the guide, not a question for the articles.
_HELP = re.compile(
    r"^(?:help|commands|\?|what can you do|what do you do|how do (?:i|you) use (?:you|this)"
    r"|how does this work|who are you)\W*$",
    re.IGNORECASE,
)
# A reply to an answer, or a message in its thread, is a follow-up only when it asks something:
# "thanks!" is not.
_ASKS = re.compile(
    r"\?|^\W*(?:who|whom|whose|what|when|where|why|how|which|is|are|was|were|do|does|did|can|"
    r"could|will|would|should|has|have|had|tell|explain|describe|list|show|give|and|but|so)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Conversation:
    """Where a question stands: the conversation it carries on, and whether in its thread."""

    key: int
    history: list[Turn]
    in_thread: bool

    @property
    def earlier(self) -> list[str]:
        return [turn.question for turn in self.history]

    @property
    def quoted(self) -> frozenset[int]:
        """The articles its answers quoted (a declined answer quoted none)."""
        return frozenset(a for t in self.history if not t.abstained for a in t.article_ids)


class Ask(commands.Cog):
    """Questions answered from this server's articles, with numbered sources."""

    RATE = (3, 30.0)  # questions per member per 30 seconds

    def __init__(self, bot: ArticleBot) -> None:
        self.bot = bot
        self.cooldown = MemberCooldown(*self.RATE)
        # Notices that cost the bot a message (in DMs, "slow down") go out once a minute a member.
        self.notices = MemberCooldown(1, 60.0)

    def _may_notify(self, message: discord.Message) -> bool:
        try:
            self.notices.hit(message)
        except app_commands.CommandOnCooldown:
            return False
        return True

    async def _answer(
        self,
        guild_id: int,
        question: str,
        scope: frozenset[int] | None,
        conversation: Conversation | None,
        about: int | None = None,
    ) -> Answer:
        """`about`: the article just added in the channel, which "tl;dr?" there means."""
        collection = self.bot.collection(guild_id)
        return await asyncio.to_thread(
            collection.ask_in_conversation,
            question,
            earlier=conversation.earlier if conversation else [],
            quoted=conversation.quoted if conversation else frozenset(),
            article_ids=scope,
            about=about if conversation is None else None,
        )

    async def _conversation(
        self, guild_id: int, channel: object, replied_to: int | None
    ) -> Conversation | None:
        """The conversation a question carries on: its thread's, or that of the answer it
        replies to; None for a new question."""
        store, name = self.bot.conversations, collection_name(guild_id)
        # A thread opened on an answer has the answer's id, which keys its conversation; only
        # a thread the bot opened can be one.
        me = self.bot.user
        if isinstance(channel, discord.Thread) and me is not None and channel.owner_id == me.id:
            history = await asyncio.to_thread(store.history, name, channel.id)
            if history:
                return Conversation(channel.id, history, in_thread=True)
        if replied_to is None:
            return None
        turn = await asyncio.to_thread(store.turn, name, replied_to)
        if turn is None:
            return None  # a reply to anything but an answer of this server is no follow-up
        history = await asyncio.to_thread(store.history, name, turn.conversation)
        return Conversation(turn.conversation, history, in_thread=False)

    def _opens_thread(self, channel: object, guild: discord.Guild, answer: Answer) -> bool:
        return opens_thread(self.bot, channel, guild, answer)

    async def _remember(
        self,
        guild_id: int,
        message: discord.Message,
        answer: Answer,
        conversation: Conversation | None,
        *,
        thread: bool,
    ) -> None:
        key = conversation.key if conversation else None
        await remember(self.bot, guild_id, message, answer, key, thread=thread)

    @app_commands.command(
        name="ask",
        description=N_(
            "Ask a question; the answer quotes this server's articles and cites each paragraph."
        ),
    )
    @app_commands.guild_only()
    @app_commands.describe(
        question=N_("What you want to know, in your own words"),
        article=N_("Only search this article (start typing its title)"),
    )
    async def ask(
        self,
        interaction: discord.Interaction,
        question: app_commands.Range[str, 1, 1000],
        article: str | None = None,
    ) -> None:
        guild = interaction.guild
        assert guild is not None  # the tree admits server interactions only
        with self.bot.telemetry.asking("slash", guild.id, question, interaction) as asking:
            self.cooldown.hit(interaction)
            await defer(interaction)
            scope, conversation = None, None
            if article:
                articles = await asyncio.to_thread(self.bot.collection(guild.id).articles)
                scope = frozenset({find_article(articles, article).id})
            else:
                # /ask inside an answer's thread carries on its conversation, like a message
                # there.
                conversation = await self._conversation(guild.id, interaction.channel, None)
            about = self.bot.recent_adds.article(interaction.channel_id, interaction.created_at)
            answer = await self._answer(guild.id, question, scope, conversation, about)
            thread = conversation is None and self._opens_thread(interaction.channel, guild, answer)
            # A slash command's frame is in the member's Discord language (or the server's).
            locale = interaction_locale(interaction)
            embed = answer_embed(answer, follow_up=_hint(conversation, thread), locale=locale)
            message = await with_buttons(
                lambda view: finish(interaction, embed=embed, view=view), locale
            )
            asking.answer = answer
        await self._remember(guild.id, message, answer, conversation, thread=thread)
        self._write(guild.id, message, answer, conversation, thread, locale)

    @ask.autocomplete("article")
    async def ask_article(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await article_choices(self.bot, interaction, current)

    # mentions, replies and threads

    def _mentioned(self, message: discord.Message) -> bool:
        me = self.bot.user
        # In the text itself: a reply lists the author it answers among its mentions too.
        if me is not None and re.search(rf"<@!?{me.id}>", message.content):
            return True
        # Members often pick the bot's own role from the mention list instead of the bot.
        own_role = message.guild.self_role if message.guild else None
        return own_role is not None and own_role in message.role_mentions

    def _question(self, message: discord.Message) -> str:
        text = message.content
        if self.bot.user is not None:
            text = re.sub(rf"<@!?{self.bot.user.id}>", " ", text)
        own_role = message.guild.self_role if message.guild else None
        if own_role is not None:
            text = text.replace(own_role.mention, " ")
        return " ".join(text.split())

    async def _addressed(self, message: discord.Message) -> tuple[bool, Conversation | None]:
        """Whether a server message is a question for the bot, and the conversation it carries
        on: a mention (in a channel the server chose), or a question in a conversation."""
        assert message.guild is not None
        reference = message.reference
        replied_to = reference.message_id if reference and reference.message_id else None
        mentioned = self._mentioned(message)
        conversation = None
        # Only a reply, a mention or a message outside a plain channel (in a thread) may carry
        # on a conversation: the rest of a server's chatter costs no look-up.
        plain = isinstance(message.channel, discord.TextChannel)
        if replied_to is not None or mentioned or not plain:
            conversation = await self._conversation(message.guild.id, message.channel, replied_to)
        if conversation is None:
            settings = self.bot.server_settings.get(message.guild.id)
            # A mention outside the channels the server chose is not for the bot; /ask still is.
            return mentioned and settings.answers_mentions_in(message.channel), None
        # In a conversation, "thanks!" is no question; a mention of the bot always is. English
        # is read by its question words; any other language by meaning ("図書館は何時まで開いて
        # いますか" has no question mark).
        text = self._question(message)
        if mentioned or _ASKS.search(text):
            return True, conversation
        collection = self.bot.collection(message.guild.id)
        return await asyncio.to_thread(collection.summaries.asks_something, text), conversation

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        if message.author.bot or self.bot.user is None:
            return
        if message.guild is None:
            if self._may_notify(message):
                said = translate(question_locale(message.content), GUILD_ONLY)
                await _send(message, said, reply=False)
            return
        try:
            addressed, conversation = await self._addressed(message)
        except ArticlebotError as error:
            # The store is down (a reply or a thread needs its conversation): a question is
            # told so in one sentence, like any other; other chatter only leaves a log line.
            await self._unreadable(message, error)
            return
        if not addressed:
            return
        permissions = message.channel.permissions_for(message.guild.me)
        if not permissions.send_messages and not permissions.send_messages_in_threads:
            log.info("Cannot answer in channel %s: no Send Messages", message.channel.id)
            return
        # A reply needs Read Message History; without it the answer is sent plainly.
        reply = permissions.read_message_history
        question = self._question(message)
        # A message's frame is in the question's language where that is clear, else the
        # server's.
        locale = message_locale(self.bot, message, question)
        if not permissions.embed_links:
            await _send(message, translate(locale, NEED_EMBEDS), reply=reply)
            return
        asking = Asking(_via(conversation), message.guild.id, question)
        try:
            self.cooldown.hit(message)
        except app_commands.CommandOnCooldown as error:
            self.bot.telemetry.question(asking, "refused", error=error)
            if self._may_notify(message):  # said once a while, not to every message
                await _send(message, explain(error, locale)[0], reply=reply)
            return
        if not question:
            await _send(message, translate(locale, HOW_TO_ASK), reply=reply)
            return
        if _HELP.match(question):
            await _send(message, embed=self._guide(message, locale), reply=reply)
            return
        try:
            await message.channel.typing()
            about = self.bot.recent_adds.article(message.channel.id, message.created_at)
            answer = await self._answer(message.guild.id, question, None, conversation, about)
        except Exception as error:  # one handler for the whole path, like the tree's
            self.bot.telemetry.question(asking, classify(error), error=error)
            text, unexpected = explain(error, locale)
            if unexpected:
                log.exception("Error answering message %s", message.id)
            await _send(message, text, reply=reply)
            return
        thread = conversation is None and self._opens_thread(message.channel, message.guild, answer)
        embed = answer_embed(answer, follow_up=_hint(conversation, thread), locale=locale)
        sent = await with_buttons(
            lambda view: _send(message, embed=embed, view=view, reply=reply), locale
        )
        asking.answer = answer
        self.bot.telemetry.question(asking, "declined" if answer.abstained else "answered")
        if sent is not None:
            await self._remember(message.guild.id, sent, answer, conversation, thread=thread)
            self._write(message.guild.id, sent, answer, conversation, thread, locale)

    def _write(
        self,
        guild_id: int,
        message: discord.Message,
        answer: Answer,
        conversation: Conversation | None,
        thread: bool,
        locale: str,
    ) -> None:
        """The writer's answer, where the server has it on, edited in once it passes the checks:
        the quoted answer above is already shown."""
        self.bot.writing.start(
            guild_id,
            message,
            answer,
            follow_up=_hint(conversation, thread),
            conversation=conversation.key if conversation else None,
            locale=locale,
        )

    async def _unreadable(self, message: discord.Message, error: ArticlebotError) -> None:
        """A message whose conversation could not be read: answered with the error when it
        mentions the bot, otherwise noted in the log."""
        log.warning("Could not read the conversation of message %s: %s", message.id, error)
        if not self._mentioned(message) or message.guild is None:
            self.bot.telemetry.error(error)
            return
        question = self._question(message)
        asking = Asking("mention", message.guild.id, question)
        self.bot.telemetry.question(asking, classify(error), error=error)
        locale = message_locale(self.bot, message, question)
        await _send(message, explain(error, locale)[0], reply=True)

    def _guide(self, message: discord.Message, locale: str) -> discord.Embed:
        author = message.author
        admin = isinstance(author, discord.Member) and author.guild_permissions.manage_guild
        role = editor_role(self.bot, message.guild.id if message.guild else None)
        shown = role and role_name(message.guild, role)
        return guide_embed(
            can_add=may_add(author, role, admin), admin=admin, editor_role=shown, locale=locale
        )


def _via(conversation: Conversation | None) -> str:
    """How a message's question came, for the count: a mention, or a follow-up."""
    if conversation is None:
        return "mention"
    return "thread" if conversation.in_thread else "reply"


def _hint(conversation: Conversation | None, thread: bool) -> str:
    """Where the next question goes: in the thread, or as a reply to this answer."""
    if conversation is not None and conversation.in_thread:
        return IN_THREAD_HINT
    return THREAD_HINT if thread else FOLLOW_UP_HINT


async def _send(
    message: discord.Message,
    content: str | None = None,
    *,
    reply: bool,
    embed: discord.Embed | None = None,
    view: discord.ui.View = discord.utils.MISSING,
) -> discord.Message | None:
    """Answer in the message's channel, logging instead of raising (a listener has no handler)."""
    embeds = [embed] if embed else []
    try:
        if reply:
            return await message.reply(
                content, embeds=embeds, mention_author=False, allowed_mentions=NO_PINGS, view=view
            )
        return await message.channel.send(
            content, embeds=embeds, allowed_mentions=NO_PINGS, view=view
        )
    except discord.HTTPException:
        log.warning("Could not answer message %s", message.id, exc_info=True)
        return None


async def setup(bot: ArticleBot) -> None:
    await bot.add_cog(Ask(bot))
