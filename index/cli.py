"""The `articlebot` command line: parses arguments, calls the core, prints its results."""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from index.collection import Progress
from index.errors import ArticlebotError, BadInput
from index.ingest.paragraphs import decode_bytes
from index.ingest.readers import read_path, read_text, read_url
from index.library import Library
from index.records import AddResult, Answer, Citation, Document
from index.settings import Settings, load_dotenv
from index.storage.sqlite_store import Passage, Store

__all__ = ["main"]

# How many earlier questions a chat carries on from (a Discord thread reads as many).
CHAT_TURNS = 3


def _is_url(value: str) -> bool:
    return "://" in value or value.lower().startswith(("http:", "https:", "ftp:", "file:"))


def _clean(value: str) -> str:
    """Command-line text as valid Unicode: bytes that were not UTF-8 reach Python as lone
    surrogates, which SQLite and a UTF-8 terminal refuse; each becomes U+FFFD."""
    try:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a surrogate that no byte made (only from Python callers)
        return value.encode("utf-8", "replace").decode("utf-8")


def _print_json(data: Any, out: IO[str] | None = None) -> None:
    print(_clean(json.dumps(data, ensure_ascii=False)), file=out or sys.stdout, flush=True)


def _read_stdin(limit: int) -> str:
    """Standard input as text, read as bytes up to the size limit: bad UTF-8, binary data or an
    endless pipe get a clear message, not a traceback or a full memory."""
    binary = getattr(sys.stdin, "buffer", None)
    if binary is None:  # a text stream put in place of stdin (by a test harness)
        return str(sys.stdin.read(limit + 1))  # read_text checks the size
    data = binary.read(limit + 1)
    if len(data) > limit:
        raise BadInput(
            f"The standard input is over the limit of {limit / 1e6:,.1f} MB; "
            "split it into smaller articles."
        )
    return decode_bytes(data, "The standard input")


