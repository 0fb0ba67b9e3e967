"""The ACP client's file system, the security boundary between an agent and the machine:
every way out of the session's folders is refused with an exact message and code, and
what is inside reads and writes as asked."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from gemwire._portable import O_NONBLOCK
from gemwire.errors import AccessDenied
from gemwire.runners.acp.files import (
    RESOURCE_NOT_FOUND,
    CheckedPathAccess,
    ConfinedFileSystem,
    FileAccess,
    RelativeAccess,
    file_access,
)

INVALID_PARAMS = -32602
NO_FIFOS = pytest.mark.skipif(sys.platform == "win32", reason="Windows has no FIFOs")


def mkfifo(path: Path) -> None:
    """`os.mkfifo`, which Windows lacks (`NO_FIFOS` keeps the tests that call it off it)."""
    if sys.platform == "win32":
        raise NotImplementedError("Windows has no FIFOs")
    else:
        os.mkfifo(path)


@pytest.fixture(params=[RelativeAccess, CheckedPathAccess], ids=["dir_fd", "paths"])
def access(request: pytest.FixtureRequest) -> FileAccess:
    """Every test runs through both ways to reach a file: ``dir_fd`` (POSIX) and checked
    full paths (Windows, which has no ``dir_fd``: there the first is skipped)."""
    if request.param is RelativeAccess and type(file_access()) is not RelativeAccess:
        pytest.skip("this OS has no dir_fd")
    made: FileAccess = request.param()
    return made


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


def test_inside_the_root_reads_and_writes_as_asked(access: FileAccess, tree: Path) -> None:
    files = ConfinedFileSystem([tree / "workspace"], access=access)
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


@pytest.mark.skipif(sys.platform == "win32", reason="Windows keeps a read-only bit, no mode")
def test_a_write_keeps_the_mode_of_the_file_it_replaces(access: FileAccess, tree: Path) -> None:
    script = tree / "workspace" / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o750)
    ConfinedFileSystem([tree / "workspace"], access=access).write_text(
        str(script), "#!/bin/sh\nexit 0\n"
    )
    assert (script.read_text(), script.stat().st_mode & 0o777) == ("#!/bin/sh\nexit 0\n", 0o750)


def test_every_root_serves_and_a_name_sharing_a_prefix_is_not_a_root(
    access: FileAccess, tree: Path
) -> None:
    (tree / "workspace2").mkdir()
    (tree / "workspace2" / "x").write_text("x")
    files = ConfinedFileSystem([tree / "workspace", tree / "outside"], access=access)
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
def test_a_path_out_of_the_root_is_refused(access: FileAccess, tree: Path, path: str) -> None:
    files = ConfinedFileSystem([tree / "workspace"], access=access)
    full = f"{tree}/{path}"
    expected = (f"outside the session's folders: {full}", INVALID_PARAMS, full)
    assert refusal(lambda: files.read_text(full)) == expected
    assert refusal(lambda: files.write_text(full, "pwned")) == expected
    assert (tree / "outside" / "secret").read_text() == "secret\n"


def test_system_paths_relative_paths_and_nul_bytes_are_refused(
    access: FileAccess, tree: Path
) -> None:
    files = ConfinedFileSystem([tree / "workspace"], access=access)
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
def test_a_symlink_pointing_out_is_refused(
    access: FileAccess, tree: Path, link: str, target: str, path: str
) -> None:
    (tree / "workspace" / link).symlink_to(tree / target)
    files = ConfinedFileSystem([tree / "workspace"], access=access)
    full = str(tree / "workspace" / path)
    expected = (f"outside the session's folders: {full}", INVALID_PARAMS, full)
    assert refusal(lambda: files.read_text(full)) == expected
    assert refusal(lambda: files.write_text(full, "pwned")) == expected
    assert sorted(p.name for p in (tree / "outside").iterdir()) == ["secret"]
    assert (tree / "outside" / "secret").read_text() == "secret\n"


def test_a_symlink_pointing_inside_is_followed(access: FileAccess, tree: Path) -> None:
    (tree / "workspace" / "alias").symlink_to(tree / "workspace" / "a.txt")
    files = ConfinedFileSystem([tree / "workspace"], access=access)
    assert files.read_text(str(tree / "workspace" / "alias")) == "one\ntwo\nthree\n"
    assert files.write_text(str(tree / "workspace" / "alias"), "via alias\n") is False
    assert (tree / "workspace" / "a.txt").read_text() == "via alias\n"
    assert (tree / "workspace" / "alias").is_symlink()


class SwapAfterCheck(ConfinedFileSystem):
    """Runs ``swap`` between the path check and the walk to the file: the race an agent
    (or a process it started) could win."""

    def __init__(self, root: Path, swap: Callable[[], None], access: FileAccess) -> None:
        super().__init__([root], access=access)
        self.swap = swap

    def _locate(self, path: str) -> tuple[Path, tuple[str, ...]]:
        located = super()._locate(path)
        self.swap()
        return located


def test_a_folder_swapped_for_a_symlink_after_the_check_is_not_followed(
    access: FileAccess, tree: Path
) -> None:
    sub = tree / "workspace" / "sub"

    def swap() -> None:
        sub.rmdir()
        sub.symlink_to(tree / "outside")

    full = str(sub / "secret")
    expected = (f"cannot reach {full}: Not a directory", INVALID_PARAMS, full)
    assert (
        refusal(lambda: SwapAfterCheck(tree / "workspace", swap, access).read_text(full))
        == expected
    )
    sub.unlink()
    sub.mkdir()
    files = SwapAfterCheck(tree / "workspace", swap, access)
    assert refusal(lambda: files.write_text(full, "pwned")) == expected
    assert sorted(p.name for p in (tree / "outside").iterdir()) == ["secret"]
    assert (tree / "outside" / "secret").read_text() == "secret\n"


def test_a_file_swapped_for_a_symlink_after_the_check_is_not_followed(
    access: FileAccess, tree: Path
) -> None:
    a = tree / "workspace" / "a.txt"

    def swap() -> None:
        a.unlink()
        a.symlink_to(tree / "outside" / "secret")

    expected = (f"not a regular file: {a}", INVALID_PARAMS, str(a))
    assert (
        refusal(lambda: SwapAfterCheck(tree / "workspace", swap, access).read_text(str(a)))
        == expected
    )
    a.unlink()
    a.write_text("one\n")
    files = SwapAfterCheck(tree / "workspace", swap, access)
    assert refusal(lambda: files.write_text(str(a), "pwned")) == expected
    assert (tree / "outside" / "secret").read_text() == "secret\n"


def test_what_is_not_a_file_is_refused(access: FileAccess, tree: Path) -> None:
    files = ConfinedFileSystem([tree / "workspace"], access=access)
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


def test_a_missing_file_is_resource_not_found(access: FileAccess, tree: Path) -> None:
    files = ConfinedFileSystem([tree / "workspace"], access=access)
    for path in (tree / "workspace" / "nope.txt", tree / "workspace" / "nope" / "x.txt"):
        assert refusal(lambda: files.read_text(str(path))) == (  # noqa: B023 - called at once
            f"Resource not found: {path}",
            RESOURCE_NOT_FOUND,
            str(path),
        )
    assert not (tree / "workspace" / "nope").exists()


@NO_FIFOS
def test_a_fifo_is_refused_without_blocking(access: FileAccess, tree: Path) -> None:
    fifo = tree / "workspace" / "pipe"
    mkfifo(fifo)
    files = ConfinedFileSystem([tree / "workspace"], access=access)
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
        os.close(os.open(fifo, os.O_WRONLY | O_NONBLOCK))
        reader.join(timeout=10)
        pytest.fail("read_text blocked opening a FIFO")
    assert len(outcome) == 1
    assert isinstance(outcome[0], AccessDenied)
    assert str(outcome[0]) == f"not a regular file: {fifo}"


@NO_FIFOS
def test_a_fifo_is_not_replaced_by_a_write(access: FileAccess, tree: Path) -> None:
    fifo = tree / "workspace" / "pipe"
    mkfifo(fifo)
    files = ConfinedFileSystem([tree / "workspace"], access=access)
    assert refusal(lambda: files.write_text(str(fifo), "x")) == (
        f"not a regular file: {fifo}",
        INVALID_PARAMS,
        str(fifo),
    )
    assert fifo.is_fifo()


def test_a_file_over_the_limit_is_refused_before_it_is_read(access: FileAccess, tree: Path) -> None:
    huge = tree / "workspace" / "huge"
    with huge.open("wb") as file:
        file.truncate(100 * 1024 * 1024)  # sparse: nothing is written, nothing read
    assert refusal(
        lambda: ConfinedFileSystem([tree / "workspace"], access=access).read_text(str(huge))
    ) == (
        f"{huge} is 104857600 bytes, over the 67108864-byte limit",
        INVALID_PARAMS,
        str(huge),
    )
    small = ConfinedFileSystem([tree / "workspace"], max_read_bytes=13, access=access)
    a = str(tree / "workspace" / "a.txt")
    assert refusal(lambda: small.read_text(a)) == (
        f"{a} is 14 bytes, over the 13-byte limit",
        INVALID_PARAMS,
        a,
    )


@pytest.mark.skipif(sys.platform == "win32", reason="Windows names are UTF-16")
def test_non_utf8_names_and_contents(access: FileAccess, tree: Path) -> None:
    files = ConfinedFileSystem([tree / "workspace"], access=access)
    # A name that is not UTF-8 reaches Python as surrogate escapes, and back to disk as is.
    name = os.fsdecode(b"caf\xe9.txt")
    assert files.write_text(str(tree / "workspace" / name), "h\u00e9\n") is True
    assert b"caf\xe9.txt" in os.listdir(os.fsencode(tree / "workspace"))
    assert (tree / "workspace" / name).read_bytes() == b"h\xc3\xa9\n"
    # Invalid UTF-8 in a file reads with replacement characters.
    (tree / "workspace" / name).write_bytes(b"a\xffb\n")
    assert files.read_text(str(tree / "workspace" / name)) == "a\ufffdb\n"


def test_the_access_is_chosen_by_what_the_os_offers() -> None:
    assert type(file_access(os.supports_dir_fd)) is RelativeAccess  # Linux, here
    assert type(file_access(set())) is CheckedPathAccess  # Windows: no dir_fd at all
    assert type(file_access(os.supports_dir_fd - {os.rename})) is CheckedPathAccess
    assert type(ConfinedFileSystem(["/"]).access) is RelativeAccess


class SwapAfterLstat(CheckedPathAccess):
    """Runs ``swap`` once, right after the path branch's ``lstat`` of ``at``: between its
    check and its use, where ``dir_fd`` would have closed the race."""

    def __init__(self, at: Path, swap: Callable[[], None]) -> None:
        self.at = at
        self.swap: Callable[[], None] | None = swap

    def _entry(self, path: Path) -> os.stat_result:
        found = super()._entry(path)
        if path == self.at and self.swap is not None:
            swap, self.swap = self.swap, None
            swap()
        return found


@pytest.fixture
def inner(tree: Path) -> Path:
    """``workspace/sub/secret`` inside, the same name as ``outside/secret``."""
    (tree / "workspace" / "sub" / "secret").write_text("inside\n")
    return tree / "workspace" / "sub"


def test_paths_a_folder_swapped_between_check_and_open_is_refused(tree: Path, inner: Path) -> None:
    def swap() -> None:  # sub -> outside, the file checked inside, the one opened outside
        inner.rename(tree / "workspace" / "moved")
        inner.symlink_to(tree / "outside")

    full = str(inner / "secret")
    files = ConfinedFileSystem([tree / "workspace"], access=SwapAfterLstat(inner / "secret", swap))
    assert refusal(lambda: files.read_text(full)) == (
        f"cannot reach {full}: it was replaced while being opened",
        INVALID_PARAMS,
        full,
    )


def test_paths_a_write_through_a_folder_swapped_after_the_check_leaves_nothing_outside(
    tree: Path, inner: Path
) -> None:
    def swap() -> None:  # after the target's check, before the temporary file is made
        inner.rename(tree / "workspace" / "moved")
        inner.symlink_to(tree / "outside")

    full = str(inner / "secret")
    files = ConfinedFileSystem([tree / "workspace"], access=SwapAfterLstat(inner / "secret", swap))
    assert refusal(lambda: files.write_text(full, "pwned")) == (
        f"cannot reach {full}: it was replaced while being opened",
        INVALID_PARAMS,
        full,
    )
    assert sorted(p.name for p in (tree / "outside").iterdir()) == ["secret"]
    assert (tree / "outside" / "secret").read_text() == "secret\n"
    assert (tree / "workspace" / "moved" / "secret").read_text() == "inside\n"


def test_paths_a_rename_through_a_folder_swapped_after_the_write_fails(
    tree: Path, inner: Path
) -> None:
    """The swap comes after the temporary file passed its check: the rename, from and to
    the same folder, finds no temporary file in ``outside``."""
    target = inner / "secret"

    class SwapBeforeRename(CheckedPathAccess):
        confirmed = 0

        def _confirm(
            self, root: Path, parts: Sequence[str], path: str, opened: os.stat_result
        ) -> None:
            super()._confirm(root, parts, path, opened)
            self.confirmed += 1
            if self.confirmed == 1:  # the temporary file's check
                inner.rename(tree / "workspace" / "moved")
                inner.symlink_to(tree / "outside")

    files = ConfinedFileSystem([tree / "workspace"], access=SwapBeforeRename())
    with pytest.raises(AccessDenied) as caught:
        files.write_text(str(target), "pwned")
    assert str(caught.value).startswith(f"cannot write {target}: ")
    assert sorted(p.name for p in (tree / "outside").iterdir()) == ["secret"]
    assert (tree / "outside" / "secret").read_text() == "secret\n"
    # The data stays inside, in the temporary file the swap took away with its folder.
    moved = sorted((tree / "workspace" / "moved").iterdir())
    assert [p.name.endswith(".gemwire-tmp") for p in moved] == [True, False]
    assert [p.read_text() for p in moved] == ["pwned", "inside\n"]
