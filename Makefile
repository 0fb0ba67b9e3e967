# The two commands, on a fresh machine with Python 3.11+ and Node 20+ (npm):
#   make demo   the real Gemini CLI against the scripted model, offline
#   make test   lint, types, layering and the whole test suite (real CLIs included)
# Both do their own setup: a .venv with pinned tools, and the pinned Gemini CLIs
# installed by `npm ci` from the committed lockfiles in clis/. `make test` also installs
# the other pinned ACP agents (`make agents`, ~850 MB); `make demo` does not.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CLI_VERSIONS := 0.61.0 0.30.0 0.15.4
CLI_STAMPS := $(foreach v,$(CLI_VERSIONS),clis/gemini-$(v)/node_modules/.gemwire-installed)
AGENT_DIRS := claude-code-acp-0.16.2 codex-acp-0.16.0 qwen-code-0.24.4 opencode-1.18.33
AGENT_STAMPS := $(foreach d,$(AGENT_DIRS),clis/$(d)/node_modules/.gemwire-installed)
LINTED := src tests bench

.PHONY: setup agents demo test test-fast check record record-agents bench

setup: $(BIN)/.gemwire-installed $(CLI_STAMPS)

$(BIN)/.gemwire-installed: pyproject.toml requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt -e '.[cli]'
	touch $@

# The pinned Gemini CLIs and ACP agents (runners/agents.py names them).
clis/%/node_modules/.gemwire-installed: clis/%/package-lock.json clis/%/package.json
	cd clis/$* && npm ci --no-audit --no-fund --loglevel=error
	touch $@

agents: $(AGENT_STAMPS)

demo: setup
	$(BIN)/gemwire demo

check: setup
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy
	$(BIN)/lint-imports

test: check agents
	$(BIN)/pytest

test-fast: setup
	$(BIN)/pytest -m "not e2e"

# Re-record the fixture corpus from the pinned real CLIs (see tests/fixtures/README.md).
record: setup
	$(BIN)/python -m gemwire.testing record tests/fixtures/cases/*.json --out tests/fixtures/gemini

# Re-record the agents' golden events (tests/fixtures/acp/), one agent after another.
record-agents: setup agents
	GEMWIRE_RECORD=1 $(BIN)/pytest tests/e2e/agents

# Throughput figures recorded in BENCHMARKS.md.
bench: setup
	$(BIN)/python bench/decode_normalize.py --repeat 7
	$(BIN)/python bench/runner_overhead.py --runs 5
	$(BIN)/python bench/sessions.py --repeat 3
	$(BIN)/python bench/cli_startup.py --runs 21
