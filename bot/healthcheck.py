"""`python -m bot.healthcheck`: exit 0 when the running bot's /healthz answers 200, else 1.

What a container's HEALTHCHECK (or any supervisor) runs beside the bot, every 30 s: it reads the
address the bot serves /healthz on from the setting the bot reads (ARTICLEBOT_METRICS_ADDRESS,
from the environment, else from `.env` in the working folder, as the bot reads it), asks a bot
that listens on every address (0.0.0.0, ::) on loopback, and prints /healthz's answer, which
names what is wrong when the bot is unhealthy.

The standard library only, and nothing from `index` (whose package imports the store, FAISS
and the embedder): a check that imported the bot would take seconds and a hundred MB each time.
So the address's syntax and the `.env` reading live here, and bot/config.py takes the parser
from this module rather than keep a second copy.
"""

from __future__ import annotations

import codecs
import os
import re
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

__all__ = ["main", "parse_address", "read_dotenv", "setting"]

KEY = "ARTICLEBOT_METRICS_ADDRESS"
TIMEOUT_S = 4.0
ANY_ADDRESS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}


def parse_address(raw: str | None) -> tuple[str, int] | None:
    """`host:port` (`[::1]:port` for IPv6) where /healthz and /metrics are served; None when
    unset or empty. ValueError, with the sentence to show, when it does not parse."""
    if not raw or not raw.strip():
        return None
    raw = raw.strip()
    host, _, port = raw.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 1 <= int(port) <= 65_535:
        raise ValueError(f"{KEY} must be host:port, such as 127.0.0.1:9464, not {raw[:60]!r}.")
    return host, int(port)


# `.env` as python-dotenv reads it (index/settings.py's load_dotenv): `export ` allowed, a key
# bare or in single quotes, a value bare (cut at ` #`), in single quotes (\\ and \' escaped) or
# in double quotes (C escapes, several lines), then ${NAME} and ${NAME:-default} filled in from
# the environment, which wins, and the lines above. A line that does not parse is skipped.
_SPACE = re.compile(r"\s*")
_BLANK = re.compile(r"[^\S\r\n]*")
_EXPORT = re.compile(r"(?:export[^\S\r\n]+)?")
_QUOTED_KEY = re.compile(r"'([^']+)'")
_KEY = re.compile(r"([^=#\s]+)")
_SINGLE = re.compile(r"'((?:\\.|[^'\\])*)'", re.DOTALL)
_DOUBLE = re.compile(r'"((?:\\.|[^"\\])*)"', re.DOTALL)
_BARE = re.compile(r"[^\r\n]*")
_END = re.compile(r"[^\S\r\n]*(?:#[^\r\n]*)?[^\S\r\n]*(?:\r\n|\n|\r|$)")
_REST = re.compile(r"[^\r\n]*(?:\r\n|\n|\r)?")
_VARIABLE = re.compile(r"\$\{(?P<name>[^}:]*)(?::-(?P<default>[^}]*))?\}")


def _past(pattern: re.Pattern[str], text: str, at: int) -> int:
    """Where `pattern`, which may match nothing, ends when matched at `at`."""
    found = pattern.match(text, at)
    return found.end() if found else at


def _unescape(pattern: str, text: str) -> str:
    return re.sub(pattern, lambda m: codecs.decode(m.group(0), "unicode-escape"), text)


class _Unparsed(Exception):
    """A line that does not parse, from where it stopped parsing: skipped to its end."""

    def __init__(self, at: int) -> None:
        self.at = at


def _value(text: str, at: int) -> tuple[str, int]:
    """The value that starts at `at`, and where it ends."""
    if text.startswith(("'", '"'), at):
        single = text[at] == "'"
        quoted = (_SINGLE if single else _DOUBLE).match(text, at)
        if quoted is None:
            raise _Unparsed(at)
        escapes = r"\\[\\']" if single else r"\\[\\'\"abfnrtv]"
        return _unescape(escapes, quoted.group(1)), quoted.end()
    end = _past(_BARE, text, at)
    return re.sub(r"\s+#.*", "", text[at:end]).rstrip(), end


def _binding(text: str, at: int) -> tuple[str | None, str | None, int]:
    """The key and value of the line at `at` (None, None for a comment; a value of None for a
    key with no `=`), and where the line ends."""
    at = _past(_EXPORT, text, at)
    if text.startswith("#", at):
        return None, None, _past(_REST, text, at)
    key = (_QUOTED_KEY if text.startswith("'", at) else _KEY).match(text, at)
    if key is None:
        raise _Unparsed(at)
    value: str | None = None
    at = _past(_BLANK, text, key.end())
    if text.startswith("=", at):
        value, at = _value(text, _past(_BLANK, text, at + 1))
    end = _END.match(text, at)
    if end is None:
        raise _Unparsed(at)
    return key.group(1), value, end.end()


def read_dotenv(path: Path, env: Mapping[str, str]) -> dict[str, str | None]:
    """Every setting of the `.env` file at `path` (none when there is no such file)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return {}
    found: dict[str, str | None] = {}
    at = 0
    while (at := _past(_SPACE, text, at)) < len(text):
        try:
            name, value, at = _binding(text, at)
        except _Unparsed as stopped:
            at = _past(_REST, text, stopped.at)
            continue
        if name is not None:
            known = {**found, **env}

            def fill(m: re.Match[str], known: Mapping[str, str | None] = known) -> str:
                return known.get(m["name"], m["default"] or "") or ""

            found[name] = None if value is None else _VARIABLE.sub(fill, value)
    return found


def setting(key: str, env: Mapping[str, str] | None = None, folder: Path | None = None) -> str:
    """`key` as the bot reads it: the environment's value when it is there (even empty), else
    that of `.env` in `folder` (the working folder), else empty."""
    env = os.environ if env is None else env
    if key in env:
        return env[key]
    return read_dotenv((folder or Path.cwd()) / ".env", env).get(key) or ""


def main() -> int:
    try:
        address = parse_address(setting(KEY))
    except ValueError as error:
        print(error, file=sys.stderr)
        return 1
    if address is None:
        print(f"{KEY} is not set, so the bot serves no /healthz to ask.")
        return 1
    host, port = address
    host = ANY_ADDRESS.get(host, host)
    url = f"http://[{host}]:{port}/healthz" if ":" in host else f"http://{host}:{port}/healthz"
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as answer:  # noqa: S310 (a setting)
            print(answer.read(4_096).decode("utf-8", "replace").strip())
            return 0
    except urllib.error.HTTPError as error:  # 503: the reasons, one a line
        print(error.read(4_096).decode("utf-8", "replace").strip())
        return 1
    except (urllib.error.URLError, OSError) as error:
        print(f"The bot does not answer on {url} ({getattr(error, 'reason', error)}).")
        return 1


if __name__ == "__main__":
    sys.exit(main())
