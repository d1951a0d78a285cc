"""The versioned memory store: versions, append-only rows, past views, search, persistence, events."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor

import pytest

from memopt.core.errors import DataError
from memopt.systems.events import StoreEvent, listen, op_scope
from memopt.systems.store import MemoryStore, MemoryUnit


@pytest.fixture
def store():
    with MemoryStore(name="test") as s:
        yield s


def _ids(hits: list[tuple[MemoryUnit, float]]) -> list[str]:
    return [u.unit_id for u, _ in hits]


def test_add_update_delete_make_versions(store):
    added = store.add("Caroline adopted a puppy.", speaker="Caroline", session_date="8 May 2023",
                      source=["D1:3"], metadata={"kind": "fact"})
    updated = store.update("m1", "Caroline adopted a puppy named Max.", source=["D2:1", "D1:3"])
    deleted = store.delete("m1")

    assert (added.unit_id, added.version, added.action, added.seq) == ("m1", 1, "ADD", 1)
    assert (updated.version, updated.action, updated.seq) == (2, "UPDATE", 2)
    assert updated.speaker == "Caroline" and updated.session_date == "8 May 2023"
    assert updated.source == ("D1:3", "D2:1")
    assert updated.metadata == {"kind": "fact"}
    assert (deleted.version, deleted.action, deleted.deleted) == (3, "DELETE", True)
    assert deleted.text == "Caroline adopted a puppy named Max."
    assert deleted.ref == "test:m1@3"  # the store name is the variable kind
    assert [u.version for u in store.history("m1")] == [1, 2, 3]
    assert store.get("m1", 1).text == "Caroline adopted a puppy."
    assert store.get("m1") == deleted
    assert store.seq == 3


def test_update_replaces_metadata_only_when_given(store):
    store.add("a fact", metadata={"a": 1})
    assert store.update("m1", "b fact").metadata == {"a": 1}
    assert store.update("m1", "c fact", metadata={"b": 2}).metadata == {"b": 2}


def test_unit_ids_follow_creation_order_and_units_lists_deleted_ones(store):
    for n in range(11):
        store.add(f"fact {n}")
    store.delete("m2")
    assert store.units() == [f"m{n}" for n in range(1, 12)]
    assert [u.unit_id for u in store.live()] == ["m1"] + [f"m{n}" for n in range(3, 12)]


def test_custom_id_prefix():
    with MemoryStore(id_prefix="ep") as s:
        assert s.add("an episode").unit_id == "ep1"


def test_nothing_is_overwritten_in_the_table(tmp_path):
    path = tmp_path / "memory.db"
    with MemoryStore(path) as s:
        s.add("Melanie works as a nurse.", source=["D1:1"])
        s.update("m1", "Melanie works as a doctor.")
        s.delete("m1")
    rows = sqlite3.connect(path).execute(
        "SELECT unit_id, version, text, deleted, action, seq, source FROM memory_units ORDER BY seq").fetchall()
    assert rows == [
        ("m1", 1, "Melanie works as a nurse.", 0, "ADD", 1, '["D1:1"]'),
        ("m1", 2, "Melanie works as a doctor.", 0, "UPDATE", 2, '["D1:1"]'),
        ("m1", 3, "Melanie works as a doctor.", 1, "DELETE", 3, '["D1:1"]'),
    ]


def test_rows_cannot_be_changed_behind_the_stores_back(tmp_path):
    path = tmp_path / "memory.db"
    with MemoryStore(path) as s:
        s.add("Melanie works as a nurse.")
    raw = sqlite3.connect(path)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        raw.execute("UPDATE memory_units SET text = 'tampered'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        raw.execute("DELETE FROM memory_units")


def test_live_as_of_shows_the_past(store):
    store.add("fact one")                   # seq 1
    store.add("fact two")                   # seq 2
    store.update("m1", "fact one, revised")  # seq 3
    store.delete("m2")                      # seq 4
    store.add("fact three")                 # seq 5

    def view(as_of=None):
        return [(u.unit_id, u.version) for u in store.live(as_of)]

    assert view(0) == []
    assert view(2) == [("m1", 1), ("m2", 1)]
    assert view(3) == [("m1", 2), ("m2", 1)]
    assert view(4) == [("m1", 2)]
    assert view() == view(5) == view(99) == [("m1", 2), ("m3", 1)]


def test_search_ranks_the_relevant_unit_first(store):
    store.add("Melanie works as a nurse in Boston.")
    store.add("Caroline adopted a puppy named Max.")
    store.add("Caroline went hiking with friends.")
    hits = store.search("What is the name of Caroline's puppy?")
    assert _ids(hits) == ["m2", "m3"]
    assert hits[0][1] > hits[1][1] > 0


def test_search_matches_stems_and_ignores_stopwords(store):
    store.add("Caroline adopted two puppies.")
    store.add("The weather was nice.")
    assert _ids(store.search("adopting a puppy")) == ["m1"]
    assert store.search("the and of") == []
    assert store.search("") == []
    assert store.search("zebra") == []


def test_search_respects_k_and_breaks_ties_by_creation_order(store):
    for _ in range(4):
        store.add("Caroline likes painting.")
    hits = store.search("painting", k=3)
    assert _ids(hits) == ["m1", "m2", "m3"]
    assert len({score for _, score in hits}) == 1
    with pytest.raises(ValueError, match="k must be at least 1"):
        store.search("painting", k=0)


def test_ties_keep_creation_order_among_many_hits(store):
    for n in range(40):
        store.add("Caroline likes painting." if n % 3 else "Caroline paints, painting is her passion.")
    hits = store.search("painting", k=40)
    keys = [(-score, int(unit.unit_id[1:])) for unit, score in hits]
    assert len(hits) == 40 and len({score for _, score in hits}) == 2
    assert keys == sorted(keys)


def test_search_on_empty_store(store):
    assert store.search("anything") == []


def test_search_follows_updates_and_deletes(store):
    store.add("Melanie works as a nurse.")
    store.add("Caroline adopted a puppy.")
    assert _ids(store.search("nurse")) == ["m1"]

    store.update("m1", "Melanie works as a teacher.")
    assert store.search("nurse") == []
    assert _ids(store.search("teacher")) == ["m1"]
    assert store.search("teacher")[0][0].version == 2

    store.delete("m2")
    assert store.search("puppy") == []
    store.add("Caroline adopted another puppy.")
    assert _ids(store.search("puppy")) == ["m3"]


def test_search_as_of_sees_the_past_and_never_deleted_units(store):
    store.add("Melanie works as a nurse.")        # seq 1
    store.update("m1", "Melanie works as a teacher.")  # seq 2
    store.delete("m1")                          # seq 3
    assert [(u.unit_id, u.version) for u, _ in store.search("nurse", as_of=1)] == [("m1", 1)]
    assert store.search("nurse", as_of=2) == []
    assert [(u.unit_id, u.version) for u, _ in store.search("teacher", as_of=2)] == [("m1", 2)]
    assert store.search("teacher") == []
    assert store.search("teacher", as_of=1) == []


def test_a_store_can_move_between_threads(store):
    store.add("Caroline adopted a puppy.")
    with ThreadPoolExecutor(max_workers=1) as pool:
        assert pool.submit(store.add, "Melanie works as a nurse.").result().unit_id == "m2"
        assert _ids(pool.submit(store.search, "nurse").result()) == ["m2"]
    assert [u.unit_id for u in store.live()] == ["m1", "m2"]


def test_persistence_to_a_file_and_reopen(tmp_path):
    path = tmp_path / "memory.db"
    with MemoryStore(path, name="persisted") as s:
        s.add("Melanie works as a nurse.", speaker="Melanie", source=["D1:1"], metadata={"n": 1})
        s.add("Caroline adopted a puppy.")
        s.delete("m2")
    with MemoryStore(str(path), name="persisted") as s:
        assert s.seq == 3
        assert [u.unit_id for u in s.live()] == ["m1"]
        assert s.get("m1").source == ("D1:1",) and s.get("m1").metadata == {"n": 1}
        assert _ids(s.search("nurse")) == ["m1"]
        new = s.add("Caroline painted a sunset.")
        assert (new.unit_id, new.seq) == ("m3", 4)


def test_unopenable_path_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="missing"):
        MemoryStore(tmp_path / "missing" / "memory.db")


def test_unknown_units_and_versions_raise_key_error(store):
    store.add("fact")
    for call in (lambda: store.get("m9"), lambda: store.history("m9"), lambda: store.update("m9", "x"),
                 lambda: store.delete("m9")):
        with pytest.raises(KeyError, match=r"m9.*'test'"):
            call()
    with pytest.raises(KeyError, match="no version 5"):
        store.get("m1", 5)


def test_writes_to_a_deleted_unit_raise_value_error(store):
    store.add("fact")
    store.delete("m1")
    with pytest.raises(ValueError, match="cannot update memory unit m1.*deleted"):
        store.update("m1", "new text")
    with pytest.raises(ValueError, match="cannot delete memory unit m1.*deleted"):
        store.delete("m1")
    assert store.seq == 2


def test_bad_input_is_rejected_without_a_write(store):
    with pytest.raises(ValueError, match="JSON-serialisable"):
        store.add("fact", metadata={"when": object()})
    with pytest.raises(TypeError, match="must be a str"):
        store.add(None)  # type: ignore[arg-type]
    assert store.seq == 0
    assert store.add("fact").unit_id == "m1"


def test_writes_record_their_op(store):
    with op_scope("extract#1"):
        assert store.add("fact").op_id == "extract#1"
        assert store.update("m1", "fact two", op_id="update#7").op_id == "update#7"
    assert store.delete("m1").op_id is None
    assert [u.op_id for u in store.history("m1")] == ["extract#1", "update#7", None]


def test_events_for_writes_and_reads(store):
    events: list[StoreEvent] = []
    with listen(events.append):
        with op_scope("extract#1"):
            store.add("Caroline adopted a puppy.", speaker="Caroline", session_date="8 May 2023", source=["D1:3"])
            store.update("m1", "Caroline adopted a puppy named Max.", op_id="update#2")
        with op_scope("retrieve#3"):
            store.search("puppy", k=2)
            store.live()
        store.delete("m1", op_id="update#4")
    store.add("not heard")

    assert [(e.action, e.op_id, e.seq) for e in events] == [
        ("ADD", "extract#1", 1), ("UPDATE", "update#2", 2), ("SEARCH", "retrieve#3", 2), ("LIVE", "retrieve#3", 2),
        ("DELETE", "update#4", 3),
    ]
    add, update, search, live, delete = events
    assert all(e.kind == "store" and e.store == "test" for e in events)
    assert (add.unit_id, add.version, add.text) == ("m1", 1, "Caroline adopted a puppy.")
    assert add.metadata["speaker"] == "Caroline" and add.metadata["session_date"] == "8 May 2023"
    assert add.metadata["source"] == ("D1:3",)
    assert (update.version, update.text) == (2, "Caroline adopted a puppy named Max.")
    assert search.query == "puppy" and search.results == (("m1", 2),)
    assert search.metadata["k"] == 2 and search.metadata["as_of"] is None and len(search.metadata["scores"]) == 1
    assert live.results == (("m1", 2),)
    assert (delete.unit_id, delete.version) == ("m1", 3)


def test_get_emits_a_read_event(store):
    store.add("fact")
    events: list[StoreEvent] = []
    with listen(events.append), op_scope("answer#1"):
        store.get("m1")
    assert [(e.action, e.op_id, e.results) for e in events] == [("GET", "answer#1", (("m1", 1),))]


def test_no_event_objects_are_built_without_a_listener(store, monkeypatch):
    import memopt.systems.store

    def fail(*args, **kwargs):
        raise AssertionError("StoreEvent built with no listener")

    monkeypatch.setattr(memopt.systems.store, "StoreEvent", fail)
    store.add("fact")
    store.search("fact")
    store.live()
    assert store.seq == 1


def test_update_can_restamp_the_session_date():
    store = MemoryStore()
    unit = store.add("Alex lives in Denver", session_date="8 May 2023")
    moved = store.update(unit.unit_id, "Alex moved to Seattle", session_date="9 June 2023")
    assert moved.session_date == "9 June 2023" and store.get(unit.unit_id, 1).session_date == "8 May 2023"
