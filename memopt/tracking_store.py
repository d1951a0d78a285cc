"""The MLflow store behind a `memopt.tracking.Tracker`: every call guarded, every failure one `TrackingError`.

- `GuardedStore` wraps an ``MlflowClient``: a failure of any call is one `TrackingError` naming the
  store (password masked by `shown_uri`), the step (``log text``, ``create run``, ...) and the cause,
  in the database driver's own words when there are some (disk full, read-only, I/O error).
- A ``sqlite:`` database that vanished (moved or deleted during the run) is noticed before the next
  call, which SQLite would otherwise answer by creating a new, empty store at the old path.
- Once the store is gone or unreachable (or a call outlasted a held signal's grace period,
  `memopt.interrupts.deferred`), later calls fail at once with the same error, so the cleanup after an
  error or a Ctrl-C (ending runs, the last checkpoint) costs no more retries.
- `HTTP_DEFAULTS` bound MLflow's HTTP retries (each overridable by its environment variable).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from memopt.errors import MemoptError, TrackingError
from memopt.lm.redaction import redact

__all__ = ["URI_ORDER", "HTTP_DEFAULTS", "shown_uri", "sqlite_path", "store_failure", "cause", "GuardedStore"]

URI_ORDER = "--tracking-uri (the tracking_uri argument), else $MLFLOW_TRACKING_URI, else sqlite:///mlflow.db"
_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^:/@\s]*):(?P<password>[^@/\s]+)@")
# MLflow's defaults retry an unreachable server for minutes (7 retries, backoff factor 2, 120 s timeouts).
HTTP_DEFAULTS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2", "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
                 "MLFLOW_HTTP_REQUEST_TIMEOUT": "20"}


def shown_uri(text: str) -> str:
    """``text`` with the password of every URI in it masked (``http://user:***@host``): for messages and logs."""
    return _USERINFO.sub(r"\g<head>:***@", text)


def sqlite_path(uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` URI (None for other stores and in-memory databases)."""
    if not uri.startswith("sqlite:///"):
        return None
    path = uri.removeprefix("sqlite:///").split("?", 1)[0]
    return Path(path) if path and path != ":memory:" else None


def cause(error: BaseException) -> str:
    """The first line of an error, passwords and secrets masked, at most 300 characters."""
    text = str(error)
    for sign, said in (("Connection refused", "connection refused"), ("timed out", "timed out"),
                       ("Name or service not known", "unknown host"), ("Max retries exceeded", "no answer")):
        if sign in text:
            return f"the tracking server cannot be reached: {said}, after MLflow's retries"
    database = re.search(r"\((sqlite3\.\w+|psycopg2?\.\w+|pymysql\.\w+)\) ([^\n]+)", text)
    if database:  # SQLAlchemy's first line is often about its session; the driver's says what happened
        return shown_uri(redact(f"{database[1]}: {database[2]}"))[:300]
    if isinstance(error, OSError) and error.strerror:
        text = error.strerror + (f": {error.filename}" if error.filename else "")
    else:
        lines = str(error).strip().splitlines()
        text = lines[0] if lines else ""
    return shown_uri(redact(f"{type(error).__name__}: {text}"))[:300]


def _gone(error: BaseException) -> bool:
    """Whether an error says the store cannot be reached at all (then later calls fail at once)."""
    text = str(error)
    return any(s in text for s in ("Max retries exceeded", "Failed to establish a new connection",
                                   "unable to open database file", "disk I/O error", "Connection refused", "timed out"))


def store_failure(uri: str, step: str, error: BaseException) -> TrackingError:
    return TrackingError(f"MLflow tracking store {shown_uri(uri)}: {step} failed ({cause(error)}). Fix the store "
                         "(free space, permissions, the server), then continue with --resume and the run id; the "
                         f"store is chosen by {URI_ORDER}.")


class GuardedStore:
    """An MLflow client whose every call fails as one `TrackingError` (see Faults in the module docstring)."""

    def __init__(self, client: Any, uri: str) -> None:
        self._mlflow_client, self._uri = client, uri
        self._db = sqlite_path(uri)
        self.broken: TrackingError | None = None

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._mlflow_client, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            if self.broken is not None:
                raise self.broken
            step = name.replace("_", " ")
            if self._db is not None and not self._db.is_file():
                self.broken = TrackingError(
                    f"MLflow tracking store {self._db}: the database is gone (moved or deleted during the run); "
                    f"{step} was not logged. Put the file back and continue with --resume and the run id.")
                raise self.broken
            try:
                return attr(*args, **kwargs)
            except KeyboardInterrupt:
                from memopt.interrupts import cut_short

                if cut_short():  # a held signal outlasted the call: the store stopped answering; do not wait again
                    self.broken = TrackingError(f"MLflow tracking store {shown_uri(self._uri)}: {step} did not "
                                                "answer before the run was interrupted.")
                raise
            except MemoptError:
                raise
            except Exception as e:
                error = store_failure(self._uri, step, e)
                if _gone(e):
                    self.broken = error
                raise error from None

        return call
