"""`python -m bot.healthcheck`: exit 0 when the running bot's /healthz answers 200, else 1.

What a container's HEALTHCHECK (or any supervisor) runs beside the bot: it reads the address the
bot serves /healthz on from the same setting (ARTICLEBOT_METRICS_ADDRESS), asking a bot that
listens on every address (0.0.0.0, ::) on loopback, and prints /healthz's answer, which names
what is wrong when the bot is unhealthy.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request

from index.errors import ArticlebotError

from .config import metrics_address

TIMEOUT_S = 4.0
ANY_ADDRESS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}


def main() -> int:
    try:
        address = metrics_address(os.environ.get("ARTICLEBOT_METRICS_ADDRESS") or None)
    except ArticlebotError as error:
        print(error, file=sys.stderr)
        return 1
    if address is None:
        print("ARTICLEBOT_METRICS_ADDRESS is not set, so the bot serves no /healthz to ask.")
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
