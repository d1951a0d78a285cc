"""`memopt run --trace DIR` into a folder holding an earlier run's graphs is refused before any work, with one
error saying what to do; the earlier graphs stay as they were (hostile probe D04; "no graph ever overwrites
another")."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_main

DATA = "synthetic:conversations=2,sessions=3,seed=1"


def test_a_trace_folder_holding_graphs_is_refused_and_left_alone(tmp_path: Path, monkeypatch, capsys) -> None:
    code, _, err = run_main(["run", "-p", "mem0", "--data", DATA, "--trace", "g", "--out", "r1.json"], tmp_path,
                            monkeypatch, capsys)
    assert code == 0, err
    before = {p.name: p.read_bytes() for p in (tmp_path / "g").iterdir()}
    assert any(name.endswith(".json") for name in before)
    code, _, err = run_main(["run", "-p", "mem0", "--data", DATA, "--limit", "3", "--trace", "g", "--out", "r2.json"],
                            tmp_path, monkeypatch, capsys)
    assert code == 2 and not (tmp_path / "r2.json").exists()
    [line] = err.strip().splitlines()
    assert "--trace g" in line and "new folder" in line
    assert {p.name: p.read_bytes() for p in (tmp_path / "g").iterdir()} == before
    code, _, err = run_main(["run", "-p", "mem0", "--data", DATA, "--limit", "3", "--trace", "g2", "--out", "r2.json"],
                            tmp_path, monkeypatch, capsys)
    assert code == 0, err
