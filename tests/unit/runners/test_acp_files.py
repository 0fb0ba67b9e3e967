"""The ACP client's file system, the security boundary between an agent and the machine:
every way out of the session's folders is refused with an exact message and code, and
what is inside reads and writes as asked."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from gemwire.errors import AccessDenied
from gemwire.runners.acp.files import RESOURCE_NOT_FOUND, ConfinedFileSystem

INVALID_PARAMS = -32602


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``workspace/`` (the root, with ``a.txt`` and ``sub/``) next to ``outside/secret``."""
    root = tmp_path.resolve()
    (root / "workspace" / "sub").mkdir(parents=True)
    (root / "workspace" / "a.txt").write_text("one\ntwo\nthree\n")
    (root / "outside").mkdir()
    (root / "outside" / "secret").write_text("secret\n")
    return root


def refusal(call: Callable[[], object]) -> tuple[str, int, str]:
    with pytest.raises(AccessDenied) as caught:
        call()
    return str(caught.value), caught.value.code, caught.value.path


def test_inside_the_root_reads_and_writes_as_asked(tree: Path) -> None:
    files = ConfinedFileSystem([tree / "workspace"])
    a = str(tree / "workspace" / "a.txt")
    assert files.read_text(a) == "one\ntwo\nthree\n"
    assert files.read_text(a, line=2) == "two\nthree\n"
    assert files.read_text(a, line=2, limit=1) == "two\n"
    assert files.read_text(a, limit=1) == "one\n"
    # `..` that stays inside is fine.
    assert files.read_text(str(tree / "workspace" / "sub" / ".." / "a.txt")) == "one\ntwo\nthree\n"
    assert files.write_text(a, "new\n") is False
    assert files.write_text(str(tree / "workspace" / "made" / "deep" / "b.txt"), "b") is True
    assert (tree / "workspace" / "made" / "deep" / "b.txt").read_text() == "b"
    assert sorted(p.name for p in (tree / "workspace").iterdir()) == ["a.txt", "made", "sub"]


def test_a_write_keeps_the_mode_of_the_file_it_replaces(tree: Path) -> None:
    script = tree / "workspace" / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o750)
    ConfinedFileSystem([tree / "workspace"]).write_text(str(script), "#!/bin/sh\nexit 0\n")
    assert (script.read_text(), script.stat().st_mode & 0o777) == ("#!/bin/sh\nexit 0\n", 0o750)


def test_every_root_serves_and_a_name_sharing_a_prefix_is_not_a_root(tree: Path) -> None:
    (tree / "workspace2").mkdir()
    (tree / "workspace2" / "x").write_text("x")
    files = ConfinedFileSystem([tree / "workspace", tree / "outside"])
    assert files.read_text(str(tree / "outside" / "secret")) == "secret\n"
    x = str(tree / "workspace2" / "x")
    assert refusal(lambda: files.read_text(x)) == (
        f"outside the session's folders: {x}",
        INVALID_PARAMS,
        x,
    )
    assert (files.contains(str(tree / "workspace")), files.contains(x)) == (True, False)


@pytest.mark.parametrize(
    "path",
    [
        "workspace/../outside/secret",
        "workspace/sub/../../outside/secret",
        "outside/secret",
    ],
)
def test_a_path_out_of_the_root_is_refused(tree: Path, path: str) -> None:
    files = ConfinedFileSystem([tree / "workspace"])
    full = f"{tree}/{path}"
    expected = (f"outside the session's folders: {full}", INVALID_PARAMS, full)
    assert refusal(lambda: files.read_text(full)) == expected
    assert refusal(lambda: files.write_text(full, "pwned")) == expected
    assert (tree / "outside" / "secret").read_text() == "secret\n"


