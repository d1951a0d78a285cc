"""Evidence seeding: the turns a failed answer should have come from.

The gold evidence turns when the data has them. Otherwise they are retrieved, as MemTrace does, among the
graph's turns (`retrieve_turns`): for each query variant (the question with the expected answer, the question
alone, the expected answer alone) a BM25 ranking (Okapi, k1 1.5, b 0.75, over Porter stems) and a dense ranking
(cosine of the ``embedding`` LM role's vectors, `memopt.lm.embedding`; offline the deterministic local
embedding), all fused by reciprocal rank (each list adds 1 / (60 + rank)); the top ``k`` (default 8) are the
retrieved evidence, whose recall@k `memopt bench evidence` measures against gold evidence.

Attribution starts from a few of them (`pick_evidence`): the retrieved turns stating an item of the expected
answer (its words, dates read against the turn's day, ≥ 60 %); for a computed answer (a quantity no turn states)
the retrieved turns about what the question asks (half its words or more, by weight: rarer words count more);
else the first two. A case so seeded says so (``pseudo_evidence``), and its confidence is lowered.
"""

from __future__ import annotations

import datetime as dt
import math
import weakref
from collections import Counter
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from memopt.attribution.need import gold_pieces, is_quantity, states_quantity, topic_stems
from memopt.attribution.normalise import canonical_dates, item_day, normalise_numbers, reading
from memopt.core.text import content_words, find_dates, overlap, parse_session_date, stem, stem_set
from memopt.lm.embedding import Embedder, LocalEmbedder
from memopt.trace.graph import variables

__all__ = ["EvidenceSettings", "TurnIndex", "graph_index", "retrieve_turns", "pick_evidence", "pseudo_evidence",
           "seed_evidence", "turn_day", "turn_text", "query_variants", "RRF_K"]