@contextlib.contextmanager
def _progress(enabled: bool) -> Iterator[Progress | None]:
    """A progress bar on a terminal; nothing when piped or printing JSON."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
    from rich.progress import Progress as Bar

    with Bar(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), transient=True
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update


# rendering


def render_answer(answer: Answer) -> str:
    """The answer, then the sources it cites, then the other passages that were considered."""

    def source(c: Citation) -> list[str]:
        details = ", ".join(x for x in (c.site, c.published) if x)
        lines = [f"[{c.n}] {c.title}, ¶{c.paragraph}" + (f" ({details})" if details else "")]
        if c.link or c.url:
            lines.append(f"    {c.link or c.url}")
        return lines

    cited = [c for c in answer.citations if f"[{c.n}]" in answer.answer]
    others = [c for c in answer.citations if c not in cited]
    lines = [answer.answer]
    if answer.abstained:
        lines += ["", "Closest passages:"]
        for c in others:
            lines += source(c) + [f"    “{c.quote}”"]
        return "\n".join(lines)
    if cited:
        lines += ["", "Sources:"]
        for c in cited:
            lines += source(c)
    if others:
        lines += ["", "Also relevant:"]
        for c in others:
            lines += source(c)
    return "\n".join(lines)


def render_added(result: AddResult) -> str:
    a = result.article
    where = f" ({a.site})" if a.site else ""
    if result.near_duplicate:
        return (
            f"Already there as nearly the same text: “{a.title}”{where}, id {a.id}; nothing "
            "changed (`articlebot refresh ID` fetches a new version of a stored link)."
        )
    if not result.added:
        return f"Already there: “{a.title}”{where}, id {a.id}; nothing changed."
    skipped = len(result.skipped)
    return (
        f"Added “{a.title}”{where} as id {a.id}: {a.paragraphs} paragraphs indexed"
        f" ({a.passages} passages), {skipped} line{'s' if skipped != 1 else ''} skipped"
        " as not part of the article."
    )


# commands


def cmd_add(args: argparse.Namespace, library: Library) -> int:
    collection = library.collection(args.collection)
    if args.title and len(args.inputs) > 1:
        raise BadInput("--title applies to one article; add the files one at a time.")

    def reader(item: str) -> Callable[[], Document]:
        if item == "-":
            return lambda: read_text(
                _read_stdin(library.limits.max_file_bytes),
                title=args.title,
                source="stdin",
                limits=library.limits,
            )
        if _is_url(item):
            return lambda: read_url(_clean(item), title=args.title, limits=library.limits)
        return lambda: read_path(item, title=args.title, limits=library.limits)

    failed = 0
    with _progress(not args.json) as progress:
        readers = (reader(item) for item in args.inputs)
        results = collection.add_many(readers, progress=progress)
        for item, result in zip(args.inputs, results, strict=True):
            if isinstance(result, ArticlebotError):
                failed += 1
                if args.json:
                    _print_json({"input": item, "error": str(result)})
                else:
                    print(_clean(f"error: {item}: {result}"), file=sys.stderr)
            elif args.json:
                _print_json({"input": item, **result.to_json()})
            else:
                print(render_added(result))
    return 1 if failed else 0


def cmd_ask(args: argparse.Namespace, library: Library) -> int:
    if args.batch:
        return _ask_batch(args, library)
    if not args.question:
        raise BadInput('Give a question, e.g. articlebot ask "Who announced the lawsuits?".')
    answer = library.collection(args.collection).ask(args.question, top_k=args.top_k)
    if args.json:
        _print_json(answer.to_json())
    else:
        print(render_answer(answer))
    return 0


def _ask_batch(args: argparse.Namespace, library: Library) -> int:
    """JSON lines in, one JSON answer per line out; the model is loaded once for all."""
    stream = _stdin_lines() if args.batch == "-" else _open_text(args.batch)
    failed = 0
    with stream:
        for number, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                if not isinstance(item, dict) or not isinstance(item.get("question"), str):
                    raise BadInput(f'Line {number} needs a "question" string.')
                name = _clean(str(item.get("collection") or args.collection))
                answer = library.collection(name).ask(item["question"], top_k=args.top_k)
                _print_json(answer.to_json())
            except (ArticlebotError, json.JSONDecodeError) as exc:
                failed += 1
                message = str(exc) if isinstance(exc, ArticlebotError) else f"line {number}: {exc}"
                _print_json({"question": None, "error": message, "line": number})
    return 1 if failed else 0


def _stdin_lines() -> IO[str]:
    binary = getattr(sys.stdin, "buffer", None)
    if binary is None:  # a text stream put in place of stdin (by a test harness)
        return sys.stdin
    return io.TextIOWrapper(binary, encoding="utf-8", errors="replace")


def _open_text(path: str) -> IO[str]:
    try:
        # Bad UTF-8 on one line becomes U+FFFD there, instead of ending the whole batch.
        return open(path, encoding="utf-8", errors="replace")  # noqa: SIM115 - closed by `with`
    except OSError as exc:
        raise BadInput(f"Cannot read {path}: {exc.strerror}; check the path.") from None


def cmd_list(args: argparse.Namespace, library: Library) -> int:
    articles = library.collection(args.collection).articles()
    if args.json:
        _print_json([a.to_json() for a in articles])
        return 0
    if not articles:
        print("No articles yet; add one with `articlebot add FILE_OR_URL`.")
    for a in articles:
        where = f" ({a.site})" if a.site else ""
        print(f"{a.id:>5}  {a.title}{where}  {a.paragraphs} ¶, added {a.added_at[:10]}")
    return 0


def cmd_remove(args: argparse.Namespace, library: Library) -> int:
    article = library.collection(args.collection).remove(args.id)
    if args.json:
        _print_json({"removed": article.to_json()})
    else:
        print(f"Removed “{article.title}” (id {article.id}).")
    return 0


def cmd_show(args: argparse.Namespace, library: Library) -> int:
    collection = library.collection(args.collection)
    article = collection.get(args.id)
    passages = collection.passages_of(args.id)
    if args.json:
        _print_json(
            {
                "article_id": article.id,
                "title": article.title,
                "site": article.site,
                "author": article.author,
                "published": article.published,
                "url": article.url,
                "passages": [_passage_json(p) for p in passages],
            }
        )
        return 0
    print(article.title)
    about = [x for x in (article.site, article.author, article.published, article.url) if x]
    if about:
        print(" · ".join(about))
    heading = None
    for passage in passages:
        if passage.heading and passage.heading != heading:
            print(f"\n## {passage.heading}")
        heading = passage.heading
        print(f"\n¶{passage.paragraph}  {passage.text}")
    return 0


def _passage_json(passage: Passage) -> dict[str, object]:
    shown: dict[str, object] = {"paragraph": passage.paragraph, "text": passage.text}
    if passage.heading:
        shown["heading"] = passage.heading
    return shown


def cmd_refresh(args: argparse.Namespace, library: Library) -> int:
    collection = library.collection(args.collection)
    with _progress(not args.json) as progress:
        result = collection.refresh(args.id, progress=progress)
    if args.json:
        _print_json({**result.to_json(), "refreshed": args.id, "changed": result.added})
    elif result.added:
        print(f"Updated “{result.article.title}”: it is now article {result.article.id}.")
    else:
        print(f"“{result.article.title}” has not changed since it was added.")
    return 0


def cmd_feed(args: argparse.Namespace, library: Library) -> int:
    import index.ops.feed_polling as subs

    collection = library.collection(args.collection)
    if args.feed_command == "add":
        feed, added = subs.add_feed(collection, args.url)
        if args.json:
            _print_json({**feed.to_json(), "added": added})
        else:
            state = "Following" if added else "Already following"
            print(f"{state} {feed.title or feed.url} (feed {feed.id}); `feed poll` adds its news.")
    elif args.feed_command == "list":
        feeds = subs.list_feeds(collection)
        if args.json:
            _print_json([f.to_json() for f in feeds])
            return 0
        if not feeds:
            print("No feeds yet; follow one with `articlebot feed add URL`.")
        for f in feeds:
            checked = f"checked {f.checked_at[:16]}" if f.checked_at else "not checked yet"
            print(f"{f.id:>5}  {f.title or f.url}  {f.url}  ({checked})")
    elif args.feed_command == "remove":
        feed = subs.remove_feed(collection, args.id)
        if args.json:
            _print_json({"removed": feed.to_json()})
        else:
            print(f"No longer following {feed.title or feed.url}; its articles stay.")
    else:
        result = subs.poll_feeds(collection)
        if args.json:
            _print_json(result.to_json())
        else:
            print(
                f"Checked {result.checked} of {result.feeds} feeds: added {result.added} "
                f"articles, {result.failed} failed."
            )
            for error in result.errors:
                print(f"  {error}", file=sys.stderr)
        return 1 if result.failed and not result.checked else 0
    return 0


def cmd_rebuild(args: argparse.Namespace, library: Library) -> int:
    with _progress(not args.json) as progress:
        result = library.collection(args.collection).rebuild(
            reembed=args.reembed, progress=progress
        )
    if args.json:
        _print_json(result.to_json())
    else:
        verb = "Re-embedded and rebuilt" if result.reembedded else "Rebuilt"
        print(f"{verb} the index: {result.passages} passages in {result.seconds:.1f} s.")
    return 0


def cmd_stats(args: argparse.Namespace, library: Library) -> int:
    stats = library.collection(args.collection).stats()
    if args.json:
        _print_json(stats.to_json())
    else:
        print(
            f"{stats.collection}: {stats.articles} articles, {stats.passages} passages, "
            f"{stats.indexed} indexed ({stats.index_type}, {stats.index_bytes / 1e6:.1f} MB), "
            f"model {stats.model}"
        )
    return 0


def cmd_migrate(args: argparse.Namespace, library: Library) -> int:
    from index.ops.migrate import migrate
    from index.storage.postgres import PgStore, redact

    if not args.to.startswith(("postgresql://", "postgres://")):
        raise BadInput("Give the database as a postgresql:// URL, e.g. --to postgresql://host/db.")
    # The source is always the data folder, whatever ARTICLEBOT_DATABASE_URL says.
    source = library.store if isinstance(library.store, Store) else None
    source = source or Store(library.data_dir / "articlebot.db")
    if not source.collection_names():
        raise BadInput(
            f"The data folder {library.data_dir} holds no articles to copy; give the folder "
            "the bot has used with --data-dir (or ARTICLEBOT_DATA_DIR)."
        )
    target = PgStore(args.to, library.embedder_dim())
    try:
        with _progress(not args.json) as progress:
            names = [args.collection] if args.collection else None
            result = migrate(source, target, names, progress)
    finally:
        target.close()
        if source is not library.store:
            source.close()
    if args.json:
        _print_json(result.to_json())
    else:
        print(
            f"Copied {result.articles} articles ({result.passages} passages) and "
            f"{result.feeds} feeds of {result.collections} collections to {redact(args.to)}, "
            f"with {result.server_rows} settings, conversation turns and votes; "
            f"{result.already_present} articles were already there."
        )
    return 0


def cmd_feedback(args: argparse.Namespace, library: Library) -> int:
    store = library.conversations()
    try:
        votes = store.votes([args.collection] if args.collection else None)
    finally:
        store.close()
    if args.not_helpful:
        votes = [v for v in votes if not v.helpful]
    if args.json:
        _print_json([v.to_json() for v in votes])
        return 0
    if not votes:
        print("No feedback yet: members rate answers with the Helpful / Not helpful buttons.")
    for v in votes:
        verdict = "helpful    " if v.helpful else "not helpful"
        print(f"{v.voted_at[:16]}  {verdict}  {v.collection}  {v.question}")
    return 0


def cmd_chat(args: argparse.Namespace, library: Library) -> int:
    collection = library.collection(args.collection)
    print("Ask about your articles; an empty line or Ctrl-D ends.", file=sys.stderr)
    # The conversation so far, as a Discord thread keeps it: its last questions and what their
    # answers quoted, so "why did he go there?" carries on from "who visited Warsaw?".
    turns: collections.deque[tuple[str, frozenset[int]]] = collections.deque(maxlen=CHAT_TURNS)
    while True:
        try:
            question = input("? ")
        except (EOFError, KeyboardInterrupt):
            print(file=sys.stderr)
            return 0
        if not question.strip() or question.strip().lower() in {"quit", "exit"}:
            return 0
        try:
            answer = collection.ask_in_conversation(
                question,
                earlier=[q for q, _ in turns],
                quoted=frozenset(a for _, ids in turns for a in ids),
                top_k=args.top_k,
            )
        except ArticlebotError as exc:
            print(f"error: {exc}", file=sys.stderr)
            continue
        cited = {c.article_id for c in answer.citations} if not answer.abstained else set()
        turns.append((question, frozenset(cited)))
        print(render_answer(answer), end="\n\n")


def cmd_bench(args: argparse.Namespace, library: Library) -> int:
    if args.collections:
        return _bench_servers(args, library)
    if not args.passages:
        raise BadInput("Give --passages N, or --collections N with --passages-per-collection M.")
    from index.ops.bench import run_bench, run_database_bench  # the model is never loaded

    stored = library.store.collection_model(args.collection)
    dim = stored[1] if stored else library.embedder_dim()
    if args.database_url:
        result = run_database_bench(
            args.passages, args.database_url, dim=dim, queries=args.queries, seed=args.seed
        )
    else:
        result = run_bench(
            args.passages,
            dim=dim,
            queries=args.queries,
            seed=args.seed,
            data=args.data,
            kind=args.index,
        )
    if args.json:
        _print_json(result.to_json())
    else:
        print(
            f"{result.passages:,} {args.data} synthetic vectors of {dim} dimensions, "
            f"{result.index} index built in {result.build_s:.1f} s; one query: "
            f"p50 {result.p50_ms:.2f} ms, p99 {result.p99_ms:.2f} ms; recall@10 "
            f"{result.recall_at_10:.3f} against exact search; peak memory {result.rss_mb:,.0f} MB"
        )
    return 0


def _bench_servers(args: argparse.Namespace, library: Library) -> int:
    from index.ops.bench_servers import run_servers_bench

    result = run_servers_bench(
        library.embedder,
        args.collections,
        args.passages_per_collection,
        index_memory_bytes=library.index_memory_bytes,
        seed=args.seed,
    )
    if args.json:
        _print_json(result.to_json())
    else:
        print(
            f"{result.collections:,} collections of {args.passages_per_collection:,} passages: "
            f"first question p50 {result.first_ask_p50_ms:.1f} ms, p99 "
            f"{result.first_ask_p99_ms:.1f} ms; warm p50 {result.warm_ask_p50_ms:.1f} ms; "
            f"memory {result.rss_mb:,.0f} MB"
        )
    return 0


def cmd_eval(args: argparse.Namespace, library: Library) -> int:
    import index.ops.evaluate as ev

    dataset = ev.load_squad(args.file)
    if args.questions_from:
        dataset = dataset.asked_as(ev.load_squad(args.questions_from))
    if args.articles:
        start, stop = args.articles
        dataset = dataset.subset(range(len(dataset.articles))[start:stop])
    if args.leave_one_out and (args.write_batch or args.answers):
        raise BadInput(
            "--leave-one-out asks each question of all articles but its own, in this process; "
            "run it without --write-batch or --answers."
        )
    the_plan = ev.plan(
        dataset,
        abstention=args.abstention,
        leave_one_out=args.leave_one_out,
        questions=args.questions,
        seed=args.seed,
    )
    name = args.collection or ev.default_collection(args.file, args.articles, args.abstention)
    collection = library.collection(name)
    with _progress(not args.json) as progress:
        ids = ev.build(collection, the_plan.indexed, progress)
        if args.write_batch:
            with open(args.write_batch, "w", encoding="utf-8") as out:
                out.writelines(line + "\n" for line in ev.batch_lines(name, the_plan.questions))
            print(
                f"Wrote {len(the_plan.questions):,} questions for collection {name!r}.",
                file=sys.stderr,
            )
            return 0
        if args.answers:
            with _open_text(args.answers) as lines:
                answers = [ev.Scored.from_json(json.loads(x)) for x in lines if x.strip()]
        else:
            answers = ev.ask_all(
                collection, the_plan.questions, progress=progress, scopes=the_plan.scopes(ids)
            )
    report = ev.score(collection, the_plan, ids, answers, file=args.file)
    if args.json:
        _print_json(report.to_json())
    else:
        print("\n".join(f"{k}: {v}" for k, v in report.to_json().items()))
    return 0


def _span(value: str) -> tuple[int, int | None]:
    """Articles by position, as Python slices them: "0:24", "24:", or one article "5"."""
    start, colon, stop = value.partition(":")
    try:
        first = int(start or 0)
        if not colon:
            return first, first + 1
        return first, int(stop) if stop else None
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a span like 0:24 or 24:") from None


# parser


def _article_id(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if not 1 <= number < 2**63:  # SQLite's integers; a larger one is no id at all
        raise argparse.ArgumentTypeError("ids are whole numbers from 1, as `list` shows them")
    return number


def _count(value: str) -> int:
    try:
        number = int(value.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError("choose a number from 1 up")
    return number


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if not 1 <= number <= 50:
        raise argparse.ArgumentTypeError("choose a number from 1 to 50")
    return number


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-dir", type=Path, help="data folder (default: $ARTICLEBOT_DATA_DIR or ./data)"
    )
    common.add_argument(
        "--collection", default="default", help="which collection to use (default: default)"
    )
    common.add_argument("--json", action="store_true", help="print JSON instead of text")

    parser = argparse.ArgumentParser(
        prog="articlebot",
        description="Answer questions about your articles, citing the paragraph of each answer.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("add", parents=[common], help="add articles from files, URLs or stdin")
    p.add_argument(
        "inputs", nargs="+", metavar="PATH_OR_URL", help="a .txt/.md/.html/.pdf file, a URL, or -"
    )
    p.add_argument("--title", help="use this title instead of the article's own")
    p.set_defaults(func=cmd_add)

    p = sub.add_parser("ask", parents=[common], help="ask a question; get a cited answer")
    p.add_argument("question", nargs="?", help="the question, in quotes")
    p.add_argument("--top-k", type=_positive, default=5, help="passages to consider (1-50)")
    p.add_argument(
        "--batch", metavar="FILE", help='JSON lines of {"question", "collection"}, or - for stdin'
    )
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("list", parents=[common], help="list the collection's articles")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("remove", parents=[common], help="remove an article by its id")
    p.add_argument("id", type=_article_id, help="the article's id, as `list` shows it")
    p.set_defaults(func=cmd_remove)

    p = sub.add_parser("show", parents=[common], help="show a stored article and its paragraphs")
    p.add_argument("id", type=_article_id, help="the article's id, as `list` shows it")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("refresh", parents=[common], help="fetch an article's page again")
    p.add_argument("id", type=_article_id, help="the article's id, as `list` shows it")
    p.set_defaults(func=cmd_refresh)

    p = sub.add_parser("feed", help="follow news feeds whose new articles are added when polled")
    feeds = p.add_subparsers(
        dest="feed_command", metavar="FEED_COMMAND", required=True, help="add, list, remove or poll"
    )
    f = feeds.add_parser("add", parents=[common], help="follow an RSS or Atom feed")
    f.add_argument("url", metavar="URL", help="the feed's address")
    f = feeds.add_parser("list", parents=[common], help="list the feeds followed")
    f = feeds.add_parser("remove", parents=[common], help="stop following a feed")
    f.add_argument("id", type=_article_id, help="the feed's id, as `feed list` shows it")
    f = feeds.add_parser("poll", parents=[common], help="add the new articles of every feed")
    p.set_defaults(func=cmd_feed)

    p = sub.add_parser("rebuild", parents=[common], help="rebuild the search index from storage")
    p.add_argument(
        "--reembed", action="store_true", help="embed every passage again (after a model change)"
    )
    p.set_defaults(func=cmd_rebuild)

    p = sub.add_parser("stats", parents=[common], help="count articles, passages and vectors")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser(
        "migrate",
        help="copy the data folder's collections into PostgreSQL, without embedding again",
    )
    p.add_argument("--to", required=True, metavar="URL", help="postgresql://user@host/database")
    p.add_argument(
        "--data-dir", type=Path, help="data folder (default: $ARTICLEBOT_DATA_DIR or ./data)"
    )
    p.add_argument("--collection", help="only this collection (default: all of them)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=cmd_migrate)

    p = sub.add_parser(
        "feedback", help="list the Helpful / Not helpful votes members gave answers in Discord"
    )
    p.add_argument(
        "--data-dir", type=Path, help="data folder (default: $ARTICLEBOT_DATA_DIR or ./data)"
    )
    p.add_argument(
        "--collection", help="only this collection, e.g. guild-<server id> (default: all)"
    )
    p.add_argument("--not-helpful", action="store_true", help="only the answers judged unhelpful")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=cmd_feedback)

    p = sub.add_parser("chat", parents=[common], help="ask question after question")
    p.add_argument("--top-k", type=_positive, default=5, help="passages to consider (1-50)")
    p.set_defaults(func=cmd_chat)

    p = sub.add_parser(
        "bench",
        parents=[common],
        help="time the vector index on N synthetic passages, or N collections in one process",
    )
    p.add_argument("--passages", type=_count, help="how many vectors to index")
    p.add_argument(
        "--collections",
        type=_count,
        help="instead: this many collections (servers), one question asked in each",
    )
    p.add_argument(
        "--passages-per-collection",
        type=_count,
        default=50,
        help="passages in each of --collections (default: 50)",
    )
    p.add_argument("--queries", type=_count, default=2_000, help="single queries to time")
    p.add_argument(
        "--database-url",
        metavar="URL",
        help="time PostgreSQL with pgvector (postgresql://...) instead of the FAISS index",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the synthetic vectors")
    p.add_argument(
        "--data",
        choices=["clustered", "uniform"],
        default="clustered",
        help="clustered like real embeddings (default), or uniform random (the worst case)",
    )
    p.add_argument(
        "--index",
        choices=["flat", "ivf"],
        help="index kind (default: the one a collection of that size gets)",
    )
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("eval", help="measure answer quality on a SQuAD-format file")
    p.add_argument("file", metavar="FILE", help="a SQuAD v1.1 or v2.0 JSON file")
    p.add_argument(
        "--data-dir", type=Path, help="data folder (default: $ARTICLEBOT_DATA_DIR or ./data)"
    )
    p.add_argument(
        "--collection", help="collection to index into (default: eval-FILE, one per span and mode)"
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--questions", type=_count, help="ask this many questions, drawn with --seed")
    p.add_argument("--seed", type=int, default=0, help="seed of the question draw (default: 0)")
    p.add_argument(
        "--articles", type=_span, help="only these articles, by position: 0:24, 24: or 5"
    )
    p.add_argument(
        "--abstention",
        action="store_true",
        help="index the first half of the articles; ask about both halves",
    )
    p.add_argument(
        "--leave-one-out",
        action="store_true",
        help="index every article; ask each question as it is and again without its article",
    )
    p.add_argument(
        "--questions-from",
        metavar="FILE",
        help="ask each question as worded in this file (same ids, e.g. XQuAD in another language)",
    )
    p.add_argument(
        "--write-batch", metavar="OUT", help="write the questions as `ask --batch` input and stop"
    )
    p.add_argument(
        "--answers", metavar="JSONL", help="score this `ask --batch --json` output; ask nothing"
    )
    p.set_defaults(func=cmd_eval)
    return parser


def main(argv: Sequence[str] | None = None, library: Library | None = None) -> int:
    """Run one command; `library` lets a test harness reuse an open library and its model."""
    parser = build_parser()
    args = parser.parse_args(argv)
    for name in ("question", "title", "collection"):  # text, unlike paths, must be valid Unicode
        if isinstance(getattr(args, name, None), str):
            setattr(args, name, _clean(getattr(args, name)))
    try:
        if library is not None:
            return int(args.func(args, library))
        load_dotenv()
        settings = Settings.from_env()
        library = settings.library(args.data_dir)
        try:
            return int(args.func(args, library))
        finally:
            library.close()
    except ArticlebotError as exc:
        print(_clean(f"error: {exc}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`articlebot list | head`): stop quietly, as other tools do, and
        # point stdout at /dev/null so that the flush at exit does not raise again.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
