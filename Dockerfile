# articlebot: the Discord bot (the default command) and the `articlebot` command line.
#
#   docker build -t articlebot .
#   docker run -d --env-file .env -v articlebot-data:/data articlebot
#   docker run --rm -i -v articlebot-data:/data articlebot articlebot add - < article.txt
#   docker run --rm -v articlebot-data:/data articlebot articlebot ask "QUESTION"
#
# Debian's own Python (3.11 in bookworm) in a virtual environment; torch's CPU build from
# PyTorch's CPU wheel index (PyPI's torch is the CUDA build, gigabytes of nvidia packages the bot
# never uses); the model exported while the image is built, so a new container answers its
# first question without exporting. Every package pip installs is pinned by constraints.txt (the
# versions this release was tested with), so the image of a release can be built again.
# Debian 12 by its tag: its Python (3.11) is the one constraints.txt was written for.
FROM debian:bookworm-slim

# A build behind a TLS proxy, or from a local wheel folder (offline): hand pip its settings.
# Each is read by pip from the environment of the RUN lines below only; none stays in the image.
ARG PIP_CERT
ARG PIP_FIND_LINKS
ARG PIP_CONSTRAINT
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu

RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        python3 python3-venv ca-certificates tini \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --home-dir /data --no-create-home articlebot \
    && mkdir -p /data && chown articlebot:articlebot /data && chmod 700 /data

ENV PATH=/opt/articlebot/venv/bin:$PATH \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1

# torch first, alone, so that a change to the project's code reuses this layer. As an extra
# index, so pip prefers the `+cpu` wheel; where that index cannot be reached, pip's own
# configuration (PIP_FIND_LINKS) still serves it. Its tests, test programs and C++ headers
# (190 MB) go.
COPY constraints.txt /opt/articlebot/
RUN python3 -m venv /opt/articlebot/venv \
    && pip install --no-compile --retries 1 --extra-index-url "$TORCH_INDEX" \
        -c /opt/articlebot/constraints.txt torch==2.13.0 \
    && site=/opt/articlebot/venv/lib/python3.11/site-packages \
    && rm -rf "$site/torch/test" "$site/torch/include" "$site"/torch/bin/test_* \
        "$site"/torch/bin/*StoreTest "$site"/torch/bin/protoc* \
    && if pip list 2>/dev/null | grep -qi '^nvidia-'; then \
        echo "torch's CUDA build was installed: let pip reach $TORCH_INDEX, or pass a folder" \
             "holding a torch +cpu wheel as PIP_FIND_LINKS." >&2; exit 1; fi

COPY pyproject.toml README.md LICENSE /opt/articlebot/src/
COPY index /opt/articlebot/src/index
COPY bot /opt/articlebot/src/bot
# Test suites and C headers of the installed packages are left out (nothing imports them).
RUN pip install --no-compile -c /opt/articlebot/constraints.txt /opt/articlebot/src \
    && rm -rf /opt/articlebot/src \
    && find /opt/articlebot/venv/lib/python3.11/site-packages \
        \( -path '*/scipy/*/tests' -o -path '*/sympy/*/tests' -o -path '*/sklearn/*/tests' \
           -o -path '*/numpy/*/tests' -o -path '*/pandas/tests' \) -type d -prune -exec rm -rf {} +

# The model's int8 export, made once here into a cache the bot's user can read but not change;
# answering the bundled demo article on the way checks the image, and leaves compiled bytecode
# of exactly the modules a question imports (the user cannot write any into /opt).
ENV ARTICLEBOT_MODEL_CACHE=/opt/articlebot/models
RUN demo="$(python3 -c 'import index, pathlib; print(pathlib.Path(index.__file__).parent / "demo" / "tool-library.md")')" \
    && articlebot add "$demo" --data-dir /tmp/warm-up \
    && articlebot ask "How much did the council approve for the renovation?" --data-dir /tmp/warm-up \
    && python3 -c "import bot.__main__" \
    && python3 -m compileall -q /opt/articlebot/venv/lib/python3.11/site-packages/index \
        /opt/articlebot/venv/lib/python3.11/site-packages/bot \
    && rm -rf /tmp/warm-up

ENV ARTICLEBOT_DATA_DIR=/data \
    ARTICLEBOT_METRICS_ADDRESS=127.0.0.1:8080
VOLUME /data
WORKDIR /opt/articlebot
USER articlebot

# /healthz answers 200 while the bot is connected to Discord, its store answers and the model
# is loaded; the first start may take a minute (the gateway, the model's first load).
# `python -m bot.healthcheck` asks the address ARTICLEBOT_METRICS_ADDRESS names.
HEALTHCHECK --interval=30s --timeout=5s --start-period=90s --retries=3 \
    CMD ["python3", "-m", "bot.healthcheck"]

# The bot stops cleanly on SIGTERM (it closes its Discord connection and the store); tini
# passes signals on and reaps children, so the command line stops on `docker stop` too.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["articlebot-discord"]

# What `docker image inspect` tells of the image. VERSION is pyproject.toml's version (a test
# holds them equal; the image's `articlebot --version` says it too); SOURCE is where the
# release's source is published, given by whoever builds it for others (--build-arg SOURCE=URL).
# Last, so that a new release's labels reuse every layer above.
ARG VERSION=1.1.0
ARG SOURCE=
LABEL org.opencontainers.image.title="articlebot" \
      org.opencontainers.image.version="$VERSION" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.source="$SOURCE"
