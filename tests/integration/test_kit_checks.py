"""The suite's own checks fail a run as they promise (tests/kit/budget.py, leftovers.py):
each runs a small suite in a pytest of its own, with the plugin loaded as tests/conftest.py
loads it."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).parents[1]


@pytest.fixture(autouse=True)
def _kit_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The small suite imports the kit as tests/conftest.py does."""
    monkeypatch.setenv("PYTHONPATH", str(TESTS))


def run(
    pytester: pytest.Pytester, plugin: str, conftest: str, test: str, *args: str
) -> pytest.RunResult:
    pytester.makeconftest(conftest)
    pytester.makepyfile(test_it=test)
    return pytester.runpytest_subprocess(
        "-p", plugin, "-p", "no:randomly", "-p", "no:cacheprovider", *args
    )


SERIAL_AND_XDIST = pytest.mark.parametrize(
    "workers", [(), ("-n", "2")], ids=["serial", "two xdist workers"]
)
"""Each check holds in a plain run and under xdist (``make test`` runs three workers; two
prove the same), where each worker checks its own tests and the controller fails the run."""


@SERIAL_AND_XDIST
def test_a_test_over_the_limit_fails_counting_its_own_fixtures(
    pytester: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    result = run(
        pytester,
        "kit.budget",
        """
import time, pytest, kit.budget
kit.budget.LIMIT = 0.5
kit.budget.load = lambda: 0.0  # the machine's load is another test's

@pytest.fixture(scope="module")
def shared():
    time.sleep(0.6)  # paid once for the file: not counted

@pytest.fixture
def own():
    time.sleep(0.3)
""",
        """
import time
def test_shared_setup_is_not_counted(shared): pass
def test_call_and_own_fixture_are(shared, own): time.sleep(0.3)
def test_quick(own): pass
""",
        *workers,
    )
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_call_and_own_fixture_are _*",
            "passed, but took 0.* s *over the 0.5 s one test may take (load 0.0 a core)*",
        ]
    )


@SERIAL_AND_XDIST
def test_a_process_left_running_fails_the_run_and_is_killed(
    pytester: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    pids = pytester.path / "pids"
    result = run(
        pytester,
        "kit.leftovers",
        "import kit.leftovers\nkit.leftovers.SETTLE = 0.5\n",
        f"""
import subprocess
def test_detaches_a_stubborn_sleeper():
    # Its parent exits at once: the sleeper is an orphan in a session of its own.
    subprocess.run(["sh", "-c", "setsid sh -c 'trap \\"\\" TERM; echo $$ > {pids}; exec sleep 300' &"], check=True)
def test_leaves_nothing():
    pass
""",
        *workers,
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=2)
    pid = pids.read_text().strip()
    # That one alone (under xdist, neither worker is counted as left by the controller).
    result.stdout.fnmatch_lines(
        ["*processes left behind*", "1 process(es) the run started *", f"  {pid}  sleep 300*"]
    )


def test_a_run_that_leaves_nothing_passes(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        "kit.leftovers",
        "",
        """
import subprocess
def test_waits_for_its_child():
    subprocess.run(["sleep", "0"], check=True)
""",
    )
    assert result.ret == pytest.ExitCode.OK
    assert "left behind" not in result.stdout.str()


@pytest.mark.parametrize(("load", "outcome"), [(0.0, "failed"), (4.0, "passed")])
def test_a_timeout_grows_with_the_load(
    pytester: pytest.Pytester, load: float, outcome: str
) -> None:
    result = run(
        pytester,
        "kit.budget",
        f"import kit.budget\nkit.budget.load = lambda: {load}\n",
        """
import time, pytest
@pytest.mark.timeout(0.5)
def test_takes_a_second():
    time.sleep(1)
""",
    )
    result.assert_outcomes(**{outcome: 1})
