"""Where a run's trials wait for workers: an Optuna storage shared by the coordinator and `memopt worker`.

``optimizer.storage`` (``--storage``) names it: ``postgresql://...`` (driven by psycopg 3, the ``team``
extra), ``sqlite:///file.db`` (one machine), or ``journal:PATH`` (an Optuna journal file on a shared
disk). RDB storages get Optuna's heartbeat: a worker beats every `HEARTBEAT_S` seconds while it holds a
trial, and a trial whose worker stopped beating for `GRACE_S` seconds is failed and queued again
(`STALE_RETRIES` times at most; then it counts as errored). A journal file has no heartbeat: a trial
whose worker died there stays claimed, so use an RDB storage when workers may die.

Studies in the storage, one per run and one per round (names hold the MLflow parent run id):

* ``memopt:<run_id>`` — the run: user attrs ``experiment`` (its name), ``identity`` (`identity_of`: what
  a worker's experiment must match), ``state`` (``open`` / ``finished``).
* ``memopt:<run_id>:round<N>`` — round N's work queue (see `memopt.optimize.workers`).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memopt.core.errors import ConfigError, StorageError
from memopt.lm.redaction import quoted_uri, redact, remember_uri

__all__ = ["open_storage", "run_study_name", "round_study_name", "identity_of", "mismatch", "display_url",
           "storage_step",
           "HEARTBEAT_S",
           "GRACE_S", "STALE_RETRIES", "PREFIX"]

HEARTBEAT_S = 2  # Optuna's heartbeat interval (whole seconds) of a worker holding a trial
SCHEMA_ATTEMPTS = 5  # tries to open a storage whose tables another process is creating at the same moment
GRACE_S = 8  # no beat for this long: the trial's worker is taken for dead
STALE_RETRIES = 2  # a dead worker's trial is queued again at most this many times
PREFIX = "memopt:"
CONNECT_TIMEOUT_S = 20  # a PostgreSQL that does not answer a connection attempt in this time is taken as down


def run_study_name(run_id: str) -> str:
    """The study that announces run ``run_id`` to workers."""
    return f"{PREFIX}{run_id}"


def round_study_name(run_id: str, round_index: int) -> str:
    """The study holding round ``round_index``'s trials of run ``run_id``."""
    return f"{PREFIX}{run_id}:round{round_index}"


def display_url(url: str) -> str:
    """The storage URL with any password hidden (for messages and logs): `memopt.lm.redaction.redact`."""
    return redact(url)


def _storage_fault(error: BaseException) -> bool:
    """Whether an error is the storage's (its database or journal file), not a bug or a user's input."""
    import optuna

    if isinstance(error, optuna.exceptions.StorageInternalError | OSError):
        return True
    try:
        import sqlalchemy.exc

        return isinstance(error, sqlalchemy.exc.SQLAlchemyError)
    except ImportError:  # pragma: no cover - Optuna's RDB storage needs SQLAlchemy
        return False


def _root_cause(error: BaseException) -> str:
    """The first line of the deepest cause of ``error`` (the driver's words: "connection refused", ...), masked."""
    seen: set[int] = set()
    while id(error) not in seen and (error.__cause__ or error.__context__) is not None:
        seen.add(id(error))
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    lines = [line.strip() for line in str(getattr(error, "orig", None) or error).splitlines() if line.strip()]
    return redact(lines[0] if lines else type(error).__name__)[:200]


@contextmanager
def storage_step(url: str, step: str, then: str) -> Iterator[None]:
    """Run one step that reads or writes the storage at ``url``: a failure of the storage (a database that stopped,
    a journal on a full disk) is one `StorageError` naming the storage (password masked), ``step``, the cause and
    ``then`` (what to do), instead of the chained tracebacks of SQLAlchemy and Optuna."""
    try:
        yield
    except StorageError:
        raise
    except Exception as e:
        if not _storage_fault(e):
            raise
        raise StorageError(f"Optuna storage {display_url(url)}: {step} failed ({_root_cause(e)}). {then}") from None


def _check_journal(path: Path, key: str) -> None:
    """A `ConfigError` unless ``path`` is absent, empty or an Optuna journal: one JSON object (a log entry) a line.

    Checked before Optuna opens it, as Optuna appends its entries to any file and only then fails to read it back.
    The last line may lack its newline (another process is writing it) if it starts like an entry.
    """
    if not path.is_file():
        return  # absent: a new journal (a directory or an unreadable file fails on opening, with its reason)
    try:
        with open(path, "rb") as f:
            for number, line in enumerate(f, start=1):
                if not line.endswith(b"\n"):
                    if line.startswith(b"{"):
                        return
                    entry: Any = None
                else:
                    try:
                        entry = json.loads(line)
                    except (ValueError, RecursionError):  # not JSON, not UTF-8, nested too deeply
                        entry = None
                if not isinstance(entry, dict) or "op_code" not in entry:
                    raise ConfigError(f"{key}: {path} is not an Optuna journal (line {number} is not a journal "
                                      "entry, a JSON object per line); it was left unchanged. Choose a new file "
                                      "path, e.g. journal:memopt-trials.log.")
    except OSError:
        return  # unreadable: opening it says why


