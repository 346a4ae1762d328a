"""Resident memory of articlebot's processes: `articlebot add`, `ask` and `chat` on the demo
article, and the bot serving three servers' collections as SimCord runs it.

    .venv/bin/python tests/drills/memory.py [--repeat N] [--before DIR]

It prints figures and checks none. Each figure is a process's peak resident size (`ru_maxrss`,
what `/usr/bin/time -v` calls maximum resident set size), read by the process itself as it
ends, so that it is that process's own and nothing of this one's. The bot is the real one:
`create_bot` with its settings from the environment, its real command tree, loading the model
in a worker thread as `python -m bot` does once logged in, in SimCord's in-process simulation of
Discord (no network). Three servers each have a collection of one article, in the default
model: the demo article and, where `../shared/eval` holds SQuAD v1.1 dev, its first two
articles (the demo article again in each otherwise). A member asks one question in each server
with `/ask`. Twice: with the articles added beforehand by `articlebot add` (the bot serving),
then with the server admins adding them through `/add` in the measured process (the bot
embedding too).

The code measured is this checkout's (its folder first on PYTHONPATH, whatever is installed), or
with `--before DIR` also an earlier release's, from a checkout of it (`git worktree add DIR
COMMIT`). Releases before the model cache kept the export in the data folder's `models/`: each
of its data folders gets links to the exports in the model cache (ARTICLEBOT_MODEL_CACHE, else
the user's), so an export the cache holds is used; one it lacks is made in each data folder (a
minute each), never in the cache, where that release would remove the exports it does not use.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

CHECKOUT = Path(__file__).resolve().parents[2]
DEMO = CHECKOUT / "index" / "demo" / "tool-library.md"
DEMO_QUESTION = "How much did the council approve for the renovation?"
# Servers' ids as SimCord creates them here: the collection of server N is `guild-N`.
SERVER_IDS = (910_000_000_000_000_001, 910_000_000_000_000_002, 910_000_000_000_000_003)

# Runs a module (`-m NAME`) or a file as __main__ and, as it ends, writes its own peak resident
# size in kB to the file named first: /usr/bin/time's figure, without /usr/bin/time.
_MEASURED = """
import resource, runpy, sys
report, how, target = sys.argv[1:4]
sys.argv = [target, *sys.argv[4:]]
try:
    if how == "-m":
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        runpy.run_path(target, run_name="__main__")
finally:
    with open(report, "w") as out:
        out.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
