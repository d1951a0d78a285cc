"""`check_mem0`: run the real Mem0 (mem0ai 1.0.x, unchanged) on exported prompts, offline, and measure it.

Contract:

- **Input**: a Mem0 config fragment (what ``memopt export --format mem0`` writes, or a whole production
  config) and LoCoMo-format conversations. The fragment supplies ``custom_fact_extraction_prompt`` and
  ``custom_update_memory_prompt`` (either may be absent: Mem0 then uses its default). Its ``llm``,
  ``embedder``, ``vector_store``, ``history_db_path``, ``graph_store`` and ``reranker`` are replaced (and
  listed in ``replaced_keys``): Mem0's LLM and embedder become the SimLM server (provider ``openai``,
  ``openai_base_url``, api key ``"x"``, lexical embeddings of ``EMBEDDING_DIMS``), its vector store a
  local on-disk Qdrant. A key Mem0 does not know is an error, since Mem0 would silently ignore it (e.g.
  2.x's ``custom_instructions``); a config Mem0 rejects is an error showing Mem0's message. The
  ``memopt`` block `memopt export` adds (the tuned knobs, `memopt.export.knobs`) is popped before
  ``Memory.from_config``; its ``search.limit`` is the default ``top_k``.
- **Isolation**: every file Mem0 writes (``MEM0_DIR``, Qdrant, history db) goes into one temporary
  directory, removed at the end. While the check runs, ``MEM0_TELEMETRY=False``, ``MEM0_DIR`` is that
  directory, ``OPENROUTER_API_KEY`` is unset and ``NO_PROXY`` covers 127.0.0.1, so nothing leaves the
  loopback interface. Mem0 reads ``MEM0_DIR`` and ``MEM0_TELEMETRY`` when first imported: if the calling
  process imported mem0 earlier with telemetry on, the check refuses to run.
- **Feeding**: one Mem0 ``user_id`` per conversation (its sample id), one ``Memory.add`` per session,
  in order. Every turn is a ``{"role": "user", "content": "<speaker>: <text>"}`` message, as Mem0's own
  LoCoMo evaluation writes them: Mem0 keeps only role and content (``name`` is dropped), so the speaker
  must be in the content for a fact to stay attributed to the right person. The session date (LoCoMo's
  "8 May 2023") goes into the extraction prompt by ``str.replace`` of ``{session_date}`` on the template
  before each ``add`` (Mem0 re-reads ``config.custom_fact_extraction_prompt`` on every call), and into
  each memory's metadata (``session_date``).
- **Answering**: each question is answered by memopt's ``answer`` op (the ``mem0`` pipeline's predictor,
  SimLM in-process; ``answer_prompt`` or the seed prompt) from the top-``top_k`` hits of
  ``Memory.search``, written as dated context lines (``[8 May 2023] text``). Scores are LoCoMo F1, EM
  and the lexical judge (`memopt.judge.metrics.summarize`).
- **Memory statistics** are read from Mem0's own store: ``units`` (live memories, ``Memory.get_all``),
  ``adds`` / ``updates`` / ``deletes`` (events in Mem0's history db, ``Memory.history`` of every memory
  id ``add`` reported), units whose text holds an absolute date (`memopt.core.text.has_absolute_date`) or
  still a relative one (`memopt.core.text.find_relative_dates`).
- **Result**: a plain dict, ``schema_version`` 1: ``mem0_version``, ``simulated`` (always true: SimLM
  answered), ``server``, ``lm_requests`` (chat and embedding requests, when the check started the
  server), ``prompts`` (which custom prompts the fragment set), ``date_note`` (why no session date
  reached Mem0, else None), ``replaced_keys``, ``top_k``, ``metrics`` (`memopt.judge.metrics.summarize`),
  ``memory`` (the statistics above, summed), ``conversations`` (per sample id: ``sessions``, the
  statistics, ``memories`` — the texts Mem0 stored — and ``f1``), ``cases`` (question, gold,
  prediction, scores, number of hits), ``seconds``.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import logging
import os
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from memopt.core.errors import ConfigError, DataError, LMError
from memopt.data.model import Conversation, Session
from memopt.export.formats import DATE_LINE
from memopt.lm.redaction import redact, remember_secrets, validation_problems

__all__ = ["check_mem0", "plan_cases", "load_fragment", "mem0_config", "session_messages", "EMBEDDING_DIMS",
           "MEM0_EXTRA", "rejected_config", "REPLACED_KEYS", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1
EMBEDDING_DIMS = 64
MEM0_EXTRA = 'pip install -e ".[mem0]"'
REPLACED_KEYS = ("llm", "embedder", "vector_store", "history_db_path", "graph_store", "reranker")
_PLACEHOLDER = "{session_date}"
_COLLECTION = "memopt_check"
_LOOPBACK = "127.0.0.1,localhost"


def load_fragment(path: str | Path) -> dict[str, Any]:
    """The Mem0 config fragment in a JSON file; a missing file or non-object JSON is a `ConfigError`."""
    from memopt.core.files import read_json

    try:
        value = read_json(path, missing=f"no such file; write one with memopt export SOURCE --format mem0 "
                                        f"--out {path}.")
    except DataError as e:
        raise ConfigError(f"--config {e}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"--config {path}: expected a JSON object (a Mem0 config), got {type(value).__name__}.")
    return value


def mem0_config(fragment: dict[str, Any], base_url: str, directory: str | Path) -> dict[str, Any]:
    """The full Mem0 config: the fragment's keys, with LLM, embedder and stores pointing at SimLM and ``directory``."""
    directory = Path(directory)
    server = {"model": "sim", "api_key": "x", "openai_base_url": base_url}
    config = {key: value for key, value in fragment.items() if key not in REPLACED_KEYS and key != "memopt"}
    config.setdefault("version", "v1.1")
    config.update({
        "llm": {"provider": "openai", "config": {**server, "temperature": 0.0, "max_tokens": 512}},
        "embedder": {"provider": "openai", "config": {**server, "embedding_dims": EMBEDDING_DIMS}},
        "vector_store": {"provider": "qdrant", "config": {"collection_name": _COLLECTION,
                                                          "path": str(directory / "qdrant"), "on_disk": True,
                                                          "embedding_model_dims": EMBEDDING_DIMS}},
        "history_db_path": str(directory / "history.db"),
    })
    return config


