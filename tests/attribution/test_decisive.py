"""Which loss memtrace blames when several ops lost a piece: an extraction that came out empty is the loss itself
(not the segmenter that steered it, nor a later extractor that wrote other facts)."""

from __future__ import annotations

import pytest

from tests.attribution.shapes import Native, blame_native

ITALY = "What did Gina visit in Italy?"


def _memcells(facts: list[str]) -> Native:
    """An EverMemOS-shaped ingest: a segmenter steering two extractors of one MemCell; the episode came out empty
    and the fact extractor wrote ``facts`` (none holding the Colosseum)."""
    n = Native("gina", {"segment": ["extraction"], "episode": ["extraction"], "facts": ["extraction"],
                        "retrieve": ["retrieval"], "answer": ["response"]}, ["2 May, 2023"])
    for name in ("episode", "facts"):
        n.G.graph["operations"][name]["steered_by"] = ["segment"]
    turns = [n.turn("D1:1", "Diego", "Anything new on your end?", 1),
             n.turn("D1:2", "Gina", "I went to Italy last Tuesday, the highlight was the Colosseum.", 1)]
    n.op("segment:gina:S1", "segment", turns, [])
    n.op("episode:gina:S1.M0", "episode", turns, [])
    units = n.op("facts:gina:S1.M0", "facts", turns,
                 [(f"fact:f{i}@1", text, {"action": "ADD"}) for i, text in enumerate(facts, start=1)])
    n.case("q1", ITALY, "Colosseum", ["D1:2"])
    q = n.question("q1", ITALY)
    (context,) = n.op("retrieve:gina:q1", "retrieve", [q, *units], [("context:gina:q1@1", "\n".join(facts), {})])
    n.op("answer:gina:q1", "answer", [q, context], [("answer:gina:q1@1", "the Vatican", {})])
    return n


@pytest.mark.parametrize("facts", [[], ["Gina went to Italy the Tuesday before 2 May 2023"]])
def test_an_extraction_that_came_out_empty_is_blamed_not_its_segmenter_or_a_later_extractor(facts):
    assert blame_native(_memcells(facts).G, "q1") == ("ExtractionError", "episode:gina:S1.M0")
