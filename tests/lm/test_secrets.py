"""One masking rule for every URI and secret (`memopt.lm.redaction`), probed with passwords holding ``@``, ``:``,
``/`` and ``%40``, keys in the environment and keys in a config Mem0 rejects."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from urllib.parse import quote

import pytest

from memopt.lm import redaction
from memopt.lm.redaction import quoted_uri, redact, redact_tree, remember_uri, uri_password

# Passwords as a user would paste them into a URL, unescaped.
PASSWORDS = ["p@ss:w/rd%40-Sekr3t", "Sekr3t@@x", "Sekr3t:abc/def", "Sekr3t%40word", "x@y", "Sekr3t?#frag"]


@pytest.fixture(autouse=True)
def _forget(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(redaction, "_known", set())


def _leaks(text: str, password: str) -> list[str]:
    """The parts of ``password`` (of 3+ characters between its special characters) that show in ``text``."""
    import re

    pieces = [p for p in re.split(r"[@:/%?#]", password) if len(p) >= 3]
    return [p for p in pieces if p in text]


@pytest.mark.parametrize("password", PASSWORDS)
@pytest.mark.parametrize("scheme", ["postgresql", "postgresql+psycopg", "http", "mysql"])
def test_a_uri_password_is_masked_whole_whatever_it_holds(password: str, scheme: str) -> None:
    for host in ("127.0.0.1:5432/mlflow", "db.example.com/db?sslmode=require", "[::1]:5432/x", "db"):
        uri = f"{scheme}://memopt:{password}@{host}"
        for text in (uri, f"cannot use the storage {uri}: refused", json.dumps({"storage": uri}),
                     f"('{uri}',)", f"<{uri}>"):
            shown = redact(text)
            assert f"{scheme}://memopt:***@{host}" in shown, shown
            assert not _leaks(shown, password), (shown, password)


def test_uris_without_a_password_and_ordinary_text_are_left_alone() -> None:
    for text in ("postgresql://memopt@127.0.0.1/db", "http://127.0.0.1:5000/api/2.0/mlflow/runs/get?run_id=1",
                 "sqlite:///mlflow.db", "journal:/shared/trials.log", "mail alice@example.com at 10:30",
                 "m@http://h:1/v1@http://g:2/v1", "Extract facts; keep every token of the answer."):
        assert redact(text) == text


def test_the_password_of_a_given_uri_is_masked_in_every_form_anywhere() -> None:
    password = "p@ss:w/rd%40-Sekr3t"
    remember_uri(f"postgresql://memopt:{password}@db/x")
    for form in (password, "p@ss:w/rd@-Sekr3t", quote(password, safe=""), quote("p@ss:w/rd@-Sekr3t", safe="")):
        assert redact(f"password authentication failed: {form}.") == "password authentication failed: ***."


def test_credentials_of_the_environment_are_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    values = {"OPENAI_API_KEY": "sk-probe-0123456789", "PGPASSWORD": "pg-probe-Sekr3t",
              "MLFLOW_TRACKING_PASSWORD": "mlflow-probe-Sekr3t", "MLFLOW_TRACKING_TOKEN": "tok-probe-0123456789"}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MEMOPT_STORAGE", "postgresql://memopt:env-Sekr3t@db:5432/trials")
    text = " ".join(values.values()) + " and env-Sekr3t"
    assert redact(text) == " ".join(["***"] * len(values)) + " and ***"


def test_a_password_holding_at_reaches_the_database_whole() -> None:
    from sqlalchemy.engine import make_url

    for password in PASSWORDS:
        url = make_url(quoted_uri(f"postgresql://memopt:{password}@127.0.0.1:5432/db"))
        # SQLAlchemy decodes %XX: a password written with '%40' is '@' to the server, as SQLAlchemy always reads it
        assert (url.password, url.host, url.port, url.database) == (password.replace("%40", "@"), "127.0.0.1", 5432,
                                                                    "db")
    assert quoted_uri("postgresql://memopt@db/x") == "postgresql://memopt@db/x"
    assert uri_password("postgresql://memopt:a@b@db/x") == "a@b" and uri_password("postgresql://m@db/x") is None


def test_values_under_secret_keys_are_masked_in_data() -> None:
    config = {"llm": {"provider": "openai", "config": {"api_key": "sk-short", "model": "gpt-4.1-mini",
                                                       "max_tokens": 200}},
              "vector_store": {"config": {"url": "http://qdrant:6333", "password": "hunter2", "token": 12345}},
              "storage": "postgresql://u:Sekr3t@db/x", "knobs": {"token_budget": 4000, "access_token": "abc"}}
    shown = redact_tree(config)
    assert shown["knobs"] == {"token_budget": 4000, "access_token": "***"}  # a knob named after tokens is no secret
    assert shown["llm"]["config"] == {"api_key": "***", "model": "gpt-4.1-mini", "max_tokens": 200}
    assert shown["vector_store"]["config"] == {"url": "http://qdrant:6333", "password": "***", "token": "***"}
    assert shown["storage"] == "postgresql://u:***@db/x"


def test_logs_warnings_and_tracebacks_of_the_cli_are_masked(tmp_path) -> None:
    script = ("import logging, warnings, sys\n"
              "from memopt.lm.redaction import mask_process_output\n"
              "mask_process_output()\n"
              "logging.getLogger('optuna').warning('storage postgresql://u:p@ss:Sekr3t@db/x is slow')\n"
              "warnings.warn('cannot reach http://u:Sekr3t@@h:1/')\n"
              "raise RuntimeError('boom postgresql://u:Sekr3t/@db/x')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert "Sekr3t" not in done.stderr, done.stderr
    assert done.stderr.count("***") == 3, done.stderr


@pytest.mark.slow  # needs the mem0 extra, which .ci/run installs for the slow tests (the fast run skipped it)
def test_a_config_mem0_rejects_never_echoes_its_api_key(tmp_path) -> None:
    pytest.importorskip("mem0")
    key = "sk-probe-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    config = {"llm": {"provider": "nosuch", "config": {"api_key": key, "model": "m"}},
              "embedder": {"provider": "openai", "config": {"api_key": key, "embedding_dims": "x"}}}
    (tmp_path / "mem0.json").write_text(json.dumps(config))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    done = subprocess.run([sys.executable, "-m", "memopt", "attach", "mem0", "--config", "mem0.json", "--trace", "t",
                           "--data", "synthetic:conversations=1,sessions=1", "--limit", "1", "--yes"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert done.returncode == 2, done.stderr
    # the warning that --yes writes into the config's own stores, then the one error
    lines = [line for line in done.stderr.splitlines() if line.strip() and "(--yes)" not in line]
    assert len(lines) == 1 and "Mem0 rejected the config: llm.config" in lines[0], done.stderr
    assert key[:6] not in done.stderr + done.stdout  # not even pydantic's first characters of it


def test_the_printed_resume_command_masks_and_reads_the_password_from_the_environment() -> None:
    from memopt.cli.optimize import _password_note, _resume_command

    storage, tracking = "postgresql://memopt:p@ss:Sekr3t@db:5432/trials", "postgresql://ml:Sekr3t/2@db/mlflow"
    command = _resume_command("exp.yaml", "abc123", {"--tracking-uri": tracking, "--storage": storage,
                                                     "--data": "synthetic:conversations=4"}, ["judge=sim"])
    note = _password_note(tracking, storage)
    assert "Sekr3t" not in command + note
    assert '--storage "$MEMOPT_STORAGE"' in command and '--tracking-uri "$MLFLOW_TRACKING_URI"' in command
    assert "--data synthetic:conversations=4" in command and "--lm judge=sim" in command
    assert "MEMOPT_STORAGE=postgresql://memopt:***@db:5432/trials" in note
    assert "MLFLOW_TRACKING_URI=postgresql://ml:***@db/mlflow" in note and "environment" in note
    plain = _resume_command("exp.yaml", "abc123", {"--storage": "sqlite:///trials.db"})
    assert plain.endswith("--storage sqlite:///trials.db") and _password_note(None, "sqlite:///trials.db") == ""


def test_an_experiment_error_never_shows_a_password(tmp_path) -> None:
    from memopt.core.errors import ConfigError
    from memopt.optimize.experiment import load_experiment

    (tmp_path / "e.yaml").write_text("name: e\npipeline: mem0\nmlflow: {tracking_uri: 12}\n"
                                     "optimizer: {storage: ['postgresql://u:p@ss:Sekr3t@db/x']}\n")
    with pytest.raises(ConfigError) as error:
        load_experiment(tmp_path / "e.yaml")
    assert "Sekr3t" not in str(error.value) and "optimizer.storage" in str(error.value)


def test_masking_a_large_record_reads_the_environment_once(monkeypatch):
    """The secrets are read once per record, not once per string (reading them scans the environment: per string
    it cost an optimize run minutes of CPU), and every string is still masked."""
    import memopt.lm.redaction as redaction
    import memopt.tracking.entries as entries

    monkeypatch.setenv("MEMOPT_TEST_API_KEY", "sk-test-0123456789abcdef")
    reads = []
    real = redaction.secret_values

    def counted() -> list[str]:
        reads.append(1)
        return real()

    monkeypatch.setattr(redaction, "secret_values", counted)
    monkeypatch.setattr(entries, "secret_values", counted)
    record = {"cases": [{"id": i, "note": f"called with sk-test-0123456789abcdef #{i}", "tags": ["a", "b"]}
                        for i in range(200)]}
    for mask in (redaction.redact_tree, entries.scrub):
        reads.clear()
        shown = mask(record)
        assert len(reads) == 1, mask.__name__
        assert "sk-test" not in json.dumps(shown) and shown["cases"][7]["note"] == "called with *** #7"


def test_a_percent_in_a_uri_password_has_its_standard_meaning() -> None:
    """docs/safe-operation.md: `%XX` is the character it encodes, a literal `%` is written `%25`; the unescaped
    `@`, `:`, `/` around it still reach the database whole."""
    from sqlalchemy.engine import make_url

    for written, meant in [("p@ss:w/rd%25x-Sekr3t", "p@ss:w/rd%x-Sekr3t"),
                           ("p@ss:w/rd%40x-Sekr3t", "p@ss:w/rd@x-Sekr3t")]:
        url = make_url(quoted_uri(f"postgresql+psycopg://pct:{written}@127.0.0.1:5432/db"))
        assert (url.username, url.password, url.host, url.database) == ("pct", meant, "127.0.0.1", "db")
        shown = redact(f"postgresql+psycopg://pct:{written}@127.0.0.1:5432/db")
        assert shown == "postgresql+psycopg://pct:***@127.0.0.1:5432/db"
