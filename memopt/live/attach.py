"""`attach_mem0`: run a user's own Mem0 (their config) on LoCoMo-format conversations under the tap, and
write what `memopt attribute` and `memopt show` read: one evolution graph per conversation and a results file.

- **Config**: the user's Mem0 config (YAML or JSON; a whole config or what ``memopt export --format mem0``
  writes), checked against the installed Mem0 first (`check_config`: a key that major does not know, such as
  2.x's ``custom_instructions`` on 1.0.x or a typo, is one error naming it; Mem0 itself would ignore it and run
  its defaults). With ``offline``, its ``llm``, ``embedder``, ``vector_store``, ``history_db_path``,
  ``graph_store`` and ``reranker`` are replaced as `memopt mem0 check` replaces them (SimLM over a
  loopback ``memopt serve`` server started here, lexical embeddings, a local Qdrant in a temporary
  directory removed at the end), with telemetry off and ``MEM0_DIR`` in that directory. Without it, Mem0
  runs exactly as configured (its own LLM, stores and network) and writes the data set into the stores the
  config names: that takes ``write_stores`` (``--yes``), and a warning says where. A Mem0 that cannot start
  (no API key for its LLM or embedder) is one error saying what to set, or to use ``offline``.
- **Feeding**: as `memopt mem0 check`: one ``user_id`` per conversation, one ``Memory.add`` per session,
  ``{session_date}`` in the custom extraction prompt (1.x) or ``custom_instructions`` (2.x) replaced by
  the session's date before each add, the date in each memory's metadata. 2.x dates what it extracts by the
  day of the call ("Observation Date") unless its instructions say otherwise: instructions without the
  placeholder (the ``mem0-v2`` export) get the line ``Today's date is <session date>.`` appended for each
  session, so the history is dated as the conversation was. The tap notes each session's
  dialogue ids, so facts and memories link back to LoCoMo turns.
- **Answering**: per question, ``Memory.search`` (top ``top_k``) gives the context, preceded by the question's
  own date when it has one (``Current date: ...``, LongMemEval's ``question_date``, as memopt's pipelines give
  it); the answer is the application's (``answers``: a JSONL file of ``{"case_id" | "question", "answer"}``)
  or memopt's ``answer`` op on ``lm`` with ``answer_prompt`` (default: the seed prompt of memopt's mem0 system).
- **Output**: ``trace_dir/records.jsonl`` (the recording), ``trace_dir/<sample id>.json`` (graphs built
  from the recording alone), and a `memopt.evaluate.run.RunResult` (pipeline ``mem0``, judged by SimLM's
  lexical rules) whose ``run_id`` the graphs carry.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from memopt.core.errors import ConfigError, DataError, LMError
from memopt.core.files import loads_json
from memopt.data.model import Conversation
from memopt.evaluate.run import CaseResult, RunResult
from memopt.lm.spec import LMSpec, sim_spec, spec_list

__all__ = ["attach_mem0", "check_config", "load_config", "load_answers", "stores_of", "RECORDING"]

RECORDING = "records.jsonl"
_PLACEHOLDER = "{session_date}"
_TEMPLATES = {1: "custom_fact_extraction_prompt", 2: "custom_instructions"}
SIM = sim_spec()


def load_config(path: str | Path) -> dict[str, Any]:
    """A Mem0 config from a YAML or JSON file; anything but a mapping is a `ConfigError` naming the file."""
    import yaml

    from memopt.core.files import load_yaml

    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"--config {path}: no such file; pass your Mem0 config (YAML or JSON), or write one with "
                          f"memopt export SOURCE --format mem0 --out {path}.")
    try:
        value = load_yaml(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, RecursionError) as e:
        raise ConfigError(f"--config {path}: not a text YAML or JSON file ({type(e).__name__}).") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigError(f"--config {path}: not valid YAML or JSON ({getattr(e, 'problem', None) or 'unreadable'}"
                          f"{where}).") from None
    if not isinstance(value, dict):
        raise ConfigError(f"--config {path}: expected a mapping (a Mem0 config), got {type(value).__name__}.")
    return value


def load_answers(path: str | Path) -> dict[str, str]:
    """The application's answers: ``{case_id or question: answer}`` from a JSONL file."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"--answers {path}: no such file (one JSON object per line: case_id or question, answer).")
    out: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DataError(f"--answers {path}: not UTF-8 text (one JSON object per line: case_id or question, "
                        "answer).") from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = loads_json(line)
        except json.JSONDecodeError as e:
            raise DataError(f"--answers {path}:{number}: not valid JSON ({e.msg}).") from None
        if not isinstance(row, dict) or "answer" not in row or not (row.get("case_id") or row.get("question")):
            raise DataError(f"--answers {path}:{number}: expected {{\"case_id\" or \"question\", \"answer\"}}.")
        out[str(row.get("case_id") or row["question"])] = str(row["answer"])
    return out


