"""Which loss memtrace blames when several ops lost a piece: an extraction that came out empty is the loss itself
(not the segmenter that steered it, nor a later extractor that wrote other facts), and a loss the store recovered
from (a unit holding the piece written after it) is not the decisive one."""

from __future__ import annotations

import pytest

from tests.attribution.shapes import Native, blame_native

ITALY = "What did Gina visit in Italy?"
QUIT = "Which sport did Zane quit?"


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


def _quit(delete: bool) -> Native:
    """Squash is overwritten by badminton (a loss), then stored again when Zane says he quit it; that unit is then
    overwritten (or deleted) before the question."""
    n = Native("zane", {"update": ["update"], "search": ["retrieval"], "answer": ["response"]},
               ["2 May, 2023", "9 May, 2023", "16 May, 2023", "23 May, 2023"])
    t1 = n.turn("D1:1", "Zane", "I play squash every Sunday with my sister Ada.", 1)
    (squash,) = n.op("update:zane:S1", "update", [t1], [("memory:m1@1", "Zane plays squash every Sunday with his "
                                                                       "sister Ada", {"action": "ADD"})])
    t2 = n.turn("D2:1", "Zane", "I play badminton every Thursday with my cousin Lena.", 2)
    (badminton,) = n.op("update:zane:S2", "update", [t2, squash], [(
        "memory:m1@2", "Zane plays badminton every Thursday with his cousin Lena", {"action": "UPDATE"})])
    t3 = n.turn("D3:1", "Zane", "I quit squash, my knees could not take it any more.", 3)
    (quit_,) = n.op("update:zane:S3", "update", [t3], [("memory:m2@1", "Zane no longer plays squash",
                                                        {"action": "ADD"})])
    t4 = n.turn("D4:1", "Zane", "I signed up for salsa classes last Wednesday.", 4)
    (salsa,) = n.op("update:zane:S4", "update", [t4, quit_], [(
        "memory:m2@2", "Zane no longer plays squash" if delete else "Zane signed up for salsa classes",
        {"action": "DELETE", "deleted": True} if delete else {"action": "UPDATE"})])
    n.case("q1", QUIT, "squash", ["D1:1", "D3:1"])
    q = n.question("q1", QUIT)
    (context,) = n.op("search:zane:q1", "search", [q, badminton, *([] if delete else [salsa])],
                      [("context:zane:q1@1", "Zane plays badminton every Thursday with his cousin Lena", {})])
    n.op("answer:zane:q1", "answer", [q, context], [("answer:zane:q1@1", "badminton", {})])
    return n


@pytest.mark.parametrize(("delete", "error_type"), [(False, "UpdateError"), (True, "DeletionError")])
def test_a_loss_the_store_recovered_from_is_not_the_decisive_one(delete, error_type):
    """Squash left the store at S2 but was stored again at S3: the loss at S4 kept it from the question."""
    assert blame_native(_quit(delete).G, "q1") == (error_type, "update:zane:S4")


PHOTOGRAPHY = "When did Gina start photography?"


def _dated_facts(said: str) -> Native:
    """Two facts in the context, each with a date as the extractor writes it; the answer took the wrong one's
    date. The first fact was written from a turn saying ``said``."""
    n = Native("gina", {"facts": ["extraction"], "retrieve": ["retrieval"], "answer": ["response"]},
               ["2 May, 2023", "5 June, 2023"])
    t1 = n.turn("D1:1", "Gina", said, 1)
    (italy,) = n.op("facts:gina:S1", "facts", [t1], [("fact:f1@1", "Gina went to Italy the Tuesday before 2 May 2023",
                                                      {"action": "ADD"})])
    t2 = n.turn("D2:1", "Gina", "I picked up photography last Wednesday, mostly street shots.", 2)
    (photo,) = n.op("facts:gina:S2", "facts", [t2], [(
        "fact:f2@1", "Gina picked up photography the Wednesday before 5 June 2023", {"action": "ADD"})])
    n.case("q1", PHOTOGRAPHY, "the Wednesday before 5 June 2023", ["D2:1"])
    q = n.question("q1", PHOTOGRAPHY)
    (context,) = n.op("retrieve:gina:q1", "retrieve", [q, italy, photo], [(
        "context:gina:q1@1", "Gina went to Italy the Tuesday before 2 May 2023\n"
                             "Gina picked up photography the Wednesday before 5 June 2023", {})])
    n.op("answer:gina:q1", "answer", [q, context], [("answer:gina:q1@1", "the Tuesday before 2 May 2023", {})])
    return n


@pytest.mark.parametrize(("said", "expected"), [
    ("I went to Italy last Tuesday, the highlight was the Colosseum.", ("ResponseError", "answer:gina:q1")),
    ("I love old Italian movies, especially on rainy days.", ("ExtractionError", "facts:gina:S1")),
])
def test_a_fact_its_turn_states_with_the_date_in_another_form_is_not_made_up(said, expected):
    """"the Tuesday before 2 May 2023" is the turn's "last Tuesday" (read as 25 April 2023), and the fact names the
    speaker the turn says "I" for: the answer that took its date is the fault; a fact no turn states is made up."""
    assert blame_native(_dated_facts(said).G, "q1") == expected
