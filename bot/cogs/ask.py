"""Asking: `/ask`, a mention of the bot, or a reply to one of its answers (a follow-up)."""

from __future__ import annotations

import asyncio
import logging
import re

import discord
from discord import app_commands
from discord.ext import commands

from index import Answer, Collection

from ..checks import may_add
from ..client import ArticleBot
from ..errors import GUILD_ONLY, NO_PINGS, explain
from ..lookup import article_choices, find_article
from ..render import answer_embed, cited_article_ids, guide_embed
from ..work import AnswerMemory, MemberCooldown, defer, finish

log = logging.getLogger(__name__)

HOW_TO_ASK = (
    "Ask me something after the mention, for example: `@articlebot what did the mayor say?` "
    "(or use `/ask`)."
)
NEED_EMBEDS = "I need the Embed Links permission in this channel to show answers; ask an admin."
# "@bot help", "@bot what can you do?": a request for the guide, not a question for the articles.
_HELP = re.compile(
    r"^(?:help|commands|\?|what can you do|what do you do|how do (?:i|you) use (?:you|this)"
    r"|how does this work|who are you)\W*$",
    re.IGNORECASE,
)
# A reply to an answer is a follow-up only when it asks something: "thanks!" is not.
_ASKS = re.compile(
    r"\?|^\W*(?:who|whom|whose|what|when|where|why|how|which|is|are|was|were|do|does|did|can|"
    r"could|will|would|should|has|have|had|tell|explain|describe|list|show|give|and|but|so)\b",
    re.IGNORECASE,
)


class Ask(commands.Cog):
    """Questions answered from this server's articles, with numbered sources."""

    RATE = (3, 30.0)  # questions per member per 30 seconds

    def __init__(self, bot: ArticleBot) -> None:
        self.bot = bot
        self.cooldown = MemberCooldown(*self.RATE)
        # Notices that cost the bot a message (in DMs, "slow down") go out once a minute a member.
        self.notices = MemberCooldown(1, 60.0)
        self.answers = AnswerMemory()

    def _may_notify(self, message: discord.Message) -> bool:
        try:
            self.notices.hit(message)
        except app_commands.CommandOnCooldown:
            return False
        return True

    async def _answer(
        self, collection: Collection, question: str, article_ids: frozenset[int] | None
    ) -> Answer:
        return await asyncio.to_thread(collection.ask, question, article_ids=article_ids)

    @app_commands.command(name="ask")
    @app_commands.guild_only()
    @app_commands.describe(
        question="What you want to know, in your own words",
        article="Only search this article (start typing its title)",
    )
    async def ask(
        self,
        interaction: discord.Interaction,
        question: app_commands.Range[str, 1, 1000],
        article: str | None = None,
    ) -> None:
        """Ask a question; the answer quotes this server's articles and cites each paragraph."""
        self.cooldown.hit(interaction)
        collection = self.bot.collection(interaction.guild_id)
        await defer(interaction)
        scope = None
        if article:
            found = find_article(await asyncio.to_thread(collection.articles), article)
            scope = frozenset({found.id})
        answer = await self._answer(collection, question, scope)
        message = await finish(interaction, embed=answer_embed(answer))
        assert interaction.guild_id is not None  # the tree admits server interactions only
        self.answers.remember(message.id, interaction.guild_id, cited_article_ids(answer))

    @ask.autocomplete("article")
    async def ask_article(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await article_choices(self.bot, interaction, current)

    # mentions and replies

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

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        if message.author.bot or self.bot.user is None:
            return
        if message.guild is None:
            if self._may_notify(message):
                await _send(message, GUILD_ONLY, reply=False)
            return
        scope = None
        if message.reference and message.reference.message_id:
            scope = self.answers.scope(message.reference.message_id, message.guild.id)
        mentioned = self._mentioned(message)
        if scope is None and not mentioned:
            return
        if not mentioned and not _ASKS.search(self._question(message)):
            return  # a reply such as "thanks!" under an answer
        permissions = message.channel.permissions_for(message.guild.me)
        if not permissions.send_messages and not permissions.send_messages_in_threads:
            log.info("Cannot answer in channel %s: no Send Messages", message.channel.id)
            return
        # A reply needs Read Message History; without it the answer is sent plainly.
        reply = permissions.read_message_history
        if not permissions.embed_links:
            await _send(message, NEED_EMBEDS, reply=reply)
            return
        try:
            self.cooldown.hit(message)
        except app_commands.CommandOnCooldown as error:
            if self._may_notify(message):  # said once a while, not to every message
                await _send(message, explain(error)[0], reply=reply)
            return
        question = self._question(message)
        if not question:
            await _send(message, HOW_TO_ASK, reply=reply)
            return
        if _HELP.match(question):
            await _send(message, embed=self._guide(message), reply=reply)
            return
        try:
            await message.channel.typing()
            answer = await self._answer(self.bot.collection(message.guild.id), question, scope)
        except Exception as error:  # one handler for the whole path, like the tree's
            text, unexpected = explain(error)
            if unexpected:
                log.exception("Error answering message %s", message.id)
            await _send(message, text, reply=reply)
            return
        sent = await _send(message, embed=answer_embed(answer), reply=reply)
        if sent is not None:
            self.answers.remember(sent.id, message.guild.id, cited_article_ids(answer))

    def _guide(self, message: discord.Message) -> discord.Embed:
        author = message.author
        admin = isinstance(author, discord.Member) and author.guild_permissions.manage_guild
        role = self.bot.settings.editor_role
        return guide_embed(can_add=may_add(author, role, admin), admin=admin, editor_role=role)


async def _send(
    message: discord.Message,
    content: str | None = None,
    *,
    reply: bool,
    embed: discord.Embed | None = None,
) -> discord.Message | None:
    """Answer in the message's channel, logging instead of raising (a listener has no handler)."""
    embeds = [embed] if embed else []
    try:
        if reply:
            return await message.reply(
                content, embeds=embeds, mention_author=False, allowed_mentions=NO_PINGS
            )
        return await message.channel.send(content, embeds=embeds, allowed_mentions=NO_PINGS)
    except discord.HTTPException:
        log.warning("Could not answer message %s", message.id, exc_info=True)
        return None


async def setup(bot: ArticleBot) -> None:
    await bot.add_cog(Ask(bot))