RRF_K = 60
_INDEX: weakref.WeakKeyDictionary[nx.DiGraph, tuple[tuple[int, str], TurnIndex]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class EvidenceSettings:
    """How evidence is retrieved when the data has none: how many turns, and the embedder of the dense side."""

    k: int = 8
    embedder: Embedder | None = None

    def embedding(self) -> Embedder:
        """The embedder (the deterministic local one unless another was given)."""
        return self.embedder if self.embedder is not None else LocalEmbedder()


def turn_day(G: nx.DiGraph, node: str) -> dt.date | None:
    """The day a turn was said: its own date (metadata, value) or its session's."""
    d = G.nodes[node]
    value = d.get("value") if isinstance(d.get("value"), dict) else {}
    own = item_day(value, d.get("metadata"), d.get("session_date"))
    if own is not None:
        return own
    for session in G.graph.get("sessions") or ():
        if session.get("index") == value.get("session"):
            return parse_session_date(str(session.get("date_time") or ""))
    return None


def turn_text(G: nx.DiGraph, node: str) -> str:
    """A turn as its speaker said it, dates read against the day it was said (``Speaker: text``)."""
    value = G.nodes[node].get("value")
    if not isinstance(value, dict):
        return str(value)
    return f"{value.get('speaker', '')}: {reading(str(value.get('text', '')), turn_day(G, node))}"


def query_variants(question: str, expected: str) -> list[str]:
    """The queries evidence is retrieved with: question + expected answer, the question, the expected answer."""
    expected = expected or ""
    found = [f"{question} {expected}".strip(), question.strip(), expected.strip()]
    return [q for q in dict.fromkeys(found) if q]


@dataclass
class TurnIndex:
    """Turns ready to be ranked: their ids, texts, BM25 statistics and vectors (of one embedder)."""

    ids: list[str]
    texts: list[str]
    embedder: Embedder
    postings: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    lengths: np.ndarray | None = None
    df: Counter[str] = field(default_factory=Counter)
    vectors: np.ndarray | None = None

    @classmethod
    def build(cls, ids: list[str], texts: list[str], embedder: Embedder) -> TurnIndex:
        """Index turns (ids and their texts, read as `turn_text` reads them)."""
        docs = [Counter(stem(w) for w in content_words(normalise_numbers(t))) for t in texts]
        found: dict[str, tuple[list[int], list[int]]] = {}
        for i, doc in enumerate(docs):
            for term, tf in doc.items():
                at, counts = found.setdefault(term, ([], []))
                at.append(i)
                counts.append(tf)
        postings = {t: (np.asarray(at), np.asarray(counts, dtype=float)) for t, (at, counts) in found.items()}
        vectors = _unit(np.asarray(embedder.embed(texts), dtype=float)) if texts else None
        return cls(list(ids), list(texts), embedder, postings,
                   np.asarray([sum(d.values()) for d in docs], dtype=float),
                   Counter({t: len(at) for t, (at, _) in found.items()}), vectors)

    def bm25(self, query: str) -> list[int]:
        """Turn positions by Okapi BM25 (k1 1.5, b 0.75), best first (turns sharing no word left out)."""
        n = len(self.ids)
        if not n or self.lengths is None:
            return []
        average = float(self.lengths.mean()) or 1.0
        scores = np.zeros(n)
        for term in [stem(w) for w in content_words(normalise_numbers(query))]:
            if term not in self.postings:
                continue
            at, tf = self.postings[term]
            idf = math.log(1 + (n - self.df[term] + 0.5) / (self.df[term] + 0.5))
            scores[at] += idf * tf * 2.5 / (tf + 1.5 * (0.25 + 0.75 * self.lengths[at] / average))
        order = np.argsort(-scores, kind="stable")
        return [int(i) for i in order if scores[i] > 0]

    def dense(self, vector: list[float]) -> list[int]:
        """Turn positions by cosine similarity to a query vector, best first."""
        if self.vectors is None:
            return []
        scores = self.vectors @ _unit(np.asarray([vector], dtype=float))[0]
        return [int(i) for i in np.argsort(-scores, kind="stable")]

    def rank(self, question: str, expected: str = "", *, k: int = 8, how: str = "fused") -> list[str]:
        """The ``k`` best turn ids for the query variants: ``fused`` (reciprocal rank fusion of BM25 and dense over
        every variant), ``bm25`` or ``dense`` alone (fused over the variants)."""
        if not self.ids:
            return []
        variants = query_variants(question, expected)
        vectors = self.embedder.embed(variants) if how != "bm25" else [[] for _ in variants]
        fused: Counter[int] = Counter()
        for variant, vector in zip(variants, vectors, strict=True):
            lists = [*([self.bm25(variant)] if how in ("fused", "bm25") else []),
                     *([self.dense(vector)] if how in ("fused", "dense") else [])]
            for ranking in lists:
                for rank, i in enumerate(ranking, start=1):
                    fused[i] += 1.0 / (RRF_K + rank)
        return [self.ids[i] for i in sorted(fused, key=lambda i: (-fused[i], i))[:k]]


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def graph_index(G: nx.DiGraph, embedder: Embedder) -> TurnIndex:
    """The turn index of a graph (cached on the graph for one embedder until the graph changes size)."""
    cached = _INDEX.get(G)
    key = (G.number_of_nodes(), embedder.spec)
    if cached is not None and cached[0] == key:
        return cached[1]
    turns = [n for n in variables(G, "turn") if G.nodes[n]["version"] == 1]
    index = TurnIndex.build(turns, [turn_text(G, n) for n in turns], embedder)
    _INDEX[G] = (key, index)
    return index


def retrieve_turns(G: nx.DiGraph, question: str, expected: str = "", *, k: int = 8,
                   embedder: Embedder | None = None) -> list[str]:
    """The ``k`` turn variables of the graph most likely to be the evidence, best first (see the module doc)."""
    return graph_index(G, embedder if embedder is not None else LocalEmbedder()).rank(question, expected, k=k)


def _weights(G: nx.DiGraph, embedder: Embedder) -> tuple[dict[str, float], float]:
    index = graph_index(G, embedder)
    n = max(1, len(index.ids))
    return {s: math.log(1 + n / (1 + c)) for s, c in index.df.items()}, math.log(1 + n)


def pick_evidence(G: nx.DiGraph, question: str, expected: str, ranked: list[str],
                  embedder: Embedder | None = None) -> list[str]:
    """The retrieved turns attribution starts from (see the module docstring), best first."""
    index = graph_index(G, embedder if embedder is not None else LocalEmbedder())
    said = dict(zip(index.ids, index.texts, strict=True))
    texts = {t: canonical_dates(normalise_numbers(said.get(t) or turn_text(G, t))) for t in ranked}
    if is_quantity(expected) and not any(states_quantity(expected, texts[t], question) for t in ranked):
        weight, unseen = _weights(G, embedder if embedder is not None else LocalEmbedder())
        asked = topic_stems(question)
        total = sum(weight.get(s, unseen) for s in asked) or 1.0
        about = {t: sum(weight.get(s, unseen) for s in asked & stem_set(texts[t])) / total for t in ranked}
        best = max(about.values(), default=0.0)
        chosen = [t for t in ranked if about[t] >= max(0.5, 0.8 * best)]
        if chosen:
            return chosen
    picked: list[str] = []
    for part in gold_pieces(expected):
        words = canonical_dates(normalise_numbers(part))
        dated = [m for m in find_dates(words) if m.day is not None]
        picked += [t for t in ranked if t not in picked and overlap(words, texts[t]) >= 0.6
                   and all(any(m.matched_by(o) for o in find_dates(texts[t])) for m in dated)]
    return picked or ranked[:2]


def pseudo_evidence(G: nx.DiGraph, question: str, gold: str, k: int = 2) -> tuple[str, ...]:
    """The dia_ids of the ``k`` best retrieved turns for question + gold."""
    return tuple(G.nodes[t]["name"].removeprefix("turn:") for t in retrieve_turns(G, question, gold, k=k))


def seed_evidence(G: nx.DiGraph, question: str, gold: str, evidence: tuple[str, ...],
                  settings: EvidenceSettings | None = None) -> tuple[tuple[str, ...], bool]:
    """(evidence dia_ids, whether they were retrieved): the gold evidence present in the graph, else
    `pick_evidence` among the retrieved turns."""
    present = tuple(e for e in evidence if f"turn:{e}@1" in G)
    if present:
        return present, False
    settings = settings or EvidenceSettings()
    embedder = settings.embedding()
    ranked = retrieve_turns(G, question, gold, k=settings.k, embedder=embedder)
    picked = pick_evidence(G, question, gold, ranked, embedder)
    return tuple(G.nodes[t]["name"].removeprefix("turn:") for t in picked), True