def check_config(config: dict[str, Any], version: str) -> None:
    """Refuse a key the installed Mem0 does not know (one `ConfigError` naming it; Mem0 would ignore it)."""
    from mem0.configs.base import MemoryConfig

    major = version.split(".", 1)[0]
    known = set(MemoryConfig.model_fields) | {"memopt"}  # memopt: the knobs block of `memopt export`
    unknown = sorted(set(config) - known)
    if not unknown:
        return
    key = unknown[0]
    if key == "custom_instructions" and major == "1":
        fix = ("a mem0ai 2.x key; 1.0.x would ignore it and run its default extraction prompt: export the prompts "
               "with --format mem0 (custom_fact_extraction_prompt and custom_update_memory_prompt)")
    elif key in ("custom_fact_extraction_prompt", "custom_update_memory_prompt") and major != "1":
        fix = "a mem0ai 1.x key; 2.x would ignore it: export the prompts with --format mem0-v2 (custom_instructions)"
    else:
        fix = f"mem0ai {version} would ignore it and run its defaults; its keys are {', '.join(sorted(known))}"
    raise ConfigError(f"--config: key {key!r} is not a mem0ai {version} setting ({fix}).")


def stores_of(config: dict[str, Any]) -> str:
    """Where a Mem0 config keeps memories: its vector store and history database, in words."""
    vector = config.get("vector_store") or {}
    where = (vector.get("config") or {}) if isinstance(vector, dict) else {}
    store = f"{vector.get('provider', 'qdrant') if isinstance(vector, dict) else 'qdrant'}"
    place = where.get("path") or where.get("url") or where.get("host") or "its default location"
    history = config.get("history_db_path") or "~/.mem0/history.db"
    return f"the vector store {store} at {place} and the history database {history}"


def _import_memory() -> tuple[Any, str]:
    from memopt.live.decode import decoder_for

    try:
        from mem0 import Memory
    except ImportError as e:
        raise ConfigError(f"mem0ai is not installed ({e}); install the extra: pip install -e \".[mem0]\".") from None
    version = importlib.metadata.version("mem0ai")
    decoder_for(version)
    return Memory, version


