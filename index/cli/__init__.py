"""The `articlebot` command line: parses arguments, calls the core, prints its results."""

from __future__ import annotations

from index.cli.add import render_added
from index.cli.app import build_parser, main
from index.cli.output import render_answer

__all__ = ["build_parser", "main", "render_added", "render_answer"]
