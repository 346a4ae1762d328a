from __future__ import annotations

import discord
import pytest

from tests.conftest import SAMPLE

pytestmark = pytest.mark.asyncio


async def test_flow(simcord_env):
    env = simcord_env
    guild = env.create_guild("G")
    ch = guild.create_text_channel("general")
    admin_role = guild.create_role("Admin", permissions=discord.Permissions(manage_guild=True))
    admin = guild.add_member(env.create_user("ada"), roles=[admin_role])
    member = guild.add_member(env.create_user("bob"))
    r = await admin.slash(ch, "add", file=(SAMPLE.name, SAMPLE.read_bytes()))
    print("ADD", r, r.response)
    r = await member.slash(ch, "ask", question="Who is meeting with the NYC mayor?")
    print("ASK", r, r.response, r.response.embeds[0].to_dict() if r.response else None)
    m = await member.send(ch, f"{guild.me.mention} who is Tom Homan?")
    print("HIST", [ (x.content, [e.to_dict() for e in x.embeds]) for x in ch.history()][-1])
    print(member.available_commands(ch), admin.available_commands(ch))
    print(env.transcript())
