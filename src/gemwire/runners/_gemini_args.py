"""What Gemini CLI's argument parser makes of ``extra_args``, and which of them gemwire refuses.

Gemini CLI parses its argv with yargs (yargs-parser 21 in 0.15.4, 0.30.0 and 0.61.0), which
reads one flag in many spellings: ``--output-format``, ``--outputFormat``, ``--output--format``
and ``---output-format`` are one key; ``--o`` is ``-o``, its one-letter alias; ``--prompt.x=1``
sets ``prompt`` to an object (dot notation); ``--no-prompt`` sets it to false; ``--_=x`` adds to
the positional arguments, which are the prompt (``query``), as is a negative number (``-5``).
So a flag is recognized here by folding its name until every spelling yargs reads as one flag
reads as one: the part before a ``.``, lower case, without ``-`` and ``_``, a one-letter alias
as its long name. That folds some spellings yargs refuses as unknown together with real
flags, and refuses them too. tests/e2e/test_gemini_extra_args_yargs.py checks the rules
against the real parser of each pinned CLI.
"""

from __future__ import annotations

import re

import msgspec

__all__ = ("Refusal", "refusal")


class Refusal(msgspec.Struct, frozen=True, kw_only=True):
    """Why an extra argument cannot be passed on."""

    arg: str
    reason: str
    """Naming no gemwire option (each surface names its own: `OptionProblem`)."""
    instead: str | None = None
    """The `GeminiOptions` field that does what the argument asks for."""


_OWNED: dict[str, tuple[str, str | None]] = {
    "": ("yargs reads it as a positional argument: the prompt, which goes on stdin", None),
    "query": ("it is the prompt, which goes on stdin", None),
    "prompt": ("the prompt goes on stdin", None),
    "promptinteractive": ("the prompt goes on stdin, and a run is headless", None),
    "outputformat": ("gemwire chooses the output format", "output_format"),
    "acp": ("Gemini CLI's ACP mode runs through gemwire's ACP client (gemwire acp)", None),
    "experimentalacp": (
        "Gemini CLI's ACP mode runs through gemwire's ACP client (gemwire acp)",
        None,
    ),
    "help": ("it prints the help instead of running", None),
    "version": ("it prints the version instead of running", None),
    "listextensions": ("it lists extensions instead of running", None),
    "listsessions": ("it lists sessions instead of running (gemwire sessions list)", None),
    "deletesession": ("it deletes a session instead of running", None),
    "resume": ("gemwire locks the session it opens and guards it from Gemini's cleanup", "resume"),
    "sessionid": ("gemwire locks the session it opens", "session_id"),
    "sessionfile": (
        "gemwire guards the session it opens from Gemini's cleanup",
        "session_file",
    ),
    "iscommand": ("it is Gemini CLI's internal mark of a subcommand", None),
}
"""Flags (folded, `_key`) extra arguments may not hold: the reason, and the option to use."""

_ALIASES = {
    "d": "debug",
    "e": "extensions",
    "h": "help",
    "i": "promptinteractive",
    "l": "listextensions",
    "m": "model",
    "o": "outputformat",
    "p": "prompt",
    "r": "resume",
    "s": "sandbox",
    "v": "version",
    "w": "worktree",
    "y": "yolo",
}
"""The one-letter aliases of the pinned CLIs; yargs takes each after ``-`` or ``--``."""

_TAKES_VALUE = {
    "adminpolicy",
    "allowedmcpservernames",
    "allowedtools",
    "approvalmode",
    "extensions",
    "fakeresponses",
    "fakeresponsesnonstrict",
    "includedirectories",
    "model",
    "policy",
    "recordresponses",
    "worktree",
}
"""Flags that take the next argument as their value when it does not start with ``-`` (those
of `_OWNED` are refused whatever follows them)."""

_NEGATIVE = re.compile(r"-(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)")
"""yargs-parser's negative number: a positional argument, not a flag."""


def _key(name: str) -> str:
    """A long flag's name folded (``outputFormat``, ``output_format.x`` -> ``outputformat``)."""
    key = name.split(".", 1)[0].lower().replace("-", "").replace("_", "")
    return _ALIASES.get(key, key)


def _owned(key: str) -> tuple[str, str | None] | None:
    if key in _OWNED:
        return _OWNED[key]
    if key.startswith("no"):  # --noPrompt, --no_prompt: a negation in other spellings
        return _OWNED.get(_ALIASES.get(key[2:], key[2:]))
    return None


def refusal(args: tuple[str, ...]) -> Refusal | None:
    """The first of ``args`` gemwire cannot pass on, or ``None``.

    Refused: a flag gemwire owns or one that stops the run (`_OWNED`), in any spelling; a
    bare word that is not the value of the flag before it (it would be the prompt), a negative
    number, ``--``, a cluster of short flags, and a NUL byte. A value starting with ``-``
    must be written ``--flag=value``.

    >>> refusal(("--skip-trust", "--model", "flash", "--policy=p.toml")) is None
    True
    >>> refusal(("--o=json",))
    Refusal(arg='--o=json', reason='gemwire chooses the output format', instead='output_format')
    """
    value_may_follow = False
    for arg in args:
        if value_may_follow and not arg.startswith("-"):
            value_may_follow = False
            continue
        value_may_follow = False
        if "\x00" in arg:
            return Refusal(arg=arg, reason="it holds a NUL byte, which no program can be given")
        if arg == "--":
            return Refusal(arg=arg, reason="what follows it is the prompt, which goes on stdin")
        if _NEGATIVE.fullmatch(arg):
            return Refusal(arg=arg, reason="yargs reads a negative number as the prompt")
        if arg.startswith("--"):
            name, has_value, _ = arg[2:].partition("=")
            negated = name.startswith("no-") and len(name) > 3
            key = _key(name[3:] if negated else name)
            value_may_follow = key in _TAKES_VALUE and not (has_value or negated or "." in name)
        elif len(arg) == 2 and arg[0] == "-" and arg[1].isascii() and arg[1].isalpha():
            key = _ALIASES.get(arg[1], arg[1])
            value_may_follow = key in _TAKES_VALUE
        elif arg.startswith("-") and len(arg) > 1:
            return Refusal(
                arg=arg,
                reason="yargs reads it as several flags: write each short flag apart, and a "
                "value as --flag=value",
            )
        else:
            return Refusal(
                arg=arg,
                reason="it is not the value of a flag, and a bare word is the prompt to "
                "Gemini CLI; write --flag=value",
            )
        owned = _owned(key)
        if owned is not None:
            return Refusal(arg=arg, reason=owned[0], instead=owned[1])
    return None
