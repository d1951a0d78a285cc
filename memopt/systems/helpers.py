"""Helpers memory systems share: how turns and memory items are written into prompts, a store-backed memory.

The shipped systems (``pipelines/``) use them, and so can a plug-in; none of them is required.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memopt.core.text import format_date, overlap, stem_set
from memopt.data.model import Session, Turn
from memopt.systems.store import MemoryStore

__all__ = ["StoreMemory", "session_date", "turn_lines", "item_line", "best_sources"]


@dataclass
class StoreMemory:
    """The memory of one conversation kept in one store, and the store's clock after each session."""

    sample_id: str
    store: MemoryStore
    session_seq: dict[int, int] = field(default_factory=dict)


def session_date(session: Session) -> str:
    """The session's date as LoCoMo writes dates ("8 May 2023"), or its raw date_time."""
    return format_date(session.date) if session.date else session.date_time


def turn_lines(turns: tuple[Turn, ...] | list[Turn], *, ids: bool = False) -> str:
    """Turns as prompt lines: 'Speaker: text' (with a '[dia_id] ' prefix when ``ids``)."""
    return "\n".join((f"[{t.dia_id}] " if ids else "") + f"{t.speaker}: {t.text}" for t in turns)


def item_line(date: str | None, text: str) -> str:
    """One context item: '[date] text'."""
    return f"[{date}] {text}" if date else text


def best_sources(text: str, turns: tuple[Turn, ...] | list[Turn]) -> list[str]:
    """The dia_ids of the turns a derived text most likely came from (lexical overlap, ties kept)."""
    target = stem_set(text)
    scored = [(overlap(target, t.text), t.dia_id) for t in turns]
    best = max((s for s, _ in scored), default=0.0)
    return [d for s, d in scored if best > 0 and s == best]

