"""The client file system an ACP agent reads and writes through: confined to the
session's roots.

A path is served only when its real location — every symlink resolved, dangling ones
included, ``..`` collapsed — lies inside one of the roots (the session's cwd and its
additional directories, themselves resolved). Writes go to a new temporary file in the
target's folder (missing folders are made) and are renamed over the target: atomic, and a
symlink at the target is replaced, never followed. NUL bytes and relative paths are refused
outright.

How the located file is then reached is a `FileAccess`, chosen by what the OS offers
(`file_access`):

- `RelativeAccess` (Linux, macOS, BSD): the walk from the root opens each folder with
  ``O_NOFOLLOW`` relative to the previous one (``dir_fd``), so a symlink swapped in after
  the check cannot redirect it.
- `CheckedPathAccess` (Windows: Python offers no ``dir_fd`` there): full paths, every
  folder on the way checked with ``lstat`` to be a folder and neither a symlink nor a
  junction, before use and again after. What was opened must be what was checked (same
  device and file id), or it is closed and refused. A write's data goes only to a
  temporary file that passed that check, and the rename is relative to the same folder: a
  folder swapped for a link to elsewhere has no such temporary file, so the rename fails.
  What a path cannot close is a swap made *and undone* between two checks: it can show a
  read one file from elsewhere, or leave an empty folder or temporary file there. No
  written data leaves the roots.

Only regular files are read or replaced: a FIFO, a device or a socket is refused before
it is opened (opening a FIFO would block until a writer comes). Refusals raise
`AccessDenied`, which the client turns into a JSON-RPC error and a ``notice``. Blocking
calls: the client runs them in a worker thread.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence, Set as AbstractSet
from pathlib import Path
from typing import Any, Protocol

from gemwire._portable import O_BINARY, O_CLOEXEC, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK
from gemwire.errors import AccessDenied

__all__ = (
    "DEFAULT_MAX_READ_BYTES",
    "RESOURCE_NOT_FOUND",
    "CheckedPathAccess",
    "ConfinedFileSystem",
    "FileAccess",
    "RelativeAccess",
    "file_access",
)

RESOURCE_NOT_FOUND = -32002
"""ACP's error code for a missing resource."""

DEFAULT_MAX_READ_BYTES = 64 * 1024 * 1024

_READ = os.O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_BINARY
# O_NONBLOCK covers a FIFO swapped in after the type check (a regular file reads the same).
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_BINARY
_RELATIVE_CALLS = (os.open, os.stat, os.mkdir, os.rename, os.unlink)


class FileAccess(Protocol):
    """How `ConfinedFileSystem` reaches a file it located under ``root`` (``parts``: the
    real path's parts below it, the last one the file's name; ``path``: as the agent gave
    it, for refusals)."""

    def open_to_read(self, root: Path, parts: Sequence[str], path: str) -> int:
        """A read-only fd of the regular file; refuses anything else."""
        ...

    def replace(self, root: Path, parts: Sequence[str], path: str, data: bytes) -> bool:
        """Write ``data`` over the file atomically (making missing folders); whether it
        was created."""
        ...


def file_access(
    supports_dir_fd: AbstractSet[Callable[..., Any]] = os.supports_dir_fd,
) -> FileAccess:
    """`RelativeAccess` where every call it needs takes ``dir_fd``, else `CheckedPathAccess`.

    >>> type(file_access(set())).__name__
    'CheckedPathAccess'
    """
    if all(call in supports_dir_fd for call in _RELATIVE_CALLS):
        return RelativeAccess()
    return CheckedPathAccess()


