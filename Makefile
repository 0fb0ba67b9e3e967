# The two commands, on a fresh machine with Python 3.11+ and Node 20+ (npm):
#   make demo   the real Gemini CLI against the scripted model, offline
#   make test   lint, types, layering and the whole test suite (real CLIs included;
#               installs Debian's chromium for the HTML export's browser test if missing)
# Both do their own setup: a .venv with pinned tools, and the pinned Gemini CLIs
# installed by `npm ci` from the committed lockfiles in clis/ (the demo only needs the
# current one).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CLI_VERSIONS := 0.61.0 0.30.0 0.15.4
CLI_STAMPS := $(foreach v,$(CLI_VERSIONS),clis/gemini-$(v)/node_modules/.gemwire-installed)
CURRENT_CLI_STAMP := $(firstword $(CLI_STAMPS))
LINTED := src tests bench
DIST ?= dist

.PHONY: setup demo test test-fast check record bench browser dist

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

demo: $(BIN)/.gemwire-installed $(CURRENT_CLI_STAMP)
	$(BIN)/gemwire demo

check: setup $(BIN)/.gemwire-ray-installed
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy
	$(BIN)/lint-imports

test: check browser
	$(BIN)/pytest

test-fast: setup browser
	$(BIN)/pytest -m "not e2e"

# The HTML export is tested in a real headless browser: Debian's chromium (as root).
browser:
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)

# Re-record the fixture corpus from the pinned real CLIs (see tests/fixtures/README.md).
record: setup
	$(BIN)/python -m gemwire.testing record tests/fixtures/cases/*.json --out tests/fixtures/gemini

# A wheel in dist/ (gemwire is not on PyPI yet): pip install dist/gemwire-*.whl, or
# 'dist/gemwire-<version>-py3-none-any.whl[cli]' for the command line too.
dist:
	rm -rf $(DIST)
	$(PYTHON) -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir $(DIST) .

# Throughput figures recorded in BENCHMARKS.md.
bench: setup
	$(BIN)/python bench/decode_normalize.py --repeat 7
	$(BIN)/python bench/runner_overhead.py --runs 5
	$(BIN)/python bench/sessions.py --repeat 3
	$(BIN)/python bench/usage.py --repeat 3
	$(BIN)/python bench/cli_startup.py --runs 21
	$(BIN)/python bench/replay_memory.py --runs 3