def _driver_url(url: str) -> str:
    """``postgresql://`` → ``postgresql+psycopg://`` (psycopg 3; SQLAlchemy's default driver is psycopg2)."""
    for plain in ("postgresql://", "postgres://"):
        if url.startswith(plain):
            return "postgresql+psycopg://" + url[len(plain):]
    return url


def open_storage(url: str, *, key: str = "optimizer.storage", create: bool = True) -> Any:
    """The Optuna storage at ``url``, connected now; one `ConfigError` naming ``key`` when it cannot be used.

    ``create=False`` (a worker): a SQLite or journal file that does not exist yet is an error, not a new file.
    """
    import warnings

    import optuna
    from optuna.storages import JournalStorage, RDBStorage, RetryHeartbeatStaleTrialCallback
    from optuna.storages.journal import JournalFileBackend

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)  # heartbeat, stale trials
    remember_uri(url)
    url = quoted_uri(url)  # a password holding '@' or '/' reaches the server whole
    shown = display_url(url)
    path = ""  # the file of a journal or SQLite storage
    if url.startswith("journal:"):
        path = url[len("journal:"):]
        if not path:
            raise ConfigError(f"{key}: journal: needs a file path, e.g. journal:/shared/memopt-trials.log")
    elif url.startswith("sqlite:///"):
        path = url[len("sqlite:///"):].split("?", 1)[0]
    if not create and path and not Path(path).exists():
        raise ConfigError(f"{key}: no storage at {path}: start `memopt optimize EXPERIMENT --storage {url}` first "
                          "(it creates the storage), then the workers with the same URL.")
    if url.startswith("journal:"):
        _check_journal(Path(path), key)
        try:
            return JournalStorage(JournalFileBackend(path))
        except OSError as e:
            raise ConfigError(f"{key}: cannot open the journal file {path}: {e.strerror or e}.") from None
    if not url.startswith(("postgresql://", "postgres://", "postgresql+psycopg://", "sqlite:///", "mysql")):
        raise ConfigError(f"{key}: {shown!r} is not a storage URL; give postgresql://USER:PASSWORD@HOST:PORT/DB, "
                          "sqlite:///FILE.db or journal:FILE.")
    if "postgres" in url:
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise ConfigError(f"{key}: PostgreSQL needs the psycopg driver: pip install 'memopt[team]'.") from None
    reason = ""
    for attempt in range(SCHEMA_ATTEMPTS):
        try:
            return RDBStorage(_driver_url(url), heartbeat_interval=HEARTBEAT_S, grace_period=GRACE_S,
                              heartbeat_stale_trial_callback=RetryHeartbeatStaleTrialCallback(max_retry=STALE_RETRIES),
                              engine_kwargs=_engine_kwargs(url))
        except Exception as e:  # noqa: BLE001 - SQLAlchemy/driver errors of every kind: one message naming the URL
            reason = redact(" ".join(str(getattr(e, "orig", None) or e).split()))[:300]
            # Processes that start together on an empty database race to create Optuna's tables: the losers retry.
            if ("already exists" in reason or "duplicate key" in reason) and attempt + 1 < SCHEMA_ATTEMPTS:
                time.sleep(0.5 * (attempt + 1))
                continue
            break
    hint = ("Check that the folder exists and is writable." if url.startswith("sqlite") else
            "Check that the database server is running and reachable, and the user, password and database name.")
    raise ConfigError(f"{key}: cannot use the storage {shown}: {reason}. {hint}")


def _engine_kwargs(url: str) -> dict[str, Any]:
    """PostgreSQL: test pooled connections before use, give up a connection attempt after `CONNECT_TIMEOUT_S`;
    SQLite: wait up to 30 s for another process's write lock."""
    if url.startswith("sqlite"):
        return {"connect_args": {"timeout": 30}}
    if url.startswith("postgres"):
        return {"pool_pre_ping": True, "connect_args": {"connect_timeout": CONNECT_TIMEOUT_S}}
    return {"pool_pre_ping": True}


def identity_of(experiment: Any, data_fingerprint: str) -> dict[str, Any]:
    """What a worker's experiment must share with the coordinator's to score its trials the same way.

    The pipeline, prompts, knobs, seed, the data (its content hash), the task model names (a worker may
    reach them at another endpoint: the part after ``@`` is not compared) and the error limit.
    """
    task = sorted(spec.raw.split("@", 1)[0] for spec in experiment.lm.task)
    fields = {"pipeline": experiment.pipeline, "prompts": experiment.prompts, "knobs": dict(experiment.knobs),
              "seed": experiment.seed, "data": data_fingerprint, "task_lm": task,
              "max_error_rate": experiment.max_error_rate, "parse_retries": experiment.lm.parse_retries}
    fields["hash"] = hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]
    return fields


def mismatch(mine: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    """The identity fields that differ, as ``key: worker X, coordinator Y``."""
    return [f"{k}: worker {mine.get(k)!r}, coordinator {theirs.get(k)!r}" for k in sorted(set(mine) | set(theirs))
            if k != "hash" and mine.get(k) != theirs.get(k)]
