# The two commands, on a fresh machine with Python 3.11+ and Node 20+ (npm):
#   make demo   the real Gemini CLI against the scripted model, offline
#   make test   lint, types, layering and the whole test suite (real CLIs included)
# Both do their own setup (README.md lists it, with sizes): a .venv with pinned tools, and
# the pinned Gemini CLIs installed by `npm ci` from the committed lockfiles in clis/ (the
# demo only needs the current one). `make test` also installs the other pinned ACP agents
# (`make agents`, ~1.9 GB in clis/), Ray (requirements-ray.txt, in .venv), google-antigravity
# (requirements-antigravity.txt, in .venv, ~130 MB: Antigravity's harness) and, system-wide
# with apt-get, Debian's chromium for the browser tests if none is on PATH (Playwright drives it),
# and Debian's bubblewrap for the tests of `gemwire eval --sandbox` (`make sandbox`).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CLI_VERSIONS := 0.61.0 0.30.0 0.15.4
CLI_STAMPS := $(foreach v,$(CLI_VERSIONS),clis/gemini-$(v)/node_modules/.gemwire-installed)
CURRENT_CLI_STAMP := $(firstword $(CLI_STAMPS))
AGENT_DIRS := claude-agent-acp-0.101.0 codex-acp-2.6.0 claude-code-acp-0.16.2 codex-acp-0.16.0 \
	qwen-code-0.24.4 opencode-1.18.33 acp-sdk-ts-2.4.0
AGENT_STAMPS := $(foreach d,$(AGENT_DIRS),clis/$(d)/node_modules/.gemwire-installed)
LINTED := src tests bench
# The tests the portable CI workflow runs on Windows, type-checked as Windows sees them.
# The rest use POSIX on purpose (FIFOs, ptys, SIGKILL, /proc, uids) and never run there;
# tests/unit/test_ci_workflow.py keeps this list and the workflow's the same.
WINDOWS_TESTS := tests/unit/wire tests/unit/protocol tests/unit/normalize \
	tests/integration/transport/test_tree_contract.py tests/integration/transport/test_watchdog.py \
	tests/integration/test_windows_imports.py tests/unit/runners/test_discovery_platforms.py \
	tests/unit/sessions/test_home_windows.py tests/unit/testing/test_pinned.py \
	tests/unit/runners/test_acp_files.py tests/unit/transport/test_stdin_gone.py \
	tests/unit/runners/test_session_lock.py tests/unit/transport/test_shell.py \
	tests/unit/test_split_command.py tests/unit/runners/test_agent_command_text.py \
	tests/unit/cli/test_outputs.py tests/unit/cli/test_exit_codes.py \
	tests/unit/cli/test_ctrl_c.py tests/unit/batch/test_tasks_and_output.py
DIST ?= dist

.PHONY: setup agents demo test test-thorough test-fast check record record-agents try-agent bench browser sandbox dist

setup: $(BIN)/.gemwire-installed $(CLI_STAMPS)

# Ray only for the tests that need it (`make demo` never installs it).
$(BIN)/.gemwire-ray-installed: requirements-ray.txt $(BIN)/.gemwire-installed
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-ray.txt
	touch $@

# google-antigravity (the `antigravity` extra) likewise: tests only, never `make demo`.
$(BIN)/.gemwire-antigravity-installed: requirements-antigravity.txt $(BIN)/.gemwire-installed
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-antigravity.txt
	touch $@

$(BIN)/.gemwire-installed: pyproject.toml requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt -e '.[cli,serve,remote]'
	touch $@

# The pinned Gemini CLIs and ACP agents (runners/agents.py names them).
# npm ci refuses a lockfile that lacks optional packages this registry does not have (Qwen
# Code's clipboard binaries for other platforms), in ~110 lines of EUSAGE; npm install
# --no-save installs the same locked versions and leaves the lockfile as it is. So npm ci
# speaks only when npm install fails too (then its own errors say why).
clis/%/node_modules/.gemwire-installed: clis/%/package-lock.json clis/%/package.json
	cd clis/$* && (npm ci --no-audit --no-fund --loglevel=error >npm-ci.log 2>&1 \
		|| npm install --no-save --no-audit --no-fund --loglevel=error \
		|| (cat npm-ci.log; rm -f npm-ci.log; exit 1)) && rm -f npm-ci.log
	touch $@

agents: $(AGENT_STAMPS) .venv-acp-rc3/.gemwire-installed

# The ACP Python SDK 1.0 rc beside .venv's 0.12 (the transport interop tests), a venv of its own.
.venv-acp-rc3/.gemwire-installed: requirements-acp-rc3.txt
	$(PYTHON) -m venv .venv-acp-rc3
	.venv-acp-rc3/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-acp-rc3.txt
	touch $@

