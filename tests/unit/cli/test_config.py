"""gemwire's settings: the TOML file, GEMWIRE_* variables, flags, and `gemwire config`."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st
from kit.hostile import texts

from gemwire.cli import main
from gemwire.cli.settings import (
    KEYS,
    ConfigFileError,
    config_path,
    effective,
    format_toml,
    parse_value,
    read_config,
)


def test_the_file_is_found_by_variable_then_xdg_then_home(tmp_path: Path) -> None:
    assert config_path({"GEMWIRE_CONFIG": "~/x.toml", "XDG_CONFIG_HOME": "/xdg"}) == (
        Path("~/x.toml").expanduser()
    )
    assert config_path({"XDG_CONFIG_HOME": "/xdg"}) == Path("/xdg/gemwire/config.toml")
    assert config_path({}) == Path("~/.config/gemwire/config.toml").expanduser()


def config(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    environ = {"GEMWIRE_CONFIG": str(tmp_path / "config.toml"), **(env or {})}
    result = CliRunner().invoke(main, ["config", *args], env=environ)
    return result.exit_code, result.stdout, result.stderr


def test_set_get_unset_round_trip_through_the_file(tmp_path: Path) -> None:
    assert config(tmp_path, "set", "model", "flash")[0] == 0
    assert config(tmp_path, "set", "timeout", "90")[0] == 0
    assert config(tmp_path, "set", "include-directories", "~/a", "b c")[0] == 0
    assert config(tmp_path, "set", "sandbox", "yes")[0] == 0
    assert (tmp_path / "config.toml").read_text() == (
        "# gemwire settings; change them with `gemwire config set KEY VALUE` (docs/cli.md).\n"
        'model = "flash"\n'
        "sandbox = true\n"
        'include_directories = ["~/a", "b c"]\n'
        "timeout = 90.0\n"
    )
    assert config(tmp_path, "get", "timeout") == (0, "90.0\n", "")
    assert config(tmp_path, "get", "include_directories") == (0, "~/a, b c\n", "")
    assert config(tmp_path, "unset", "model")[0] == 0
    assert config(tmp_path, "get", "model") == (1, "", "")
    assert config(tmp_path, "path") == (0, f"{tmp_path / 'config.toml'}\n", "")


def test_list_shows_every_key_and_where_its_value_comes_from(tmp_path: Path) -> None:
    config(tmp_path, "set", "model", "flash")
    code, out, _ = config(tmp_path, "list", env={"GEMWIRE_TIMEOUT": "30"})
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == list(KEYS)
    assert f"model                   flash  ({tmp_path / 'config.toml'})" in lines
    assert "timeout                 30.0  (GEMWIRE_TIMEOUT)" in lines
    assert "executable              -  (the gemini executable to run)" in lines


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["set", "modle", "x"], "unknown setting 'modle'"),
        (["set", "approval_mode", "sometimes"], "approval_mode must be one of default, auto_edit"),
        (["set", "timeout", "soon"], "timeout must be a number, not 'soon'"),
        (["set", "max_tool_calls", "2.5"], "max_tool_calls must be a whole number"),
        (["set", "timeout", "nan"], "timeout must be a finite number"),
        (["set", "model", "a", "b"], "model takes one value"),
    ],
)
def test_bad_values_are_usage_errors_and_change_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    code, _, err = config(tmp_path, *args)
    assert code == 2
    assert message in err
    assert not (tmp_path / "config.toml").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("model = ", "not valid TOML"),
        ("modle = 'x'\n", "unknown setting 'modle'"),
        ("timeout = 'soon'\n", "timeout must be a float, not 'soon'"),
        ("extensions = 'a'\n", "extensions must be a list of strings"),
        ("sandbox = 1\n", "sandbox must be a bool"),
    ],
)
def test_a_broken_file_is_named_with_its_problem(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(content)
    with pytest.raises(ConfigFileError, match=message):
        read_config(path)


def test_a_broken_file_stops_run_but_not_config_or_doctor(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("model = \n")
    env = {"GEMWIRE_CONFIG": str(tmp_path / "config.toml")}
    result = CliRunner().invoke(main, ["run", "hi"], env=env)
    assert result.exit_code == 2
    assert "not valid TOML" in result.stderr
    assert config(tmp_path, "path")[0] == 0


HEADER = "# gemwire settings; change them with `gemwire config set KEY VALUE` (docs/cli.md).\n"


@pytest.mark.parametrize(
    ("content", "args", "repaired", "dropped"),
    [
        # the broken key itself: set replaces it, unset removes it; the rest is kept
        ('model = "pro"\ntimeout = "soon"\n', ["set", "timeout", "60"], "timeout = 60.0\n", []),
        ('model = "pro"\ntimeout = "soon"\n', ["unset", "timeout"], "", []),
        ('model = "pro"\nmodle = "x"\n', ["unset", "modle"], "", []),
        # another key broken: it is dropped, named, and kept in the backup
        (
            'model = "pro"\nmodle = "x"\n',
            ["set", "timeout", "60"],
            "timeout = 60.0\n",
            ["unknown setting 'modle'"],
        ),
        # not TOML at all: nothing can be kept but the new value
        ("model = \n", ["set", "model", "pro"], None, ["not valid TOML"]),
        ("model = \n", ["unset", "model"], None, ["not valid TOML"]),
    ],
)
def test_config_set_and_unset_repair_a_broken_file(
    tmp_path: Path, content: str, args: list[str], repaired: str | None, dropped: list[str]
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(content)
    code, out, err = config(tmp_path, *args)
    assert (code, out) == (0, "")
    if repaired is None:  # an unreadable file
        expected = HEADER + ('model = "pro"\n' if args[0] == "set" else "")
    else:
        expected = HEADER + 'model = "pro"\n' + repaired
    assert path.read_text() == expected
    read_config(path)  # loads again, strictly
    if dropped:
        lines = err.splitlines()
        assert len(lines) == len(dropped) + 1
        for line, problem in zip(lines, dropped, strict=False):
            assert line.startswith(f"gemwire: dropped from the config file: {path}: {problem}")
        assert lines[-1] == f"gemwire: the file as it was is in {path}.bak"
        assert (tmp_path / "config.toml.bak").read_text() == content
    else:
        assert err == ""
        assert not (tmp_path / "config.toml.bak").exists()
    assert (
        CliRunner().invoke(main, ["config", "list"], env={"GEMWIRE_CONFIG": str(path)}).exit_code
        == 0
    )


def test_config_list_shows_what_a_broken_file_still_holds(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('model = "pro"\ntimeout = "soon"\n')
    code, out, err = config(tmp_path, "list")
    assert code == 2
    assert f"model                   pro  ({path})" in out.splitlines()
    assert err.splitlines() == [
        f"gemwire: {path}: timeout must be a float, not 'soon'",
        "gemwire: `gemwire config set KEY VALUE` or `gemwire config unset KEY` repairs it",
    ]


def test_a_typo_in_unset_is_still_a_usage_error(tmp_path: Path) -> None:
    code, _, err = config(tmp_path, "unset", "modle")
    assert code == 2
    assert "unknown setting 'modle'" in err


def test_list_values_split_on_commas_as_in_the_environment(tmp_path: Path) -> None:
    assert config(tmp_path, "set", "include_directories", "a,b", "c d, e")[0] == 0
    assert config(tmp_path, "get", "include_directories") == (0, "a, b, c d, e\n", "")
    assert parse_value(KEYS["extensions"], ["x,,y "]) == ["x", "y"]


def test_file_then_environment_then_flags(tmp_path: Path) -> None:
    # The executable is where a wrong value shows without starting anything.
    (tmp_path / "config.toml").write_text(f'executable = "{tmp_path}/from-file"\n')
    env = {"GEMWIRE_CONFIG": str(tmp_path / "config.toml")}

    def run(*args: str, extra: dict[str, str] | None = None) -> str:
        result = CliRunner().invoke(main, ["run", *args, "hi"], env={**env, **(extra or {})})
        assert result.exit_code == 4
        return result.stderr

    assert f"{tmp_path}/from-file is not" in run()
    assert f"{tmp_path}/from-env is not" in run(
        extra={"GEMWIRE_EXECUTABLE": f"{tmp_path}/from-env"}
    )
    assert f"{tmp_path}/from-flag is not" in run(
        "--executable",
        f"{tmp_path}/from-flag",
        extra={"GEMWIRE_EXECUTABLE": f"{tmp_path}/from-env"},
    )


@pytest.mark.parametrize("command", [["batch"], ["batch", "run"]])
def test_a_groups_subcommand_takes_its_defaults_too(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "config.toml").write_text(f'executable = "{tmp_path}/from-file"\n')
    (tmp_path / "tasks.jsonl").write_text('{"prompt": "hi"}\n')
    env = {"GEMWIRE_CONFIG": str(tmp_path / "config.toml")}
    args = [*command, str(tmp_path / "tasks.jsonl"), "-o", str(tmp_path / "out")]
    result = CliRunner().invoke(main, args, env=env)
    assert result.exit_code == 4
    assert f"{tmp_path}/from-file is not" in result.stderr


def test_yolo_beats_a_configured_approval_mode_but_not_a_flag(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('approval_mode = "default"\nexecutable = "/nope"\n')
    env = {"GEMWIRE_CONFIG": str(tmp_path / "config.toml")}
    assert CliRunner().invoke(main, ["run", "-y", "hi"], env=env).exit_code == 4  # got to discovery
    result = CliRunner().invoke(main, ["run", "-y", "--approval-mode", "plan", "hi"], env=env)
    assert result.exit_code == 2
    assert "--yolo and --approval-mode disagree" in result.stderr


def test_environment_values_are_checked_and_lists_split_on_commas() -> None:
    assert effective({"GEMWIRE_CONFIG": "/nonexistent", "GEMWIRE_EXTENSIONS": "a, b,"}) == {
        "extensions": (["a", "b"], "GEMWIRE_EXTENSIONS")
    }
    with pytest.raises(ConfigFileError, match="GEMWIRE_MAX_TOOL_CALLS: max_tool_calls must be"):
        effective({"GEMWIRE_CONFIG": "/nonexistent", "GEMWIRE_MAX_TOOL_CALLS": "many"})


values = st.fixed_dictionaries(
    {},
    optional={
        "model": texts(),
        "sandbox": st.booleans(),
        "timeout": st.floats(allow_nan=False, allow_infinity=False),
        "max_tool_calls": st.integers(),
        "extensions": st.lists(texts()),
    },
)


@given(values)
def test_what_is_written_reads_back_the_same(settings: dict[str, object]) -> None:
    assert tomllib.loads(format_toml(settings)) == settings  # type: ignore[arg-type]


def test_parse_value_reads_what_people_type() -> None:
    assert parse_value(KEYS["sandbox"], ["False"]) is False
    assert parse_value(KEYS["timeout"], ["5"]) == 5.0
    assert parse_value(KEYS["model"], [" pro "]) == " pro "
