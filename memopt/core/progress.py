"""A live progress line within each optimization round: phase, cases done / total, calls/s, spend, elapsed, ETA.

`RoundProgress` draws one rich progress line on the console while it is open, and nothing at all
when the console is not a terminal (tests, CI, pipes): no line, no refresh thread. Phases come from
the scorer (``round 2/4 · train``, ``round 2/4 · attribute``, ``round 2/4 · trials 1–4 of 8``,
``round 2/4 · report val + test``); cases are counted as they finish, across threads. A phase started
with a total keeps it (its denominator never grows); one started without grows as evaluations join
it. Calls/s is the rate of LM calls since the line opened; spend is calls made so far and dollars
(LiteLLM's prices, or "$0 (simulated)"); elapsed is the run's wall time, and once a round has ended
(`round_done`) the ETA is the mean time per round so far times the rounds left.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["RoundProgress", "clock"]


class RoundProgress:
    """The live line (``with RoundProgress(console, usage, cost_label): ...``); quiet when not a TTY."""

    def __init__(self, console: Any, usage: Callable[[], Any], spend: Callable[[Any], str]) -> None:
        self.enabled = bool(console.is_terminal)
        self._usage = usage
        self._spend = spend
        self._lock = threading.Lock()
        self._started = time.perf_counter()
        self._bar: Any = None
        self._task: Any = None
        self._fixed = False
        self._rounds: tuple[int, int] | None = None  # (rounds done in this process, rounds left)
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self._bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[rate]}"), console=console, transient=True)
            self._task = self._bar.add_task("starting", total=None, rate="")

    def __enter__(self) -> RoundProgress:
        if self.enabled:
            self._started = time.perf_counter()
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self._bar.stop()

    def _rate(self) -> str:
        usage = self._usage()
        seconds = max(1e-6, time.perf_counter() - self._started)
        return (f"{usage.calls / seconds:.1f} calls/s · {usage.made} calls made · {self._spend(usage)} · "
                f"elapsed {clock(seconds)}" + (f" · ETA {eta}" if (eta := self.eta(seconds)) else ""))

    def eta(self, seconds: float) -> str:
        """The expected time left (``~3m20s``), once a round has ended; "" before."""
        if not self._rounds or not self._rounds[0]:
            return ""
        done, left = self._rounds
        return f"~{clock(seconds / done * left)}" if left else "0s"

    def round_done(self, done: int, left: int) -> None:
        """``done`` rounds have ended in this process (round 0 included), ``left`` remain: the ETA's basis."""
        self._rounds = (done, left)

    def phase(self, name: str, total: int) -> None:
        """Start a phase of ``total`` cases (a fixed denominator), or of none yet (0: it grows)."""
        if self.enabled:
            with self._lock:
                self._fixed = bool(total)
                self._bar.reset(self._task, total=total or None, description=name, rate=self._rate())
                self._bar.tasks[0].total = total or None  # reset(total=None) would keep the last phase's total

    def grow(self, total: int) -> None:
        """Add ``total`` cases to the current phase, unless it was started with a fixed total."""
        if self.enabled and not self._fixed:
            with self._lock:
                current = self._bar.tasks[0].total or 0
                self._bar.update(self._task, total=current + total)

    def advance(self, n: int = 1) -> None:
        """Count ``n`` cases done."""
        if self.enabled:
            with self._lock:
                self._bar.update(self._task, advance=n, rate=self._rate())


def clock(seconds: float) -> str:
    """A duration for people: ``45s``, ``3m20s``, ``1h05m``."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