@contextlib.contextmanager
def _mem0(config: dict[str, Any], offline: bool, write_stores: bool) -> Iterator[tuple[Any, str, Any]]:
    """A Mem0 ``Memory`` built from the config (offline: on a SimLM server and a temporary store), its version,
    and the server started (or None)."""
    import logging

    from memopt.export.mem0_check import _offline_env, _probe, _quiet, mem0_config, rejected_config

    if not offline:
        stores = stores_of(config)
        if not write_stores:
            raise ConfigError(f"without --offline, memopt attach writes the data set into your Mem0's own stores "
                              f"({stores}); pass --yes to write there, or --offline for a temporary store on SimLM.")
        logging.getLogger(__name__).warning("memopt attach writes the data set into %s (--yes).", stores)
    with contextlib.ExitStack() as stack:
        server = None
        if offline:
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="memopt-attach-")))
            stack.enter_context(_offline_env(tmp))  # before mem0 is imported: telemetry off, MEM0_DIR there
        Memory, version = _import_memory()
        check_config(config, version)
        config = {key: value for key, value in config.items() if key != "memopt"}  # memopt's knobs block (export)
        if offline:
            from memopt.simlm import SimServer

            server = SimServer()
            url = server.start()
            stack.callback(server.stop)
            _probe(url)
            config = mem0_config(config, url, tmp)
        from pydantic import ValidationError

        try:
            with _quiet("mem0.memory.main"):
                memory = Memory.from_config(config)
        except (ValidationError, ValueError) as e:
            raise rejected_config(config, e) from None
        except Exception as e:  # Mem0's clients raise their own errors (OpenAIError without a key)
            said = str(e).splitlines()[0][:300] if str(e) else "no message"
            raise ConfigError(f"Mem0 could not start with this config ({type(e).__name__}: {said}); its LLM or "
                              "embedder may need an API key in the environment (OPENAI_API_KEY for provider "
                              "openai): export it, or run with --offline.") from None
        try:
            yield memory, version, server
        finally:
            memory.close()
            client = getattr(memory.vector_store, "client", None)
            if offline and client is not None:
                client.close()


def _search(memory: Any, major: int, question: str, user_id: str, top_k: int) -> list[dict[str, Any]]:
    if major == 1:
        found = memory.search(question, user_id=user_id, limit=top_k)
    else:
        found = memory.search(question, filters={"user_id": user_id}, top_k=top_k)
    return list(found.get("results", []) if isinstance(found, dict) else found)


def _check_answers(answers: dict[str, str], cases: list[Any]) -> None:
    """Refuse, before any work, ``--answers`` that lack the answer of a selected case (by case id or question)."""
    missing = [c for c in cases if c.case_id not in answers and c.question not in answers]
    if missing:
        first = missing[0]
        raise DataError(f"--answers: no answer for {len(missing)} of the {len(cases)} selected cases (the first: case "
                        f"{first.case_id}, {first.question!r}); add a line {{\"case_id\": ..., \"answer\": ...}} for "
                        "each, or select fewer cases (--limit). Nothing was ingested or recorded.")


