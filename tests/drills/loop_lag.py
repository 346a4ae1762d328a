"""How long does the bot's event loop stall while a large article is added?

Runs the real bot (from `create_bot`) in SimCord, a member runs `/add` with a large article
attached, and a probe task on the same event loop sleeps 10 ms at a time and records how late
each wake-up is. A stall of the loop is what would delay the gateway heartbeat (Discord drops a
session that misses heartbeats) and every other member's commands.

    .venv/bin/python tests/drills/loop_lag.py                 # 1,500 paragraphs through /add
    .venv/bin/python tests/drills/loop_lag.py --paragraphs 500 --blocking

`--blocking` also runs the same add directly on the loop, as a bot that forgot
`asyncio.to_thread` would, to show what the worker thread saves. `--cold` also measures the
loop while a fresh process loads the model in a worker thread (what the bot does at start-up).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import discord  # noqa: E402
import simcord  # noqa: E402

from bot import BotSettings, create_bot  # noqa: E402
from index import Library  # noqa: E402
from index.embedding.embedder import load_embedder  # noqa: E402
from index.ingest.readers import read_bytes  # noqa: E402
from index.settings import Settings  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[3] / "shared" / "samples" / "000_bcf5d6bb99a2ac0a.txt"
TICK = 0.010


def big_article(paragraphs: int) -> bytes:
    """A long article made of the sample's paragraphs, each made distinct."""
    if SAMPLE.exists():
        source = [p for p in SAMPLE.read_text(encoding="utf-8").split("\n\n")[1:] if len(p) > 80]
    else:
        source = ["The council met on Tuesday and approved the harbor budget after a debate."]
    body = [f"{source[i % len(source)]} (Section {i + 1}.)" for i in range(paragraphs)]
    return ("A very long report\n\n" + "\n\n".join(body)).encode()


class Probe:
    """Sleeps `TICK` at a time on the loop and records how late each wake-up is."""

    def __init__(self) -> None:
        self.lags: list[float] = []
        self._stop = asyncio.Event()

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._stop.is_set():
            start = loop.time()
            await asyncio.sleep(TICK)
            self.lags.append(loop.time() - start - TICK)

    def stop(self) -> None:
        self._stop.set()

    def summary(self) -> str:
        lags = sorted(self.lags) or [0.0]
        p99 = lags[min(len(lags) - 1, int(len(lags) * 0.99))]
        return (
            f"max {max(lags) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
            f"median {statistics.median(lags) * 1000:.1f} ms over {len(self.lags):,} wake-ups"
        )


async def through_the_bot(library: Library, data: bytes) -> tuple[float, Probe, str]:
    bot = create_bot(BotSettings(core=Settings(data_dir=library.data_dir)), library=library)
    async with simcord.run(bot, settle_timeout=3_600) as env:
        guild = env.create_guild("Bench")
        channel = guild.create_text_channel("general")
        admins = guild.create_role("Admins", permissions=discord.Permissions(manage_guild=True))
        admin = guild.add_member(env.create_user("admin"), roles=[admins])
        probe = Probe()
        task = asyncio.create_task(probe.run())
        await asyncio.sleep(0.2)  # a baseline of idle wake-ups
        started = time.perf_counter()
        result = await admin.slash(channel, "add", file=("report.txt", data))
        elapsed = time.perf_counter() - started
        probe.stop()
        await task
        reply = result.response.content if result.response else "(no reply)"
    return elapsed, probe, reply


async def on_the_loop(library: Library, data: bytes) -> tuple[float, Probe]:
    """The mistake the bot avoids: the core called directly on the event loop."""
    probe = Probe()
    task = asyncio.create_task(probe.run())
    await asyncio.sleep(0.2)
    started = time.perf_counter()
    library.collection("blocking").add(read_bytes(data, "report.txt", limits=library.limits))
    elapsed = time.perf_counter() - started
    await asyncio.sleep(TICK * 2)  # let the probe see the stall end
    probe.stop()
    await task
    return elapsed, probe


async def cold_load() -> tuple[float, Probe]:
    """A fresh process loading the model in a worker thread, as the bot's launcher does."""
    probe = Probe()
    task = asyncio.create_task(probe.run())
    await asyncio.sleep(0.2)
    started = time.perf_counter()
    await asyncio.to_thread(load_embedder)
    elapsed = time.perf_counter() - started
    probe.stop()
    await task
    return elapsed, probe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paragraphs", type=int, default=1_500)
    parser.add_argument("--blocking", action="store_true", help="also measure a blocking add")
    parser.add_argument("--cold", action="store_true", help="also measure a cold model load")
    parser.add_argument("--cold-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cold_child:
        elapsed, probe = asyncio.run(cold_load())
        print(f"  loading the model in a worker thread took {elapsed:.1f} s: {probe.summary()}")
        return
    if args.cold:
        # A new process: in this one the model's libraries would already be imported.
        subprocess.run([sys.executable, __file__, "--cold-child"], check=True)
    data = big_article(args.paragraphs)
    print(f"Loading the model… ({os.cpu_count()} CPU cores)")
    embedder = load_embedder()
    with tempfile.TemporaryDirectory() as folder:
        library = Library(Path(folder), embedder=embedder)
        elapsed, probe, reply = asyncio.run(through_the_bot(library, data))
        size = f"{len(data) / 1e6:.1f} MB"
        print(f"/add of {args.paragraphs:,} paragraphs ({size}) took {elapsed:.1f} s")
        print(f"  bot reply: {reply}")
        print(f"  event-loop lag while adding (worker thread): {probe.summary()}")
        if args.blocking:
            elapsed, probe = asyncio.run(on_the_loop(library, data))
            print(f"  the same add on the event loop took {elapsed:.1f} s: {probe.summary()}")
        library.close()


if __name__ == "__main__":
    main()
