"""A bad option or argument is ONE line naming it and what to do, exit 2, never Typer's usage box (hostile probe
B04; docs/commands.md: "2 for an error you can fix (... a bad option), printed as one line")."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, run_main


@pytest.mark.parametrize(("argv", "named"), [
    (["optimize", str(ROOT / "experiments" / "quickstart.yaml"), "--rounds", "0"], "'--rounds'"),
    (["run", "--limit", "x"], "'--limit'"),
    (["optimize", str(ROOT / "experiments" / "quickstart.yaml"), "--no-such-option"], "--no-such-option"),
    (["no-such-command"], "no-such-command"),
])
def test_a_bad_option_is_one_line_naming_it(argv, named, tmp_path, monkeypatch, capsys) -> None:
    code, out, err = run_main(argv, tmp_path, monkeypatch, capsys)
    assert code == 2 and out == ""
    [line] = err.strip().splitlines()
    assert line.startswith("error: ") and named in line and " -h`" in line, err


def test_help_and_a_bare_group_still_show_the_help(tmp_path, monkeypatch, capsys) -> None:
    code, out, _ = run_main(["optimize", "-h"], tmp_path, monkeypatch, capsys)
    assert code == 0 and "--rounds" in out
    code, out, err = run_main(["attach"], tmp_path, monkeypatch, capsys)
    assert "mem0" in out + err and "error:" not in out + err