def session_messages(session: Session) -> list[dict[str, str]]:
    """A session's turns as Mem0 messages: role ``user``, the speaker's name leading the content."""
    return [{"role": "user", "content": f"{turn.speaker}: {turn.text}"} for turn in session.turns]


@contextlib.contextmanager
def _offline_env(directory: Path) -> Iterator[None]:
    wanted = {"MEM0_DIR": str(directory), "MEM0_TELEMETRY": "False"}
    for name in ("NO_PROXY", "no_proxy"):
        wanted[name] = ",".join(filter(None, [os.environ.get(name), _LOOPBACK]))
    saved = {name: os.environ.get(name) for name in [*wanted, "OPENROUTER_API_KEY"]}
    os.environ.update(wanted)
    os.environ.pop("OPENROUTER_API_KEY", None)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def _quiet(name: str) -> Iterator[None]:
    log = logging.getLogger(name)
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        log.setLevel(level)


def _import_mem0() -> tuple[Any, str]:
    already = "mem0" in sys.modules
    try:
        from mem0 import Memory
        from mem0.memory import telemetry
    except ImportError as e:
        raise ConfigError(f"mem0ai is not installed ({e}); install the extra: {MEM0_EXTRA} "
                          "(it pins mem0ai==1.0.11).") from None
    version = importlib.metadata.version("mem0ai")
    if not version.startswith("1.0."):
        raise ConfigError(f"memopt mem0 check runs mem0ai 1.0.x, found {version} (2.x has no "
                          f"custom_update_memory_prompt); install the pinned version: {MEM0_EXTRA}.")
    if already and telemetry.MEM0_TELEMETRY:
        raise ConfigError("mem0 was imported before the check with telemetry on; set MEM0_TELEMETRY=False "
                          "before importing mem0 (the check must not reach the network).")
    return Memory, version


def rejected_config(config: dict[str, Any], error: Exception) -> ConfigError:
    """Mem0's refusal of a config as one error that never echoes a value of it (pydantic's ``input_value`` may be
    an API key): where and what, the config's secrets masked."""
    from pydantic import ValidationError

    remember_secrets(config)
    said = validation_problems(error) if isinstance(error, ValidationError) else redact(str(error).splitlines()[0]
                                                                                           if str(error) else "")
    return ConfigError(f"Mem0 rejected the config: {said}")


