"""A small chat application on mem0ai's ``Memory``, recorded through memopt's tap as docs/diagnose.md shows.

One ``Memory.add`` per message, assistant turns included; questions answered from ``Memory.search`` by the
application's own rule (the best hit); no gold answer anywhere. Offline: Mem0's LLM and embedder are a SimLM
server, its stores a directory. ``python tests/live/chat_app.py OUT [--no-answers]`` writes
``OUT/trace/records.jsonl`` and prints one ``question -> answer`` line per question; with ``--no-answers`` the
application never tells the tap what it answered (the cases file will).
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
from pathlib import Path

CHAT = [
    ("user", "Hi! I'm Dana. I just moved to Leeds for a job at the university library."),
    ("assistant", "Welcome to Leeds, Dana! For coffee near the library I'd suggest Laynes Espresso."),
    ("user", "I play the cello in a community orchestra on Thursdays."),
    ("assistant", "Lovely. The Leeds Symphony Orchestra also runs open rehearsals on Sundays."),
    ("user", "My sister Mira lives in York, so I visit her most weekends."),
    ("user", "I quit the community orchestra last week, too many late nights."),
]
QUESTIONS = ["Which coffee place did the assistant suggest?", "Which instrument does Dana play?",
             "Where does Dana's sister live?", "Where does Dana work?"]


def main(out: Path, answers: bool) -> None:
    """Run the chat, ask the questions, record everything Mem0 does."""
    os.environ.update({"MEM0_DIR": str(out / "mem0home"), "MEM0_TELEMETRY": "False"})
    from mem0 import Memory

    from memopt.export.formats import mem0_fragment
    from memopt.export.mem0_check import mem0_config
    from memopt.live import trace_mem0
    from memopt.simlm.server import SimServer
    from memopt.systems.prompts import load_prompts

    major = int(importlib.metadata.version("mem0ai").split(".")[0])
    prompts = mem0_fragment("mem0", load_prompts("mem0", ["extract", "update"], None), v2=major == 2).config
    prompts = {k: v.replace("{session_date}", "8 May 2023") if isinstance(v, str) else v for k, v in prompts.items()}
    server = SimServer()
    memory = Memory.from_config(mem0_config(prompts, server.start(), out / "store"))
    try:
        with trace_mem0(memory, out / "trace" / "records.jsonl") as tap:
            for role, text in CHAT:
                memory.add([{"role": role, "content": text}], user_id="dana")
            for question in QUESTIONS:
                found = memory.search(question, user_id="dana", limit=3) if major == 1 else \
                    memory.search(question, filters={"user_id": "dana"}, top_k=3)
                hits = found.get("results", found) if isinstance(found, dict) else found
                answer = hits[0]["memory"] if hits else "I don't know."
                if answers:
                    tap.answer(question, answer, user_id="dana")
                print(f"{question} -> {answer}", flush=True)
    finally:
        memory.close()
        client = getattr(memory.vector_store, "client", None)
        if client is not None:
            client.close()
        server.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]), "--no-answers" not in sys.argv[2:])
