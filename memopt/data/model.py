"""The data every stage reads: conversations, their dated sessions and turns, and question cases.

LoCoMo is the lingua franca; these types are a typed view of one LoCoMo sample. They are frozen
plain dataclasses so they hash, compare and cross thread boundaries cheaply.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

__all__ = ["Turn", "Session", "Case", "Conversation", "CATEGORIES", "NOT_MENTIONED"]

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial / abstention",
              # LongMemEval's question types (memopt.data.longmemeval); its abstention questions are 5
              6: "single-session-user", 7: "single-session-assistant", 8: "single-session-preference",
              9: "temporal-reasoning", 10: "knowledge-update", 11: "multi-session"}
NOT_MENTIONED = "Not mentioned"


@dataclass(frozen=True)
class Turn:
    """One utterance: ``dia_id`` is LoCoMo's id ("D4:12" = session 4, turn 12)."""

    dia_id: str
    speaker: str
    text: str
    session: int


@dataclass(frozen=True)
class Session:
    """One dated session of a conversation."""

    index: int
    date_time: str
    date: dt.date | None
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Case:
    """One question about a conversation, with its gold answer and evidence turns."""

    case_id: str
    sample_id: str
    question: str
    gold: str
    evidence: tuple[str, ...]
    category: int
    adversarial_answer: str | None = None
    question_date: str | None = None  # when the question is asked ("now" for "how many days ago"; LongMemEval)

    @property
    def category_name(self) -> str:
        """Human name of the category (LoCoMo's "temporal", ..., LongMemEval's "knowledge-update", ...)."""
        return CATEGORIES.get(self.category, str(self.category))


@dataclass(frozen=True)
class Conversation:
    """A LoCoMo sample: two speakers, dated sessions, and the question cases about them."""

    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: tuple[Session, ...]
    cases: tuple[Case, ...] = field(default=())

    @property
    def turns(self) -> list[Turn]:
        """All turns in session order."""
        return [t for s in self.sessions for t in s.turns]

    def turn(self, dia_id: str) -> Turn:
        """The turn with this dia_id (KeyError if absent)."""
        for s in self.sessions:
            for t in s.turns:
                if t.dia_id == dia_id:
                    return t
        raise KeyError(f"{self.sample_id}: no turn {dia_id!r}")

    def session_of(self, dia_id: str) -> Session:
        """The session holding the turn with this dia_id."""
        return self.sessions_by_index()[self.turn(dia_id).session]

    def sessions_by_index(self) -> dict[int, Session]:
        """Sessions keyed by their LoCoMo index (session_N)."""
        return {s.index: s for s in self.sessions}
