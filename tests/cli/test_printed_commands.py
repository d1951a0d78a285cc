"""The `Export:` and `MLflow:` commands printed at the end of a run on a store whose URL holds a password run as
printed: they read the URL from ``$MLFLOW_TRACKING_URI`` (as the resume command does), never printing it
(hostile probe S12)."""

from __future__ import annotations

import os
import subprocess

from memopt.cli.optimize import export_command
from memopt.tracking.runs import Tracker

URI = "postgresql+psycopg://team:T3am@p:ss/w-Zq9Mark@127.0.0.1:5432/tmlflow"


def _as_the_shell_runs_it(command: str) -> list[str]:
    """The words bash makes of ``command`` (up to its note), with $MLFLOW_TRACKING_URI set to the real URL."""
    words = command.split("; it reads", 1)[0]
    done = subprocess.run(["bash", "-c", f'printf "%s\\n" {words}'], capture_output=True, text=True, check=True,
                          env={**os.environ, "MLFLOW_TRACKING_URI": URI})
    return done.stdout.splitlines()


def test_the_export_command_reads_a_password_holding_store_from_the_environment() -> None:
    command = export_command("0123456789abcdef0123456789abcdef", URI)  # the whole line runs as printed
    assert "Zq9Mark" not in command and "***" not in command
    done = subprocess.run(["bash", "-c", f'printf "%s\\n" {command}'], capture_output=True, text=True, check=True,
                          env={**os.environ, "MLFLOW_TRACKING_URI": URI})
    assert done.stdout.splitlines()[:3] == ["memopt", "export", "0123456789abcdef0123456789abcdef"]
    assert done.stdout.splitlines()[-2:] == ["--tracking-uri", URI]


def test_the_mlflow_command_reads_a_password_holding_store_from_the_environment() -> None:
    hint = Tracker(URI).ui_hint()
    assert "Zq9Mark" not in hint and "set MLFLOW_TRACKING_URI=postgresql+psycopg://team:***@" in hint
    words = _as_the_shell_runs_it(hint.split(", then open", 1)[0].split("=false ", 1)[1])
    assert words[words.index("--backend-store-uri") + 1] == URI
