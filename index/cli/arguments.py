"""What the sub-parsers share: the common options and the types of their arguments."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TypeAlias

# What `build_parser` hands each command module to add its sub-parser to.
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def common_options() -> argparse.ArgumentParser:
    """--data-dir, --collection and --json, the parent of most sub-parsers."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-dir", type=Path, help="data folder (default: $ARTICLEBOT_DATA_DIR or ./data)"
    )
    common.add_argument(
        "--collection", default="default", help="which collection to use (default: default)"
    )
    common.add_argument("--json", action="store_true", help="print JSON instead of text")
    return common


def article_id(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if not 1 <= number < 2**63:  # SQLite's integers; a larger one is no id at all
        raise argparse.ArgumentTypeError("ids are whole numbers from 1, as `list` shows them")
    return number


def count(value: str) -> int:
    try:
        number = int(value.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError("choose a number from 1 up")
    return number


def positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if not 1 <= number <= 50:
        raise argparse.ArgumentTypeError("choose a number from 1 to 50")
    return number