def _check_keys(fragment: dict[str, Any], known: set[str]) -> None:
    unknown = sorted(set(fragment) - known)
    if "custom_instructions" in unknown:
        raise ConfigError("the config holds custom_instructions, a mem0ai 2.x key that mem0ai 1.0.x silently "
                          "ignores; export the prompts with --format mem0 (custom_fact_extraction_prompt and "
                          "custom_update_memory_prompt).")
    if unknown:
        raise ConfigError(f"the config holds key(s) Mem0 does not know and would silently ignore: "
                          f"{', '.join(unknown)}; Mem0's keys are {', '.join(sorted(known))}.")


def _probe(url: str) -> None:
    from memopt.simlm import check_loopback

    try:
        check_loopback(urllib.parse.urlsplit(url).hostname or "")
    except ConfigError:
        raise ConfigError(f"--server {url}: the check talks to a loopback server only (http://127.0.0.1:PORT/v1), "
                          "so that nothing leaves this machine.") from None
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"{url.rstrip('/')}/models", timeout=5) as response:
            response.read()
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise LMError(f"the LM server at {url} is unreachable ({reason}); start one with memopt serve "
                      "--port 8008, or leave --server out to let the check start its own.") from None


def _memory_stats(memory: Any, user_id: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    from memopt.core.text import find_relative_dates, has_absolute_date

    units = [item["memory"] for item in memory.get_all(user_id=user_id, limit=1_000_000)["results"]]
    ids = list(dict.fromkeys(str(e["id"]) for e in events if e.get("id")))
    history = [record["event"] for i in ids for record in memory.history(i)]
    return {"units": len(units), "adds": history.count("ADD"), "updates": history.count("UPDATE"),
            "deletes": history.count("DELETE"),
            "units_with_absolute_dates": sum(has_absolute_date(u) for u in units),
            "units_with_relative_dates": sum(bool(find_relative_dates(u)) for u in units),
            "memories": sorted(units)}


def _ingest(memory: Any, conversation: Conversation, template: str | None, url: str) -> list[dict[str, Any]]:
    from openai import OpenAIError

    from memopt.systems.helpers import session_date

    events: list[dict[str, Any]] = []
    for session in conversation.sessions:
        date = session_date(session)
        if template is not None:
            memory.config.custom_fact_extraction_prompt = template.replace(_PLACEHOLDER, date)
        try:
            out = memory.add(session_messages(session), user_id=conversation.sample_id,
                             metadata={"session_date": date})
        except OpenAIError as e:
            raise LMError(f"Mem0's LM call to {url} failed on session {session.index} of {conversation.sample_id} "
                          f"({type(e).__name__}: {e}); is the server at {url} running?") from None
        events.extend(out.get("results", []) if isinstance(out, dict) else out)
    return events


def _answer_all(memory: Any, plan: list, top_k: int, answer_prompt: str | None) -> list[dict[str, Any]]:
    import dspy

    from memopt.judge.judges import LexicalJudge
    from memopt.judge.metrics import exact_match, locomo_f1
    from memopt.lm.build import make_lm
    from memopt.systems import make_system
    from memopt.systems.helpers import item_line

    system = make_system("mem0", instructions={"answer": answer_prompt} if answer_prompt else None)
    judge, cases = LexicalJudge(), []
    with dspy.context(lm=make_lm("sim")):
        for conversation, selected in plan:
            for case in selected:
                hits = memory.search(case.question, user_id=conversation.sample_id, limit=top_k)["results"]
                context = "\n".join(item_line((h.get("metadata") or {}).get("session_date"), h["memory"])
                                    for h in hits)
                prediction = str(system.answer(question=case.question, context=context).answer or "")
                cases.append({"case_id": case.case_id, "sample_id": case.sample_id, "category": case.category,
                              "question": case.question, "gold": case.gold, "prediction": prediction,
                              "f1": locomo_f1(prediction, case.gold, case.category),
                              "em": exact_match(prediction, case.gold),
                              "correct": judge.correct(case.question, case.gold, prediction), "hits": len(hits)})
    return cases


def _date_note(template: str | None) -> str | None:
    if template is None:
        return "no custom_fact_extraction_prompt: Mem0 used its default prompt, dated today, not the session date"
    if _PLACEHOLDER not in template:
        return (f"the extraction prompt has no {_PLACEHOLDER} placeholder (the line {DATE_LINE!r}): Mem0 sent no "
                "session date, so relative dates could not be resolved")
    return None


def _totals(per_conversation: dict[str, dict[str, Any]]) -> dict[str, int]:
    keys = ("sessions", "units", "adds", "updates", "deletes", "units_with_absolute_dates", "units_with_relative_dates")
    return {key: sum(stats[key] for stats in per_conversation.values()) for key in keys}


def plan_cases(conversations: list[Conversation], limit: int | None, top_k: int) -> list[Any]:
    """The (conversation, cases) to ask, after checking ``top_k``; no question at all is one clear error."""
    from memopt.evaluate.run import select_cases

    if top_k < 1:
        raise ConfigError(f"--top-k must be at least 1, got {top_k}.")
    plan = select_cases(conversations, limit)
    if not plan:
        raise DataError("no questions to ask: the selected conversations have no qa cases.")
    return plan


def check_mem0(config_fragment: dict[str, Any], conversations: list[Conversation], *, limit: int | None = None,
               top_k: int = 10, answer_prompt: str | None = None, server_url: str | None = None,
               on_progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run real Mem0 with the fragment's prompts over the conversations and score it (see the module doc)."""
    from memopt.judge.metrics import CaseScore, summarize
    from memopt.simlm import SimServer

    plan = plan_cases(conversations, limit, top_k)
    say = on_progress or (lambda _: None)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="memopt-mem0-") as tmp, _offline_env(Path(tmp)):
        server = SimServer() if server_url is None else None
        url = server.start() if server is not None else server_url.rstrip("/")
        memory = None
        try:
            _probe(url)
            Memory, version = _import_mem0()
            from mem0.configs.base import MemoryConfig
            from pydantic import ValidationError

            _check_keys(config_fragment, set(MemoryConfig.model_fields) | {"memopt"})  # memopt: the knobs block
            try:
                with _quiet("mem0.memory.main"):
                    memory = Memory.from_config(mem0_config(config_fragment, url, tmp))
            except (ValidationError, ValueError) as e:
                raise rejected_config(config_fragment, e) from None
            template = config_fragment.get("custom_fact_extraction_prompt")
            per_conversation: dict[str, dict[str, Any]] = {}
            for conversation, _ in plan:
                say(f"ingesting {conversation.sample_id} ({len(conversation.sessions)} sessions) into Mem0")
                events = _ingest(memory, conversation, template, url)
                per_conversation[conversation.sample_id] = {"sessions": len(conversation.sessions),
                                                            **_memory_stats(memory, conversation.sample_id, events)}
            say(f"answering {sum(len(c) for _, c in plan)} questions from Memory.search (top {top_k})")
            cases = _answer_all(memory, plan, top_k, answer_prompt)
        finally:
            if memory is not None:
                memory.close()
                memory.vector_store.client.close()
            if server is not None:
                server.stop()
    scores = [CaseScore(c["case_id"], c["category"], c["f1"], c["em"], c["correct"]) for c in cases]
    for sample_id, memory_stats in per_conversation.items():
        mine = [c["f1"] for c in cases if c["sample_id"] == sample_id]
        memory_stats["f1"] = round(sum(mine) / len(mine), 4) if mine else None
    stats = server.stats if server is not None else None
    return {
        "schema_version": SCHEMA_VERSION,
        "mem0_version": version,
        "simulated": True,
        "server": "memopt SimServer (started by the check)" if server is not None else url,
        "lm_requests": {"chat": stats.requests, "embeddings": stats.embeddings} if stats else None,
        "prompts": {key: key in config_fragment for key in ("custom_fact_extraction_prompt",
                                                             "custom_update_memory_prompt")},
        "date_note": _date_note(template),
        "replaced_keys": sorted(set(config_fragment) & set(REPLACED_KEYS)),
        "top_k": top_k,
        "metrics": summarize(scores),
        "memory": _totals(per_conversation),
        "conversations": per_conversation,
        "cases": cases,
        "seconds": round(time.perf_counter() - started, 2),
    }
