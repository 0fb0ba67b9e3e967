"""Workspaces confined under the server's roots: the real path (symlinks resolved), then
the check, so neither ``..`` nor a symlink leads out of a root.

    >>> import tempfile, os
    >>> root = os.path.realpath(tempfile.mkdtemp())
    >>> confine(root, (root,)) == root
    True
    >>> confine(os.path.join(root, ".."), (root,))
    Traceback (most recent call last):
    ...
    gemwire.server.responses.Forbidden: ... is outside the server's roots ...
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from gemwire.server.responses import BadRequest, Forbidden

__all__ = ("confine", "real_roots", "under")


def real_roots(roots: Sequence[str]) -> tuple[str, ...]:
    """The roots as real, absolute paths; each must be an existing folder.

    Raises `BadRequest` naming the first that is not.
    """
    found: list[str] = []
    for root in roots:
        real = os.path.realpath(os.path.expanduser(root))
        if not os.path.isdir(real):
            raise BadRequest(f"root {root!r} is not a folder")
        if real not in found:
            found.append(real)
    return tuple(found)


def under(path: str, root: str) -> bool:
    """Whether the real path ``path`` is ``root`` or inside it (both real)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def confine(path: str | None, roots: Sequence[str], *, folder: bool = True) -> str:
    """The real path of ``path`` if it lies under one of ``roots`` (real paths); ``None``
    is the first root, and a relative path is taken from the first root.

    Raises `Forbidden` for a path outside every root (after resolving ``..`` and
    symlinks), `BadRequest` for one that does not exist, is not a folder (``folder``)
    or holds a NUL byte.
    """
    if not roots:
        raise Forbidden("the server has no roots")
    if path is None:
        return roots[0]
    if "\0" in path:
        raise BadRequest("the path holds a NUL byte")
    joined = os.path.join(roots[0], os.path.expanduser(path))
    real = os.path.realpath(joined)
    if not any(under(real, root) for root in roots):
        raise Forbidden(f"{path!r} is outside the server's roots ({', '.join(roots)})")
    if not os.path.exists(real):
        raise BadRequest(f"{path!r} does not exist")
    if folder and not os.path.isdir(real):
        raise BadRequest(f"{path!r} is not a folder")
    return real