def attach_mem0(config: dict[str, Any], conversations: list[Conversation], trace_dir: str | Path, *,
                answers: dict[str, str] | None = None, answer_prompt: str | None = None,
                lm: LMSpec | Sequence[LMSpec] = SIM,
                offline: bool = False, write_stores: bool = False, top_k: int = 10, limit: int | None = None,
                data_name: str = "", on_progress: Callable[[str], None] | None = None) -> RunResult:
    """Run the user's Mem0 under the tap on the conversations; write the recording and graphs (see the module doc)."""
    import dspy

    from memopt.core.files import inside, safe_name
    from memopt.evaluate.run import case_metrics
    from memopt.export.formats import DATE_LINE
    from memopt.export.mem0_check import plan_cases
    from memopt.judge.judges import LexicalJudge
    from memopt.judge.metrics import exact_match, locomo_f1
    from memopt.live.decode import decoder_for
    from memopt.live.graph import build_graphs
    from memopt.live.records import read_records
    from memopt.live.tap import trace_mem0
    from memopt.lm.build import make_lm
    from memopt.systems import make_system
    from memopt.systems.base import CURRENT_DATE
    from memopt.systems.helpers import item_line, session_date
    from memopt.trace.io import save_graph

    plan = plan_cases(conversations, limit, top_k)
    if answers is not None:
        _check_answers(answers, [case for _, cases in plan for case in cases])
    say = on_progress or (lambda _: None)
    trace_dir = Path(trace_dir)
    recording = trace_dir / RECORDING
    run_id, started, judge = uuid.uuid4().hex, time.perf_counter(), LexicalJudge()
    system = make_system("mem0", instructions={"answer": answer_prompt} if answer_prompt else None)
    prompt = system.instructions()["answer"] if answers is None else None
    results: list[CaseResult] = []
    with _mem0(config, offline, write_stores) as (memory, version, server):
        major = decoder_for(version).major
        template = config.get(_TEMPLATES[major])
        mem0_lm = "sim (memopt serve)" if offline else str((config.get("llm") or {}).get("config", {}).get("model"))
        with trace_mem0(memory, recording, version=version, lm=mem0_lm, simulated=offline) as tap, \
                dspy.context(lm=make_lm(spec_list(lm)) if answers is None else None):
            for conversation, cases in plan:
                say(f"ingesting {conversation.sample_id} ({len(conversation.sessions)} sessions) into Mem0 {version}")
                for session in conversation.sessions:
                    date = session_date(session)
                    if isinstance(template, str):
                        dated = template.replace(_PLACEHOLDER, date) if _PLACEHOLDER in template or major == 1 \
                            else f"{template.rstrip()}\n{DATE_LINE.replace(_PLACEHOLDER, date)}"
                        setattr(memory.config, _TEMPLATES[major], dated)
                        if major == 2:  # 2.x reads its copy on the Memory object
                            memory.custom_instructions = dated
                    tap.session(conversation.sample_id, index=session.index, date_time=date,
                                dia_ids=[t.dia_id for t in session.turns], speakers=[t.speaker for t in session.turns])
                    _add(memory, session, conversation.sample_id, date)
                say(f"answering {len(cases)} questions of {conversation.sample_id} from Memory.search (top {top_k})")
                for case in cases:
                    hits = _search(memory, major, case.question, conversation.sample_id, top_k)
                    context = "\n".join(item_line((h.get("metadata") or {}).get("session_date"), str(h.get("memory")))
                                        for h in hits)
                    if case.question_date:  # the question's own "now", as memopt's pipelines give it
                        context = f"{CURRENT_DATE}{case.question_date}\n{context}"
                    if answers is not None:
                        prediction = answers.get(case.case_id, answers.get(case.question))
                        if prediction is None:
                            raise DataError(f"--answers: no answer for case {case.case_id} ({case.question!r}).")
                    else:
                        prediction = str(system.answer(question=case.question, context=context).answer or "")
                    tap.answer(case.question, prediction, user_id=conversation.sample_id, case_id=case.case_id,
                               gold=case.gold, evidence=list(case.evidence), category=case.category, context=context,
                               prompt=prompt, date=case.question_date)
                    results.append(CaseResult(case.case_id, case.sample_id, case.category, case.question, case.gold,
                                              prediction, locomo_f1(prediction, case.gold, case.category),
                                              exact_match(prediction, case.gold),
                                              judge.correct(case.question, case.gold, prediction)))
        requests = {"chat": server.stats.requests, "embeddings": server.stats.embeddings} if server else None
    header, records = read_records(recording)
    graphs = build_graphs(header, records, run_id=run_id, source=RECORDING)
    for sample_id, G in graphs.items():
        save_graph(G, inside(trace_dir, safe_name(sample_id, ".json")))
    usage = {"mem0": {"version": version, "lm_requests": requests, "records": len(records)}}
    return RunResult("mem0", f"mem0ai {version}: {mem0_lm}",
                     offline or (answers is None and any(s.simulated for s in spec_list(lm))), data_name,
                     {op: h for G in graphs.values() for op, h in G.graph["prompt_versions"].items()},
                     {"top_k": top_k}, case_metrics(results, judged=True), results, usage,
                     time.perf_counter() - started, "lexical", run_id=run_id)


def _add(memory: Any, session: Any, user_id: str, date: str) -> None:
    from openai import OpenAIError

    from memopt.export.mem0_check import session_messages

    try:
        memory.add(session_messages(session), user_id=user_id, metadata={"session_date": date})
    except OpenAIError as e:
        raise LMError(f"Mem0's LM call failed on session {session.index} of {user_id} ({type(e).__name__}: "
                      f"{e}).") from None
