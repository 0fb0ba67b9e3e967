from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kit.corpus import RECORDINGS
from kit.materialized import Materialized

if TYPE_CHECKING:
    from playwright.sync_api import Browser

# The suite's own checks (no test over 60 s, no process left running at the end) and the
# property tests' profiles (bounded, or thorough: kit/examples.py).
pytest_plugins = ("kit.examples", "kit.budget", "kit.leftovers", "pytester")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite tests/golden from the current code instead of comparing (review the diff)",
    )


BOTH_BACKENDS = (
    "unit/transport/",
    "unit/runners/",
    "unit/remote/",
    "unit/batch/",
    "integration/transport/",
    "integration/runners/",
    "integration/remote/",
    "integration/acp/",
    "integration/test_fault_injection.py",
)
"""Where an async test runs on trio too: the library's own loops (processes and pipes, the
runners and the ACP client, the remote client, the batch), which a user may run on either
backend. Elsewhere asyncio alone: the CLI and the server run on asyncio (``anyio.run``,
uvicorn) whatever the tests do. A test names other backends with
``pytest.mark.anyio_backends(...)``, or parametrizes ``anyio_backend`` itself."""


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "anyio_backend" not in metafunc.fixturenames:
        return
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0]
        if "anyio_backend" in (
            names.replace(" ", "").split(",") if isinstance(names, str) else names
        ):
            return  # the test chose its own
    chosen = metafunc.definition.get_closest_marker("anyio_backends")
    if chosen is not None:
        backends = list(chosen.args)
    else:
        path = metafunc.definition.path.relative_to(Path(__file__).parent).as_posix()
        both = path.startswith(BOTH_BACKENDS)
        backends = ["asyncio", "trio"] if both else ["asyncio"]
    metafunc.parametrize("anyio_backend", backends, indirect=True)


@pytest.fixture
def anyio_backend(request: pytest.FixtureRequest) -> object:
    """The anyio backend of an async test, set here only (see `BOTH_BACKENDS`);
    ``trio+autojump``: trio with a `MockClock` that jumps to the next deadline at once."""
    backend = getattr(request, "param", "asyncio")
    if backend == "trio+autojump":
        from trio.testing import MockClock

        return "trio", {"clock": MockClock(autojump_threshold=0)}
    return backend


@pytest.fixture
def materialize(tmp_path: Path) -> Callable[..., Materialized]:
    """``materialize("0.61.0", "resume")``: that recording's stream-json run, made real
    (``output_format="json"`` for the json one)."""
    count = 0

    def make(version: str, case: str, output_format: str = "stream-json") -> Materialized:
        nonlocal count
        count += 1
        return Materialized(RECORDINGS / version / case / output_format, tmp_path / str(count))

    return make


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture(autouse=True, scope="session")
def _own_folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """gemwire's cache (the session listing index), its session locks and the agents' homes
    in folders of this pytest process's own (each xdist worker has its own), never the real
    ``~/.cache`` or ``~/.codex`` (subprocesses inherit them), nor shared with a parallel run."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        # The session locks' folder (`gemwire.runners.session_lock`): two runs of a session
        # named alike in the user's home (a fake CLI's "fake-session") are one session to
        # gemwire, so a parallel run of the same test would wait for this one's lock.
        patch.setenv("XDG_RUNTIME_DIR", str(tmp_path_factory.mktemp("xdg-runtime")))
        # The agents' homes, where `gemwire sessions --agent all` reads: never the real ones.
        nowhere = tmp_path_factory.mktemp("no-agent-homes")
        patch.setenv("CLAUDE_CONFIG_DIR", str(nowhere / ".claude"))
        patch.setenv("CODEX_HOME", str(nowhere / ".codex"))
        patch.setenv("QWEN_RUNTIME_DIR", str(nowhere / ".qwen"))
        patch.setenv("XDG_DATA_HOME", str(nowhere / "share"))
        yield


@pytest.fixture(scope="session")
def bubblewrap() -> None:
    """Debian's bubblewrap, for ``gemwire eval --sandbox`` (``make test`` installs it)."""
    if shutil.which("bwrap") is None:
        pytest.fail(
            "no bwrap: `apt-get install -y bubblewrap` (make test installs it: make sandbox)"
        )


@pytest.fixture(scope="module")
def chromium_browser() -> Iterator[Browser]:
    """Debian's chromium, driven by Playwright (``make test`` installs both: `make browser`).

    Playwright starts the system's ``chromium`` by path and never downloads a browser.
    Imported here, not at the top: only the browser tests need Playwright installed. Per
    module, not per session: a live sync Playwright holds an event loop that the asyncio
    tests of a later module in the same worker cannot run beside.
    """
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("no chromium: `apt-get install -y chromium` (make test installs it)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable,
            # As root (CI's containers) chromium refuses to start with its sandbox.
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield browser
        browser.close()
