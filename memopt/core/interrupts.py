"""Ctrl-C and SIGTERM: both end a command the same clean way, and never in the middle of a bookkeeping step.

- `handle_sigterm` makes SIGTERM raise `KeyboardInterrupt` like Ctrl-C does, so the same cleanup
  runs for both (MLflow runs end KILLED, the checkpoint stays resumable, servers stop). The CLI
  installs it; `interrupted_by` says which signal came last, for the message and the exit code
  (130 for SIGINT, 143 for SIGTERM).
- `deferred` holds both signals during a short step that must not be cut in half (creating or
  ending an MLflow run, writing the checkpoint) and raises `KeyboardInterrupt` right after it when
  one arrived. It holds a signal for at most `GRACE_SECONDS`: a step still running then (an MLflow
  call waiting on a tracking server that stopped answering) is interrupted, so a signal is always
  honoured within seconds. Python runs signal handlers in the main thread only; elsewhere it does
  nothing.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["handle_sigterm", "interrupted_by", "deferred", "exit_code", "cut_short", "GRACE_SECONDS"]

GRACE_SECONDS = 5.0

_last: list[int] = []
_cut: list[bool] = []


def _record(signum: int) -> None:
    _last[:] = [signum]


def _on_sigterm(signum: int, frame: Any) -> None:
    _record(signum)
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def _on_sigint(signum: int, frame: Any) -> None:
    _record(signum)
    raise KeyboardInterrupt


def handle_sigterm() -> None:
    """Make SIGTERM (and SIGINT) raise `KeyboardInterrupt`, remembering which one came (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return
    signal.signal(signal.SIGTERM, _on_sigterm)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)


def interrupted_by() -> str:
    """The name of the last signal that interrupted this process (``SIGINT`` when none was recorded)."""
    return signal.Signals(_last[0]).name if _last else "SIGINT"


def exit_code() -> int:
    """The conventional exit code for the last interrupting signal: 128 + its number."""
    return 128 + (_last[0] if _last else signal.SIGINT)


def cut_short() -> bool:
    """Whether a `deferred` step of this process was interrupted because it outlasted `GRACE_SECONDS`."""
    return bool(_cut)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM during the block; raise `KeyboardInterrupt` after it if one arrived."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def hold(signum: int, frame: Any) -> None:
        if not caught:  # the step gets GRACE_SECONDS to finish, then is interrupted
            signal.setitimer(signal.ITIMER_REAL, GRACE_SECONDS)
        caught.append(signum)

    def overdue(signum: int, frame: Any) -> None:
        _cut[:] = [True]
        _record(caught[-1])
        raise KeyboardInterrupt(f"signal {signal.Signals(caught[-1]).name}")

    previous = {s: signal.signal(s, hold) for s in (signal.SIGINT, signal.SIGTERM)}
    previous[signal.SIGALRM] = signal.signal(signal.SIGALRM, overdue)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        for s, handler in previous.items():
            signal.signal(s, handler)
    if caught:
        _record(caught[-1])
        raise KeyboardInterrupt(f"signal {signal.Signals(caught[-1]).name}")