class ConfinedFileSystem:
    """Reads and writes text files inside ``roots`` only; see the module docstring."""

    def __init__(
        self,
        roots: Sequence[str | os.PathLike[str]],
        *,
        max_read_bytes: int = DEFAULT_MAX_READ_BYTES,
        access: FileAccess | None = None,
    ) -> None:
        self.roots = tuple(Path(os.path.realpath(root)) for root in roots)
        self.max_read_bytes = max_read_bytes
        self.access = access or file_access()

    def contains(self, path: str) -> bool:
        """Whether ``path`` resolves inside a root (for a terminal's cwd, say)."""
        try:
            self._locate(path)
        except AccessDenied:
            return False
        return True

    def read_text(self, path: str, *, line: int | None = None, limit: int | None = None) -> str:
        """The file's text (invalid UTF-8 replaced); ``line`` is 1-based, ``limit`` a
        number of lines."""
        root, parts = self._locate(path)
        if not parts:
            raise AccessDenied(f"not a file: {path}", path=path)
        fd = self.access.open_to_read(root, parts, path)
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise AccessDenied(f"not a regular file: {path}", path=path)
            if info.st_size > self.max_read_bytes:
                raise AccessDenied(
                    f"{path} is {info.st_size} bytes, over the {self.max_read_bytes}-byte limit",
                    path=path,
                )
            text = file.read(self.max_read_bytes + 1).decode(errors="replace")
        if line is None and limit is None:
            return text
        lines = text.splitlines(keepends=True)
        start = max((line or 1) - 1, 0)
        end = None if limit is None else start + limit
        return "".join(lines[start:end])

    def write_text(self, path: str, content: str) -> bool:
        """Replace (or create) the file atomically; returns whether it was created."""
        root, parts = self._locate(path)
        if not parts:
            raise AccessDenied(f"not a file: {path}", path=path)
        return self.access.replace(root, parts, path, content.encode())

    def _locate(self, path: str) -> tuple[Path, tuple[str, ...]]:
        """The root holding the path's real location, and the parts below that root."""
        if "\0" in path:
            raise AccessDenied("the path contains a NUL byte", path=path.replace("\0", "\\0"))
        if not os.path.isabs(path):
            raise AccessDenied(f"not an absolute path: {path}", path=path)
        real = Path(os.path.realpath(path))
        for root in self.roots:
            if real == root or root in real.parents:
                return root, real.relative_to(root).parts
        raise AccessDenied(f"outside the session's folders: {path}", path=path)


