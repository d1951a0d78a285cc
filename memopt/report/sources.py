"""What a report and the labelling page read: attributed failures, each on its conversation's graph.

A `Diagnosis` is the attributions of one set of failures (an optimize round, a `memopt run` or `memopt attach`
trace directory, a MemTraceBench directory) with the graphs they were made on. `load_diagnosis` reads a
directory: its graphs (``DIR/*.json[.gz]``, and ``DIR/<split>/*.json`` as MemTraceBench keeps them; memopt's own
or smartcomment graphs, told by content) and an ``attributions.jsonl`` (`memopt attribute`'s; lines may carry
more fields than `memopt.attribution.types.Attribution` has: they are kept in `DiagnosedCase.extras`).
`diagnosis_of_cases` builds one from the attributed `FailedCase` s of an optimize round.

Nothing here runs a system: the question, the expected answer, the prediction and the date of each case come
from its graph (``G.graph["cases"]``, the answer variable, the sessions), or from the attribution line when it
carries them. A graph file that cannot be read is kept in `Diagnosis.damaged` (file → message); the cases on it
are left out of `Diagnosis.cases` and listed in `Diagnosis.unplaced`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import networkx as nx

from memopt.attribution.evidence import seed_evidence
from memopt.attribution.types import Attribution
from memopt.core.errors import DataError, MemoptError
from memopt.core.files import loads_json, read_text, safe_name
from memopt.trace.graph import answer_of
from memopt.trace.memtracebench import open_graph

__all__ = ["ATTRIBUTIONS_FILE", "DiagnosedCase", "Diagnosis", "read_attribution_lines", "graph_files_under",
           "load_diagnosis", "diagnosis_of_cases"]

ATTRIBUTIONS_FILE = "attributions.jsonl"
_FIELDS = frozenset(f.name for f in fields(Attribution))


@dataclass
class DiagnosedCase:
    """One attributed failure and what a reader needs of it: question, expected answer, prediction, date."""

    attribution: Attribution
    graph: str
    key: str
    question: str
    expected: str
    prediction: str
    date: str
    evidence: tuple[str, ...] = ()
    pseudo_evidence: bool = False
    category: Any = None
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def case_id(self) -> str:
        """The case id (``conv-30:q12``)."""
        return self.attribution.case_id


@dataclass
class Diagnosis:
    """Attributed failures and the graphs they were made on (see the module docstring)."""

    source: str
    kind: str
    cases: list[DiagnosedCase]
    graphs: dict[str, nx.DiGraph]
    damaged: dict[str, str] = field(default_factory=dict)
    unplaced: list[str] = field(default_factory=list)
    flagged: frozenset[str] = frozenset()
    behind: int = 0
    rounds: list[dict[str, Any]] = field(default_factory=list)
    cost: dict[str, Any] = field(default_factory=dict)

    @property
    def pipeline(self) -> str | None:
        """The memory system of the graphs (the first that names one)."""
        return next((p for G in self.graphs.values() if (p := G.graph.get("pipeline"))), None)

    def graph_of(self, case: DiagnosedCase) -> nx.DiGraph:
        """The graph a case was attributed on."""
        return self.graphs[case.graph]


def read_attribution_lines(path: str | Path) -> list[tuple[Attribution, dict[str, Any]]]:
    """Attributions of a JSON-lines file and, for each, the fields of its line `Attribution` does not have."""
    text = read_text(path, missing=f"no such attributions file; write one with `memopt attribute --out {path}`.")
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = loads_json(line)
            if not isinstance(raw, dict):
                raise TypeError(f"a JSON {type(raw).__name__}, not an object")
            known = {k: v for k, v in raw.items() if k in _FIELDS}
            out.append((Attribution.from_dict(known), {k: v for k, v in raw.items() if k not in _FIELDS}))
        except (json.JSONDecodeError, TypeError, ValueError) as e:
            raise DataError(f"{path}: line {n}: not an attribution ({e}).") from None
    return out


def graph_files_under(directory: str | Path) -> list[Path]:
    """The graph files of a directory: ``*.json`` / ``*.json.gz`` in it and in its sub-directories (splits)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise DataError(f"{directory}: no such directory; pass a trace directory (`memopt run --trace DIR`, "
                        "`memopt attach mem0 --trace DIR`) or a MemTraceBench directory (DIR/<split>/*.json).")
    found = [p for pattern in ("*.json", "*.json.gz", "*/*.json", "*/*.json.gz") for p in directory.glob(pattern)]
    root = directory.resolve()
    return sorted(p for p in found if p.is_file() and p.resolve().is_relative_to(root))