"""


@dataclass(frozen=True)
class Article:
    path: Path
    question: str


def _articles(folder: Path) -> list[Article]:
    """One article for each server, with a question it answers."""
    demo = Article(DEMO, DEMO_QUESTION)
    squad = CHECKOUT.parent / "shared" / "eval" / "squad-v1.1-dev.json"
    if not squad.exists():
        return [demo] * len(SERVER_IDS)
    articles = [demo]
    for n, article in enumerate(json.loads(squad.read_text(encoding="utf-8"))["data"][:2]):
        paragraphs = [" ".join(p["context"].split()) for p in article["paragraphs"]]
        path = folder / f"squad-{n}.txt"
        title = article["title"].replace("_", " ")
        path.write_text(title + "\n\n" + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
        articles.append(Article(path, article["paragraphs"][0]["qas"][0]["question"]))
    return articles


class Runner:
    """Starts processes of one release's code, each in a folder of the run's own."""

    def __init__(self, code: Path, base: Path) -> None:
        self.code = code
        self.base = base
        self.before = code != CHECKOUT

    def data_folder(self, name: str) -> Path:
        folder = self.base / name
        folder.mkdir()
        if self.before:  # it looks for the export in the data folder: links to the cache's
            from index.settings import model_cache

            cache = model_cache(os.environ)
            cache.mkdir(parents=True, exist_ok=True)
            (folder / "models").mkdir()
            for export in cache.glob("*-int8-*"):
                if export.is_dir() and not export.name.startswith("."):
                    (folder / "models" / export.name).symlink_to(export, target_is_directory=True)
        return folder

    def run(self, how: str, target: str, *args: str, stdin: str = "") -> tuple[float, str]:
        """Peak resident MB of one process and what it printed."""
        env = {
            k: v for k, v in os.environ.items() if k not in ("ARTICLEBOT_DATA_DIR", "PYTHONPATH")
        }
        env["PYTHONPATH"] = str(self.code)
        report = self.base / "peak-kb"
        done = subprocess.run(
            [sys.executable, "-c", _MEASURED, str(report), how, target, *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            cwd=self.base,  # no .env or checkout of its own to pick up
        )
        if done.returncode != 0:
            sys.exit(f"{target} {' '.join(args[:2])} failed:\n{done.stderr[-3000:]}")
        return int(report.read_text()) / 1024, done.stdout

    def cli(self, *args: str, stdin: str = "") -> tuple[float, str]:
        return self.run("-m", "index", *args, stdin=stdin)


def measure(runner: Runner, articles: list[Article], round_: int) -> dict[str, float]:
    figures = {}
    cli = runner.data_folder(f"cli-{round_}")
    figures["add"], _ = runner.cli("add", str(DEMO), "--data-dir", str(cli))
    figures["ask"], said = runner.cli("ask", DEMO_QUESTION, "--data-dir", str(cli))
    assert "[1]" in said, said
    figures["chat"], said = runner.cli(
        "chat", "--data-dir", str(cli), stdin=f"{DEMO_QUESTION}\nWho runs it?\n"
    )
    assert said.count("[1]") >= 2, said
    serving = runner.data_folder(f"bot-{round_}")
    for server, article in zip(SERVER_IDS, articles, strict=True):
        runner.cli(
            "add", str(article.path), "--collection", f"guild-{server}", "--data-dir", str(serving)
        )
    plan = [
        {"server": s, "question": a.question} for s, a in zip(SERVER_IDS, articles, strict=True)
    ]
    figures["bot"], said = runner.run("file", __file__, "--serve", str(serving), json.dumps(plan))
    print(f"the bot at its end: {said.strip()}", file=sys.stderr)
    adding = runner.data_folder(f"bot-adding-{round_}")
    plan = [{**p, "add": str(a.path)} for p, a in zip(plan, articles, strict=True)]
    figures["bot_adding"], said = runner.run(
        "file", __file__, "--serve", str(adding), json.dumps(plan)
    )
    print(f"the bot adding, at its end: {said.strip()}", file=sys.stderr)
    return figures


async def _serve(data_dir: Path, plan: list[dict[str, Any]]) -> None:
    """The measured bot process: run as a file, so that `bot` and `index` are the release's
    on PYTHONPATH, and touching only what every release has (`create_bot`, `warm_up`)."""
    import discord
    import simcord

    from bot import create_bot

    os.environ["ARTICLEBOT_DATA_DIR"] = str(data_dir)
    bot = create_bot(sharded=False)
    async with simcord.run(bot, settle_timeout=600) as env:
        # As `python -m bot` does once logged in: the model loaded in a worker thread.
        await asyncio.to_thread(bot.library.warm_up)
        for n, step in enumerate(plan):
            guild = env.create_guild(f"Server {n}", id=step["server"])
            channel = guild.create_text_channel("general")
            admins = guild.create_role("Admins", permissions=discord.Permissions(manage_guild=True))
            admin = guild.add_member(env.create_user(f"admin-{n}"), roles=[admins])
            member = guild.add_member(env.create_user(f"member-{n}"))
            if "add" in step:
                path = Path(step["add"])
                added = await admin.slash(channel, "add", file=(path.name, path.read_bytes()))
                assert added.response and added.response.content.startswith("Added"), added
            asked = await member.slash(channel, "ask", question=step["question"])
            assert asked.response is not None, asked
            (embed,) = asked.response.embeds
            assert "[1]" in (embed.description or ""), embed.description
    bot.library.close()
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    print(json.dumps({k: status[k].strip() for k in ("VmRSS", "RssAnon", "RssFile")}))


LABELS = {
    "add": "articlebot add of the demo article",
    "ask": "articlebot ask on the demo article",
    "chat": "articlebot chat, two questions on the demo article",
    "bot": "the bot in SimCord, three servers' collections, a question in each",
    "bot_adding": "the same, the three articles added through /add in the bot",
}


def _summary(rounds: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    return {
        key: {
            "median_mb": round(statistics.median(r[key] for r in rounds), 1),
            "min_mb": round(min(r[key] for r in rounds), 1),
            "max_mb": round(max(r[key] for r in rounds), 1),
        }
        for key in LABELS
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="rounds of every process")
    parser.add_argument("--before", type=Path, help="a checkout of an earlier release as well")
    parser.add_argument("--serve", nargs=2, help=argparse.SUPPRESS)  # the bot's own process
    args = parser.parse_args(argv)
    if args.serve:
        asyncio.run(_serve(Path(args.serve[0]), json.loads(args.serve[1])))
        return
    base = Path(tempfile.mkdtemp(prefix="articlebot-memory-"))
    try:
        articles = _articles(base)
        codes = {"this": CHECKOUT, **({"before": args.before.resolve()} if args.before else {})}
        rounds: dict[str, list[dict[str, float]]] = {name: [] for name in codes}
        for n in range(args.repeat):
            for name, code in codes.items():  # alternating, so other load hits both alike
                work = base / f"{name}-{n}"
                work.mkdir()
                rounds[name].append(measure(Runner(code, work), articles, n))
                print(f"{name}: {rounds[name][-1]}", file=sys.stderr)
        summaries = {name: _summary(r) for name, r in rounds.items()}
        for key, label in LABELS.items():
            figures = "  ".join(f"{n} {s[key]['median_mb']:.0f} MB" for n, s in summaries.items())
            print(f"{label}: {figures}", file=sys.stderr)
        load = [round(x, 2) for x in os.getloadavg()]
        names = [a.path.name for a in articles]
        print(json.dumps({"articles": names, "load": load, **summaries}))
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