class RelativeAccess:
    """Each folder opened relative to the one before (``dir_fd``) without following a
    symlink: nothing swapped in after the check can redirect the walk."""

    def open_to_read(self, root: Path, parts: Sequence[str], path: str) -> int:
        """A read-only fd of the regular file; refuses anything else."""
        with self._folder(root, parts[:-1], path) as folder:
            with _reading(path):
                found = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
            if not stat.S_ISREG(found.st_mode):
                raise AccessDenied(f"not a regular file: {path}", path=path)
            with _reading(path):
                return os.open(parts[-1], _READ, dir_fd=folder)

    def replace(self, root: Path, parts: Sequence[str], path: str, data: bytes) -> bool:
        """Write ``data`` over the file atomically; whether it was created."""
        name = parts[-1]
        with self._folder(root, parts[:-1], path, create=True) as folder:
            try:
                existing = os.stat(name, dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                existing = None
            if existing is not None and not stat.S_ISREG(existing.st_mode):
                raise AccessDenied(f"not a regular file: {path}", path=path)
            temp = _temporary_name(name)
            try:
                fd = os.open(temp, _CREATE, 0o666, dir_fd=folder)
                _fill(fd, data, existing)
                os.rename(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=folder)
                raise AccessDenied(f"cannot write {path}: {exc.strerror}", path=path) from exc
        return existing is None

    @contextlib.contextmanager
    def _folder(
        self, root: Path, parts: Sequence[str], path: str, *, create: bool = False
    ) -> Iterator[int]:
        """An fd of ``root/parts``, each step opened without following symlinks; missing
        folders are made when ``create``."""
        fd = os.open(root, os.O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try:
            for part in parts:
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, dir_fd=fd)
                try:
                    child = os.open(
                        part, os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, dir_fd=fd
                    )
                except FileNotFoundError as exc:
                    raise _not_found(path) from exc
                except OSError as exc:  # a symlink swapped in (ELOOP), not a folder, ...
                    raise AccessDenied(f"cannot reach {path}: {exc.strerror}", path=path) from exc
                os.close(fd)
                fd = child
            yield fd
        finally:
            os.close(fd)


class CheckedPathAccess:
    """Full paths, each folder on the way checked with ``lstat`` before use and again
    after, and what was opened compared with what was checked; for an OS without
    ``dir_fd`` (Windows). See the module docstring for what it guarantees."""

    def open_to_read(self, root: Path, parts: Sequence[str], path: str) -> int:
        """A read-only fd of the regular file; refuses anything else."""
        target = self._folder(root, parts[:-1], path) / parts[-1]
        with _reading(path):
            found = self._entry(target)
        if not stat.S_ISREG(found.st_mode):
            raise AccessDenied(f"not a regular file: {path}", path=path)
        with _reading(path):
            fd = os.open(target, _READ)
        try:
            self._confirm(root, parts, path, os.fstat(fd))
        except BaseException:
            os.close(fd)
            raise
        return fd

    def replace(self, root: Path, parts: Sequence[str], path: str, data: bytes) -> bool:
        """Write ``data`` over the file atomically; whether it was created."""
        folder = self._folder(root, parts[:-1], path, create=True)
        target = folder / parts[-1]
        try:
            existing: os.stat_result | None = self._entry(target)
        except FileNotFoundError:
            existing = None
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            raise AccessDenied(f"not a regular file: {path}", path=path)
        temp = folder / _temporary_name(parts[-1])
        try:
            fd = os.open(temp, _CREATE, 0o666)
        except OSError as exc:
            raise AccessDenied(f"cannot write {path}: {exc.strerror}", path=path) from exc
        try:
            created = os.fstat(fd)
            # Empty until confirmed: created through a swapped folder, it holds no data.
            self._confirm(root, (*parts[:-1], temp.name), path, created)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        try:
            _fill(fd, data, existing)
            # The same folder on both sides: through a swapped folder, there is no `temp`.
            os.replace(temp, target)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise AccessDenied(f"cannot write {path}: {exc.strerror}", path=path) from exc
        self._confirm(root, parts, path, created)
        return existing is None

    def _folder(self, root: Path, parts: Sequence[str], path: str, *, create: bool = False) -> Path:
        """``root/parts``, each step checked to be a folder and no link; missing folders
        are made when ``create``."""
        folder = root
        for part in parts:
            folder /= part
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(folder)
            try:
                info = self._entry(folder)
            except FileNotFoundError as exc:
                raise _not_found(path) from exc
            except OSError as exc:
                raise AccessDenied(f"cannot reach {path}: {exc.strerror}", path=path) from exc
            if _is_link(info) or not stat.S_ISDIR(info.st_mode):
                raise AccessDenied(f"cannot reach {path}: {os.strerror(errno.ENOTDIR)}", path=path)
        return folder

    def _entry(self, path: Path) -> os.stat_result:
        """``lstat``: what is at ``path`` itself, a link not followed."""
        return os.lstat(path)

    def _confirm(self, root: Path, parts: Sequence[str], path: str, opened: os.stat_result) -> None:
        """Refuse unless ``root/parts`` still is ``opened`` and reached through folders
        only: a link swapped in before the open and still there, or a different file."""
        try:
            target = self._folder(root, parts[:-1], path) / parts[-1]
            found = self._entry(target)
        except (AccessDenied, OSError) as exc:
            raise _replaced(path) from exc
        if (found.st_dev, found.st_ino) != (opened.st_dev, opened.st_ino):
            raise _replaced(path)


if sys.platform == "win32":

    def _is_link(info: os.stat_result) -> bool:
        """A symlink or a junction (a folder link any user may make)."""
        junction = info.st_reparse_tag == stat.IO_REPARSE_TAG_MOUNT_POINT
        return stat.S_ISLNK(info.st_mode) or junction

else:

    def _is_link(info: os.stat_result) -> bool:
        """A symlink (Windows: or a junction)."""
        return stat.S_ISLNK(info.st_mode)


def _temporary_name(name: str) -> str:
    return f".{name}.{uuid.uuid4().hex[:12]}.gemwire-tmp"


def _fill(fd: int, data: bytes, existing: os.stat_result | None) -> None:
    """Write all of ``data`` to the new file ``fd`` with ``existing``'s mode, sync and close."""
    try:
        if existing is not None and sys.platform != "win32":
            os.fchmod(fd, stat.S_IMODE(existing.st_mode))
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def _not_found(path: str) -> AccessDenied:
    return AccessDenied(f"Resource not found: {path}", code=RESOURCE_NOT_FOUND, path=path)


def _replaced(path: str) -> AccessDenied:
    return AccessDenied(f"cannot reach {path}: it was replaced while being opened", path=path)


@contextlib.contextmanager
def _reading(path: str) -> Iterator[None]:
    """An `OSError` reading ``path`` as the refusal the agent gets: a missing file is
    "Resource not found", anything else "cannot read"."""
    try:
        yield
    except FileNotFoundError as exc:
        raise _not_found(path) from exc
    except OSError as exc:
        raise AccessDenied(f"cannot read {path}: {exc.strerror}", path=path) from exc
