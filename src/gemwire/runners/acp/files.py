"""The client file system an ACP agent reads and writes through: confined to the
session's roots.

A path is served only when its real location — every symlink resolved, dangling ones
included, ``..`` collapsed — lies inside one of the roots (the session's cwd and its
additional directories, themselves resolved). The walk from the root to the file then
opens each folder with ``O_NOFOLLOW`` relative to the previous one, so a symlink swapped
in after the check cannot redirect it. Writes go to a new temporary file in the target's
folder (missing folders are made, the same way) and are renamed over the target: atomic, and a symlink at the target is replaced,
never followed. NUL bytes and relative paths are refused outright.

Only regular files are read or replaced: a FIFO, a device or a socket is refused before
it is opened (opening a FIFO would block until a writer comes). Refusals raise
`AccessDenied`, which the client turns into a JSON-RPC error and a ``notice``. Blocking
calls: the client runs them in a worker thread.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

from gemwire._portable import O_CLOEXEC, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK
from gemwire.errors import AccessDenied

__all__ = ("DEFAULT_MAX_READ_BYTES", "RESOURCE_NOT_FOUND", "ConfinedFileSystem")

RESOURCE_NOT_FOUND = -32002
"""ACP's error code for a missing resource."""

DEFAULT_MAX_READ_BYTES = 64 * 1024 * 1024


class ConfinedFileSystem:
    """Reads and writes text files inside ``roots`` only; see the module docstring."""

    def __init__(
        self,
        roots: Sequence[str | os.PathLike[str]],
        *,
        max_read_bytes: int = DEFAULT_MAX_READ_BYTES,
    ) -> None:
        self.roots = tuple(Path(os.path.realpath(root)) for root in roots)
        self.max_read_bytes = max_read_bytes

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
        with self._folder(root, parts[:-1], path) as folder:
            # The type is checked before opening: opening a FIFO blocks until a writer
            # comes. O_NONBLOCK covers a FIFO swapped in after the check (a regular
            # file reads the same with it).
            with _reading(path):
                found = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
            if not stat.S_ISREG(found.st_mode):
                raise AccessDenied(f"not a regular file: {path}", path=path)
            flags = os.O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK
            with _reading(path):
                fd = os.open(parts[-1], flags, dir_fd=folder)
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
        name = parts[-1]
        data = content.encode()
        with self._folder(root, parts[:-1], path, create=True) as folder:
            try:
                existing = os.stat(name, dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                existing = None
            if existing is not None and not stat.S_ISREG(existing.st_mode):
                raise AccessDenied(f"not a regular file: {path}", path=path)
            temp = f".{name}.{uuid.uuid4().hex[:12]}.gemwire-tmp"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC
            try:
                fd = os.open(temp, flags, 0o666, dir_fd=folder)
                try:
                    if existing is not None and sys.platform != "win32":
                        os.fchmod(fd, stat.S_IMODE(existing.st_mode))
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view) :]
                    os.fsync(fd)
                finally:
                    os.close(fd)
                os.rename(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=folder)
                raise AccessDenied(f"cannot write {path}: {exc.strerror}", path=path) from exc
        return existing is None

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
                    raise AccessDenied(
                        f"Resource not found: {path}", code=RESOURCE_NOT_FOUND, path=path
                    ) from exc
                except OSError as exc:  # a symlink swapped in (ELOOP), not a folder, ...
                    raise AccessDenied(f"cannot reach {path}: {exc.strerror}", path=path) from exc
                os.close(fd)
                fd = child
            yield fd
        finally:
            os.close(fd)


@contextlib.contextmanager
def _reading(path: str) -> Iterator[None]:
    """An `OSError` reading ``path`` as the refusal the agent gets: a missing file is
    "Resource not found", anything else "cannot read"."""
    try:
        yield
    except FileNotFoundError as exc:
        raise AccessDenied(
            f"Resource not found: {path}", code=RESOURCE_NOT_FOUND, path=path
        ) from exc
    except OSError as exc:
        raise AccessDenied(f"cannot read {path}: {exc.strerror}", path=path) from exc