def test_system_paths_relative_paths_and_nul_bytes_are_refused(tree: Path) -> None:
    files = ConfinedFileSystem([tree / "workspace"])
    assert refusal(lambda: files.read_text("/etc/passwd")) == (
        "outside the session's folders: /etc/passwd",
        INVALID_PARAMS,
        "/etc/passwd",
    )
    assert refusal(lambda: files.write_text("a.txt", "x")) == (
        "not an absolute path: a.txt",
        INVALID_PARAMS,
        "a.txt",
    )
    nul = f"{tree}/workspace/a.txt\0/../../outside/secret"
    assert refusal(lambda: files.read_text(nul)) == (
        "the path contains a NUL byte",
        INVALID_PARAMS,
        nul.replace("\0", "\\0"),
    )
    assert files.contains(nul) is False


@pytest.mark.parametrize(
    ("link", "target", "path"),
    [
        ("leak", "outside/secret", "leak"),  # a file
        ("door", "outside", "door/secret"),  # a folder
        ("new", "outside/new", "new"),  # dangling: a write would create it outside
        ("hop", "workspace/sub/../../outside", "hop/secret"),  # `..` inside the link
    ],
)
def test_a_symlink_pointing_out_is_refused(tree: Path, link: str, target: str, path: str) -> None:
    (tree / "workspace" / link).symlink_to(tree / target)
    files = ConfinedFileSystem([tree / "workspace"])
    full = str(tree / "workspace" / path)
    expected = (f"outside the session's folders: {full}", INVALID_PARAMS, full)
    assert refusal(lambda: files.read_text(full)) == expected
    assert refusal(lambda: files.write_text(full, "pwned")) == expected
    assert sorted(p.name for p in (tree / "outside").iterdir()) == ["secret"]
    assert (tree / "outside" / "secret").read_text() == "secret\n"


def test_a_symlink_pointing_inside_is_followed(tree: Path) -> None:
    (tree / "workspace" / "alias").symlink_to(tree / "workspace" / "a.txt")
    files = ConfinedFileSystem([tree / "workspace"])
    assert files.read_text(str(tree / "workspace" / "alias")) == "one\ntwo\nthree\n"
    assert files.write_text(str(tree / "workspace" / "alias"), "via alias\n") is False
    assert (tree / "workspace" / "a.txt").read_text() == "via alias\n"
    assert (tree / "workspace" / "alias").is_symlink()


class SwapAfterCheck(ConfinedFileSystem):
    """Runs ``swap`` between the path check and the walk to the file: the race an agent
    (or a process it started) could win."""

    def __init__(self, root: Path, swap: Callable[[], None]) -> None:
        super().__init__([root])
        self.swap = swap

    def _locate(self, path: str) -> tuple[Path, tuple[str, ...]]:
        located = super()._locate(path)
        self.swap()
        return located


def test_a_folder_swapped_for_a_symlink_after_the_check_is_not_followed(tree: Path) -> None:
    sub = tree / "workspace" / "sub"

    def swap() -> None:
        sub.rmdir()
        sub.symlink_to(tree / "outside")

    full = str(sub / "secret")
    expected = (f"cannot reach {full}: Not a directory", INVALID_PARAMS, full)
    assert refusal(lambda: SwapAfterCheck(tree / "workspace", swap).read_text(full)) == expected
    sub.unlink()
    sub.mkdir()
    files = SwapAfterCheck(tree / "workspace", swap)
    assert refusal(lambda: files.write_text(full, "pwned")) == expected
    assert sorted(p.name for p in (tree / "outside").iterdir()) == ["secret"]
    assert (tree / "outside" / "secret").read_text() == "secret\n"


def test_a_file_swapped_for_a_symlink_after_the_check_is_not_followed(tree: Path) -> None:
    a = tree / "workspace" / "a.txt"

    def swap() -> None:
        a.unlink()
        a.symlink_to(tree / "outside" / "secret")

    expected = (f"not a regular file: {a}", INVALID_PARAMS, str(a))
    assert refusal(lambda: SwapAfterCheck(tree / "workspace", swap).read_text(str(a))) == expected
    a.unlink()
    a.write_text("one\n")
    files = SwapAfterCheck(tree / "workspace", swap)
    assert refusal(lambda: files.write_text(str(a), "pwned")) == expected
    assert (tree / "outside" / "secret").read_text() == "secret\n"


