"""`articlebot bench`: time the vector index, or many collections in one process."""

from __future__ import annotations

import argparse

from index.cli.arguments import Subcommands, count
from index.cli.output import print_json
from index.errors import BadInput
from index.library import Library


def cmd_bench(args: argparse.Namespace, library: Library) -> int:
    if args.collections:
        return _bench_servers(args, library)
    if not args.passages:
        raise BadInput("Give --passages N, or --collections N with --passages-per-collection M.")
    from index.ops.index_bench import run_bench, run_database_bench  # the model is never loaded

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
        print_json(result.to_json())
    else:
        print(
            f"{result.passages:,} {args.data} synthetic vectors of {dim} dimensions, "
            f"{result.index} index built in {result.build_s:.1f} s; one query: "
            f"p50 {result.p50_ms:.2f} ms, p99 {result.p99_ms:.2f} ms; recall@10 "
            f"{result.recall_at_10:.3f} against exact search; peak memory {result.rss_mb:,.0f} MB"
        )
    return 0


def _bench_servers(args: argparse.Namespace, library: Library) -> int:
    from index.ops.servers_bench import run_servers_bench

    result = run_servers_bench(
        library.embedder,
        args.collections,
        args.passages_per_collection,
        index_memory_bytes=library.index_memory_bytes,
        seed=args.seed,
    )
    if args.json:
        print_json(result.to_json())
    else:
        print(
            f"{result.collections:,} collections of {args.passages_per_collection:,} passages: "
            f"first question p50 {result.first_ask_p50_ms:.1f} ms, p99 "
            f"{result.first_ask_p99_ms:.1f} ms; warm p50 {result.warm_ask_p50_ms:.1f} ms; "
            f"memory {result.rss_mb:,.0f} MB"
        )
    return 0


def register(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "bench",
        parents=[common],
        help="time the vector index on N synthetic passages, or N collections in one process",
    )
    p.add_argument("--passages", type=count, help="how many vectors to index")
    p.add_argument(
        "--collections",
        type=count,
        help="instead: this many collections (servers), one question asked in each",
    )
    p.add_argument(
        "--passages-per-collection",
        type=count,
        default=50,
        help="passages in each of --collections (default: 50)",
    )
    p.add_argument("--queries", type=count, default=2_000, help="single queries to time")
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