demo: $(BIN)/.gemwire-installed $(CURRENT_CLI_STAMP)
	$(BIN)/gemwire demo

check: setup $(BIN)/.gemwire-ray-installed $(BIN)/.gemwire-antigravity-installed $(BIN)/.gemwire-browser-installed
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy
	$(BIN)/mypy --platform win32 src $(WINDOWS_TESTS)
	$(BIN)/mypy --platform darwin
	$(BIN)/lint-imports

# Three pytest-xdist workers on the budget's two cores (with two, a fifth of the CPU idled
# while tests waited on agents and models), one test file each at a time (a file's shared
# agents and servers stay in one worker), in collection order: the slow e2e files first, the
# many quick unit files last to even out the end (xdist's default hands out the files with
# the most tests first, which leaves the few-test, slow e2e files for the end); `-n 0` runs
# serially, for debugging (CONTRIBUTING.md).
PYTEST_WORKERS := -n 3 --dist loadfile --no-loadscope-reorder

# The tests start hundreds of Python processes (gemwire's CLI, servers, stand-in agents): each
# imports gemwire, which from source costs about 0.45 CPU-s more than from bytecode. So the
# bytecode is written first, once, and the run may write more (where the environment sets
# PYTHONDONTWRITEBYTECODE, as some sandboxes and CI images do, nothing was ever cached, and
# pytest rewrote every test module's asserts again in each worker).
test: check browser sandbox agents
	$(BIN)/python -m compileall -q -j 0 src tests bench
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest $(PYTEST_WORKERS) --durations=25

# Nightly-style: every property test with its own count of examples (make test runs at most
# 100 each; tests/kit/examples.py), and no per-test time limit.
test-thorough: check browser sandbox agents
	$(BIN)/python -m compileall -q -j 0 src tests bench
	GEMWIRE_HYPOTHESIS=thorough PYTHONDONTWRITEBYTECODE= $(BIN)/pytest $(PYTEST_WORKERS) --durations=25

test-fast: setup browser sandbox
	$(BIN)/pytest -m "not e2e"

# The HTML export and the web page are tested in a real headless browser: Debian's chromium
# (installed as root when missing), driven by Playwright (requirements-browser.txt, in .venv).
browser: $(BIN)/.gemwire-browser-installed
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)

# `gemwire eval --sandbox` runs each attempt in bubblewrap: Debian's, installed as root when
# missing (tests/integration/test_eval_sandbox.py).
sandbox:
	@command -v bwrap >/dev/null || (apt-get update -qq && apt-get install -y -qq bubblewrap)

$(BIN)/.gemwire-browser-installed: requirements-browser.txt $(BIN)/.gemwire-installed
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-browser.txt
	touch $@

# Re-record the fixture corpus from the pinned real CLIs (see tests/fixtures/README.md).
record: setup
	$(BIN)/python -m gemwire.testing record tests/fixtures/cases/*.json --out tests/fixtures/gemini

# Re-record the agents' golden events (tests/fixtures/acp/), one agent after another.
record-agents: setup agents $(BIN)/.gemwire-antigravity-installed
	GEMWIRE_RECORD=1 $(BIN)/pytest tests/e2e/agents
	GEMWIRE_RECORD=1 $(BIN)/pytest tests/e2e/test_eval_web_record.py

# Try a newer release of a built-in agent beside the pinned one (installed into clis/try/,
# nothing else changes), offline, and report what changed: make try-agent AGENT=claude
# VERSION=0.102.0 (tests/e2e/agents/try_release.py; REPORT=file.json keeps the report).
try-agent: setup agents
	$(BIN)/python tests/e2e/agents/try_release.py $(AGENT) $(VERSION) $(if $(REPORT),--json $(REPORT))

# A wheel in dist/ (gemwire is not on PyPI yet): pip install dist/gemwire-*.whl, or
# 'dist/gemwire-<version>-py3-none-any.whl[cli]' for the command line too.
dist:
	rm -rf $(DIST)
	$(PYTHON) -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir $(DIST) .

# Throughput figures recorded in BENCHMARKS.md.
bench: setup browser
	$(BIN)/python bench/decode_normalize.py --repeat 7
	$(BIN)/python bench/replay_process.py --runs 7
	$(BIN)/python bench/runner_overhead.py --runs 5
	$(BIN)/python bench/sessions.py --repeat 3
	$(BIN)/python bench/usage.py --repeat 3
	$(BIN)/python bench/cli_startup.py --runs 21
	$(BIN)/python bench/replay_memory.py --runs 3
	$(BIN)/python bench/batch.py --tasks 100 --big 1000 --ray 200
	$(BIN)/python bench/web_render.py --events 5000 --rate 1000 --seconds 5 --repeat 3
	$(BIN)/python bench/web_sessions.py --sessions 10000 --repeat 5
