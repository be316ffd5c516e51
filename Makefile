# The two entry points of the README. Each installs what it needs into .venv/ and .cache/
# (both git-ignored): the Python package and its test tools, the npm sample server, and the
# warmed Go module cache (in the user cache, see gocode/compile/modcache.py).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
NPM_PREFIX := .cache/npm
# Sample servers from npm for the tests, pinned (the same release train for all four), and
# the MCP Inspector CLI that the serve tests drive gocode with.
NPM_SERVERS := @modelcontextprotocol/server-everything@2026.8.31 \
	@modelcontextprotocol/server-memory@2026.8.31 \
	@modelcontextprotocol/server-filesystem@2026.8.31 \
	@modelcontextprotocol/server-sequential-thinking@2026.8.31 \
	@modelcontextprotocol/inspector-cli@1.0.3
NPM_STAMP := $(NPM_PREFIX)/.installed
# The MCP conformance suite and what it runs on, pinned: Node 22 from npm's `node` package (the
# suite needs Node >= 22), and the dependencies of its reference server
# (tests/conformance/everything-server.ts, from the suite's repository at the same tag).
CONFORMANCE_PREFIX := .cache/conformance
CONFORMANCE_PACKAGES := node@22.23.3 @modelcontextprotocol/conformance@0.1.16 tsx@4.21.0 \
	@modelcontextprotocol/sdk@1.32.2 express@5.2.1 cors@2.8.5 zod@4.3.6
CONFORMANCE_STAMP := $(CONFORMANCE_PREFIX)/.installed

.PHONY: demo test test-fast test-go conformance lint setup smoke bench bench-load bench-soak bench-tokens bench-play bench-ask bench-cli bench-step haproxy clean

# Two installs into one virtualenv: gocode and its own dependencies (all `make demo` needs; pip
# shows each download as it goes), and the test tools on top (`make test`, `make lint`, …).
DEMO_STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	@echo "installing gocode and its Python dependencies into $(VENV)/ (once) …"
	$(BIN)/pip install --progress-bar on -e .
	touch $@

$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@ $(DEMO_STAMP)

$(NPM_STAMP): Makefile
	mkdir -p $(NPM_PREFIX)
	npm install --silent --no-audit --no-fund --prefix $(NPM_PREFIX) $(NPM_SERVERS)
	# inspector-cli 1.0.3 loads ../package.json next to its own directory (inspector #1334,
	# closed unfixed as "v1 deprecated"); without this copy it fails from most directories.
	cp $(NPM_PREFIX)/node_modules/@modelcontextprotocol/inspector-cli/package.json \
		$(NPM_PREFIX)/node_modules/@modelcontextprotocol/package.json
	touch $@

$(CONFORMANCE_STAMP): Makefile
	mkdir -p $(CONFORMANCE_PREFIX)
	npm install --silent --no-audit --no-fund --prefix $(CONFORMANCE_PREFIX) $(CONFORMANCE_PACKAGES)
	touch $@

# HAProxy from the distribution, for the replica tests and bench-load (CI runs as root on Debian).
haproxy:
	command -v haproxy >/dev/null || (apt-get update -qq && apt-get install -y haproxy)

setup: $(TEST_STAMP) $(NPM_STAMP) $(CONFORMANCE_STAMP) haproxy
	$(BIN)/gocode warmup

demo: $(DEMO_STAMP)
	$(BIN)/gocode demo

lint: $(TEST_STAMP)
	$(BIN)/ruff check gocode tests examples bench deploy
	$(BIN)/ruff format --check gocode tests examples bench deploy
	$(BIN)/mypy

test: setup lint
	$(BIN)/pytest -q -p no:cacheprovider
	$(BIN)/gocode smoke -c smoke/gocode.yaml --scripts smoke/scripts --junit .cache/smoke-junit.xml

# Unit, golden and property tests only (marked `fast`: no Go builds, no servers); `make test`
# runs them too, with everything else. Only the files that hold a fast test are collected:
# importing the others (framework integrations, servers) cost most of the lane's time. The
# random-schema property test runs 60 examples here (300 in `make test`).
FAST_FILES = $(shell grep -l 'mark\.fast' tests/test_*.py)
test-fast: $(TEST_STAMP) lint
	$(BIN)/pytest -q -p no:cacheprovider -m fast --hypothesis-profile=fast $(FAST_FILES)

# The Go sources' unit tests (go_templates/*/..._test.go) alone; `make test` runs them too, in pytest.
test-go: setup
	$(BIN)/pytest -q -p no:cacheprovider tests/test_go_unit.py

# The MCP conformance suite against gocode serve (passthrough and code mode) and its clients
# (gocode call, exec, exec --direct); expected failures: tests/conformance/expected-failures.yaml.
# `make test` runs it too, in pytest (about a minute).
conformance: setup
	$(BIN)/pytest -q -p no:cacheprovider tests/test_conformance.py

bench: setup
	$(BIN)/python bench/run.py

bench-load: setup
	$(BIN)/python bench/load.py

bench-soak: setup
	$(BIN)/python bench/soak.py

bench-tokens: setup
	$(BIN)/python bench/tokens.py
bench-play: setup
	$(BIN)/python bench/play.py
bench-ask: setup
	$(BIN)/python bench/ask_tokens.py --more
# How fast the command line answers: --help, list/search/describe from kept listings, a one-off exec.
bench-cli: setup
	$(BIN)/python bench/cli.py
# The step protocol: passes, continuation bytes and seconds of 10 sequential client calls; batching.
bench-step: setup
	$(BIN)/python bench/step.py

smoke: setup
	$(BIN)/gocode smoke -c smoke/gocode.yaml --scripts smoke/scripts --junit .cache/smoke-junit.xml

clean:
	rm -rf $(VENV) .cache
