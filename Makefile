# The two commands, on a fresh machine with Python 3.11+ and Node 20+ (npm):
#   make demo   the real Gemini CLI against the scripted model, offline
#   make test   lint, types, layering and the whole test suite (real CLIs included)
# Both do their own setup: a .venv with pinned tools, and the pinned Gemini CLIs
# installed by `npm ci` from the committed lockfiles in clis/.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CLI_VERSIONS := 0.61.0 0.30.0 0.15.4
CLI_STAMPS := $(foreach v,$(CLI_VERSIONS),clis/gemini-$(v)/node_modules/.gemwire-installed)
LINTED := src tests bench

.PHONY: setup demo test test-fast check record bench

setup: $(BIN)/.gemwire-installed $(CLI_STAMPS)

# Ray only for the tests that need it (`make demo` never installs it).
$(BIN)/.gemwire-ray-installed: requirements-ray.txt $(BIN)/.gemwire-installed
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-ray.txt
	touch $@

$(BIN)/.gemwire-installed: pyproject.toml requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt -e '.[cli]'
	touch $@

clis/gemini-%/node_modules/.gemwire-installed: clis/gemini-%/package-lock.json clis/gemini-%/package.json
	cd clis/gemini-$* && npm ci --no-audit --no-fund --loglevel=error
	touch $@

demo: setup
	$(BIN)/gemwire demo

check: setup $(BIN)/.gemwire-ray-installed
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy
	$(BIN)/lint-imports

test: check
	$(BIN)/pytest

test-fast: setup
	$(BIN)/pytest -m "not e2e"

# Re-record the fixture corpus from the pinned real CLIs (see tests/fixtures/README.md).
record: setup
	$(BIN)/python -m gemwire.testing record tests/fixtures/cases/*.json --out tests/fixtures/gemini

# Throughput figures recorded in BENCHMARKS.md.
bench: setup
	$(BIN)/python bench/decode_normalize.py --repeat 7
	$(BIN)/python bench/runner_overhead.py --runs 5
	$(BIN)/python bench/sessions.py --repeat 3
	$(BIN)/python bench/cli_startup.py --runs 21
	$(BIN)/python bench/replay_memory.py --runs 3
