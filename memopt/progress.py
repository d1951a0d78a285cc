"""A live progress line within each optimization round: phase, cases done / total, calls/s, spend so far.

`RoundProgress` draws one rich progress line on the console while it is open, and nothing at all
when the console is not a terminal (tests, CI, pipes): no line, no refresh thread. Phases come from
the scorer (``round 2 · train``, ``round 2 · attribute``, ``round 2 · trials 1–4 of 8``,
``round 2 · report val + test``); cases are counted as they finish, across threads. Calls/s is the
rate of LM calls since the line opened; spend is calls made so far and dollars (LiteLLM's prices, or
"$0 (simulated)").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["RoundProgress"]


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
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), console=console,
                                 transient=True)
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
        return f"{usage.calls / seconds:.1f} calls/s · {usage.made} calls made · {self._spend(usage)}"

    def phase(self, name: str, total: int) -> None:
        """Start a phase of ``total`` cases."""
        if self.enabled:
            with self._lock:
                self._bar.reset(self._task, total=total or None, description=name, rate=self._rate())

    def grow(self, total: int) -> None:
        """Add ``total`` cases to the current phase."""
        if self.enabled:
            with self._lock:
                current = self._bar.tasks[0].total or 0
                self._bar.update(self._task, total=current + total)

    def advance(self, n: int = 1) -> None:
        """Count ``n`` cases done."""
        if self.enabled:
            with self._lock:
                self._bar.update(self._task, advance=n, rate=self._rate())
