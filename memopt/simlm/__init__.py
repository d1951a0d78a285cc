"""SimLM, the embedded simulated LM, as one wing with one door: import from ``memopt.simlm`` only.

The wing holds the engine (`SimLM`, `SimEngine`: reads a DSPy prompt, performs the operation with plain
NLP), the reader of instructions and the public directive catalogue (`CATALOGUE`, `directives_for`,
`active_directives`, `directive_stances`), reflection (`propose`, `read_evidence`, `operation_kind`) and the
OpenAI-compatible server (`SimServer`, `memopt serve`), and the prompt edits the reader makes possible
(`edit`, `conflicts`: a new rule replaces the sentences it contradicts). SimLM is the LM provider ``sim``,
registered with `memopt.lm` by `provider` and found by name. What the wing may import: `memopt.core`,
`memopt.judge` (the lexical rules it judges with) and `memopt.lm`'s provider registry. Code outside the wing uses
the names below (``tests/simlm/test_wing.py`` checks that nothing outside imports its modules). The names load on
first use, so importing the door costs nothing until SimLM is used.
"""

from __future__ import annotations

from memopt.core.lazy import lazy_names

__all__ = [
    "OPERATIONS", "SimEngine", "SimLM", "operation_of", "parse_prompt",
    "CATALOGUE", "IRRELEVANT", "active_directives", "directives_for", "directive_stances", "catalogue_table",
    "quote_mask", "operation_kind", "read_evidence", "propose",
    "SimServer", "ServerStats", "check_loopback", "example_lm_line",
    "sentence_spans", "conflicts", "edit", "is_fragment",
]

_HOME = {
    **dict.fromkeys(["OPERATIONS", "SimEngine", "SimLM", "operation_of"], "memopt.simlm.engine"),
    "parse_prompt": "memopt.simlm.prompt",
    **dict.fromkeys(["CATALOGUE", "IRRELEVANT", "active_directives", "directives_for", "directive_stances",
                     "catalogue_table"], "memopt.simlm.directives"),
    "quote_mask": "memopt.simlm.instructions",
    **dict.fromkeys(["operation_kind", "read_evidence", "propose"], "memopt.simlm.reflect"),
    **dict.fromkeys(["SimServer", "ServerStats", "check_loopback", "example_lm_line"], "memopt.simlm.server"),
    **dict.fromkeys(["sentence_spans", "conflicts", "edit", "is_fragment"], "memopt.simlm.edits"),
}


__getattr__ = lazy_names("memopt.simlm", _HOME, globals())


def __dir__() -> list[str]:
    return sorted(__all__)