def test_what_is_not_a_file_is_refused(tree: Path) -> None:
    files = ConfinedFileSystem([tree / "workspace"])
    root, sub = str(tree / "workspace"), str(tree / "workspace" / "sub")
    assert refusal(lambda: files.read_text(root)) == (f"not a file: {root}", INVALID_PARAMS, root)
    assert refusal(lambda: files.write_text(root, "x")) == (
        f"not a file: {root}",
        INVALID_PARAMS,
        root,
    )
    expected = (f"not a regular file: {sub}", INVALID_PARAMS, sub)
    assert refusal(lambda: files.read_text(sub)) == expected
    assert refusal(lambda: files.write_text(sub, "x")) == expected
    through_a_file = str(tree / "workspace" / "a.txt" / "x")
    assert refusal(lambda: files.write_text(through_a_file, "x")) == (
        f"cannot reach {through_a_file}: Not a directory",
        INVALID_PARAMS,
        through_a_file,
    )


def test_a_missing_file_is_resource_not_found(tree: Path) -> None:
    files = ConfinedFileSystem([tree / "workspace"])
    for path in (tree / "workspace" / "nope.txt", tree / "workspace" / "nope" / "x.txt"):
        assert refusal(lambda: files.read_text(str(path))) == (  # noqa: B023 - called at once
            f"Resource not found: {path}",
            RESOURCE_NOT_FOUND,
            str(path),
        )
    assert not (tree / "workspace" / "nope").exists()


def test_a_fifo_is_refused_without_blocking(tree: Path) -> None:
    fifo = tree / "workspace" / "pipe"
    os.mkfifo(fifo)
    files = ConfinedFileSystem([tree / "workspace"])
    outcome: list[BaseException | str] = []

    def read() -> None:
        try:
            outcome.append(files.read_text(str(fifo)))
        except BaseException as exc:  # noqa: BLE001 - reported below
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=10)
    if reader.is_alive():  # opening blocked for a writer: unblock it, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(timeout=10)
        pytest.fail("read_text blocked opening a FIFO")
    assert len(outcome) == 1
    assert isinstance(outcome[0], AccessDenied)
    assert str(outcome[0]) == f"not a regular file: {fifo}"


def test_a_fifo_is_not_replaced_by_a_write(tree: Path) -> None:
    fifo = tree / "workspace" / "pipe"
    os.mkfifo(fifo)
    files = ConfinedFileSystem([tree / "workspace"])
    assert refusal(lambda: files.write_text(str(fifo), "x")) == (
        f"not a regular file: {fifo}",
        INVALID_PARAMS,
        str(fifo),
    )
    assert fifo.is_fifo()


def test_a_file_over_the_limit_is_refused_before_it_is_read(tree: Path) -> None:
    huge = tree / "workspace" / "huge"
    with huge.open("wb") as file:
        file.truncate(100 * 1024 * 1024)  # sparse: nothing is written, nothing read
    assert refusal(lambda: ConfinedFileSystem([tree / "workspace"]).read_text(str(huge))) == (
        f"{huge} is 104857600 bytes, over the 67108864-byte limit",
        INVALID_PARAMS,
        str(huge),
    )
    small = ConfinedFileSystem([tree / "workspace"], max_read_bytes=13)
    a = str(tree / "workspace" / "a.txt")
    assert refusal(lambda: small.read_text(a)) == (
        f"{a} is 14 bytes, over the 13-byte limit",
        INVALID_PARAMS,
        a,
    )


def test_non_utf8_names_and_contents(tree: Path) -> None:
    files = ConfinedFileSystem([tree / "workspace"])
    # A name that is not UTF-8 reaches Python as surrogate escapes, and back to disk as is.
    name = os.fsdecode(b"caf\xe9.txt")
    assert files.write_text(str(tree / "workspace" / name), "h\u00e9\n") is True
    assert b"caf\xe9.txt" in os.listdir(os.fsencode(tree / "workspace"))
    assert (tree / "workspace" / name).read_bytes() == b"h\xc3\xa9\n"
    # Invalid UTF-8 in a file reads with replacement characters.
    (tree / "workspace" / name).write_bytes(b"a\xffb\n")
    assert files.read_text(str(tree / "workspace" / name)) == "a\ufffdb\n"
