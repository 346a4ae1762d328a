"""The release, read from the installed package's metadata: pyproject.toml is its one home."""

from __future__ import annotations

from importlib import metadata

__all__ = ["version"]


def version() -> str:
    """`1.1.0`, as `articlebot --version`, `/healthz` and the bot's first log line say it."""
    try:
        return metadata.version("articlebot")
    except metadata.PackageNotFoundError:  # a checkout run without installing it
        return "unknown"