def _read_graphs(directory: Path) -> tuple[dict[str, nx.DiGraph], dict[str, str]]:
    graphs, damaged = {}, {}
    for path in graph_files_under(directory):
        name = path.relative_to(directory).as_posix()
        try:
            graphs[name] = open_graph(path)
        except MemoptError as e:
            damaged[name] = str(e)
        except Exception as e:  # noqa: BLE001 — a graph that breaks the reader is damaged, not a crash
            damaged[name] = f"{path}: unreadable graph ({type(e).__name__}: {e})."
    return graphs, damaged


def _case_of(attribution: Attribution, extras: dict[str, Any], name: str, G: nx.DiGraph,
             recorded: dict[str, Any], evidence: tuple[str, ...] | None = None,
             pseudo: bool | None = None) -> DiagnosedCase:
    key = str(recorded.get("key") or attribution.case_id.rsplit(":", 1)[-1])
    question = str(extras.get("question") or recorded.get("question") or "")
    expected = str(extras.get("gold") or extras.get("expected") or recorded.get("gold") or "")
    answer = answer_of(G, key)
    prediction = extras.get("prediction")
    if prediction is None:
        value = G.nodes[answer].get("value") if answer is not None else ""
        prediction = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    sessions = G.graph.get("sessions") or []
    date = str(extras.get("date") or recorded.get("question_date") or (sessions[-1].get("date_time") if sessions
                                                                       else "") or "")
    if evidence is None:
        evidence, pseudo = seed_evidence(G, question, expected, tuple(recorded.get("evidence") or ()))
    return DiagnosedCase(attribution, name, key, question, expected, str(prediction), date, tuple(evidence),
                         bool(pseudo), recorded.get("category"), extras)


def load_diagnosis(directory: str | Path, *, attributions: str | Path | None = None, kind: str | None = None,
                   flagged: frozenset[str] = frozenset()) -> Diagnosis:
    """The attributed failures of a trace or MemTraceBench directory (attributions: ``DIR/attributions.jsonl``
    unless given); ``flagged`` cases (labelled as no memory failure) are left out."""
    directory = Path(directory)
    graphs, damaged = _read_graphs(directory)
    if not graphs and not damaged:
        raise DataError(f"{directory}: no graph files (*.json) in it or in its sub-directories; write graphs with "
                        "`memopt run --trace DIR` or `memopt attach mem0 --trace DIR`.")
    path = Path(attributions) if attributions is not None else directory / ATTRIBUTIONS_FILE
    if attributions is None and not path.is_file():
        raise DataError(f"{path}: no attributions beside the graphs; write them with `memopt attribute --results "
                        f"RESULTS --trace {directory} --out {path}` (or pass --attributions FILE).")
    lines = read_attribution_lines(path)
    placed = {str(c["case_id"]): (name, G, c) for name, G in graphs.items() for c in G.graph.get("cases") or []
              if isinstance(c, dict) and "case_id" in c}
    cases, unplaced, behind = [], [], 0
    for attribution, extras in lines:
        if attribution.case_id in flagged:
            continue
        if attribution.masked_by:  # a fault behind the first: counted apart, as `memopt attribute` does
            behind += 1
            continue
        if attribution.case_id not in placed:
            unplaced.append(attribution.case_id)
            continue
        name, G, recorded = placed[attribution.case_id]
        cases.append(_case_of(attribution, extras, name, G, recorded))
    if unplaced and not damaged:
        raise DataError(f"{path}: {len(unplaced)} attributed case(s) have no graph in {directory} (e.g. "
                        f"{unplaced[0]}); pass the trace directory the attributions were made on.")
    if kind is None:
        first = next(iter(graphs.values()), None)
        kind = ("attach" if first is not None and first.graph.get("source") else
                "memtracebench" if any("/" in name for name in graphs) or (
                    first is not None and first.graph.get("graph_id")) else "trace")
    return Diagnosis(f"{directory} ({path.name})", kind, cases, graphs, damaged, unplaced, flagged, behind)


def diagnosis_of_cases(pairs: list[tuple[Any, Attribution]], *, source: str,
                       flagged: frozenset[str] = frozenset()) -> Diagnosis:
    """A diagnosis of attributed `memopt.attribution.case.FailedCase` s (an optimize round's), their graphs in
    memory, named ``<conversation>.json``."""
    graphs: dict[str, nx.DiGraph] = {}
    cases, behind = [], 0
    for failed, attribution in pairs:
        if attribution.case_id in flagged:
            continue
        if attribution.masked_by:
            behind += 1
            continue
        G = failed.G
        name = safe_name(str(G.graph.get("conversation") or failed.case_id.rsplit(":", 1)[0]), ".json")
        graphs.setdefault(name, G)
        recorded = next((c for c in G.graph.get("cases") or [] if c.get("case_id") == failed.case_id), {})
        extras = {"question": failed.question, "gold": failed.gold, "prediction": failed.prediction}
        cases.append(_case_of(attribution, extras, name, G, recorded, failed.evidence, failed.pseudo_evidence))
    return Diagnosis(source, "optimize", cases, graphs, flagged=flagged, behind=behind)
