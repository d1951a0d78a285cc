"""The exception a user can cause: bad config, bad data, unknown pipeline, missing file, LM failure.

Every error a user can fix is a `MemoptError` whose message names the file / key / case and says
what to do. The CLI prints the message alone (no traceback) and exits with code 2.
"""

from __future__ import annotations

__all__ = ["one_line", "MemoptError", "DataError", "ConfigError", "LMError", "PromptError", "PluginError",
           "EvaluationFailed", "PromptCheckFailed", "TrackingError", "StorageError"]


class MemoptError(Exception):
    """A problem the user can fix; the message says where and what to do."""

    exit_code = 2


class DataError(MemoptError):
    """Malformed or missing input data (names the file and the JSON path)."""


class ConfigError(MemoptError):
    """A bad option, LM spec, or experiment file (names the key)."""


class LMError(MemoptError):
    """An LM could not be reached or answered unusably (names the LM spec)."""


class PromptError(MemoptError):
    """A missing or malformed prompt file or directory (names the path)."""


class PluginError(ConfigError):
    """A memory system that cannot be registered or loaded (names the system, its op or its entry point)."""


class EvaluationFailed(MemoptError):
    """More than the allowed share of an evaluation's cases errored (names the split, the counts, the first error)."""

    exit_code = 1


class PromptCheckFailed(MemoptError):
    """The prompt check found a blocking issue in prompts about to be exported (the work ran but failed its bar)."""

    exit_code = 1


class TrackingError(MemoptError):
    """The MLflow tracking store failed mid-run (gone, full, read-only, unreachable; names the store and the step)."""


class StorageError(MemoptError):
    """The Optuna storage of a team run failed mid-run (names the storage, the step and how to go on)."""


def one_line(exc: BaseException) -> str:
    """An exception as one line: its message's first non-empty line (prefixed by its type unless it is memopt's)."""
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "no message")
    return first if isinstance(exc, MemoptError) else f"{type(exc).__name__}: {first}"
