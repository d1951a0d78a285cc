"""Export: tuned prompts into the formats production systems read, and the checks a prompt passes first.

What it may import: `memopt.systems`, `memopt.evaluate`, `memopt.judge`, `memopt.simlm` (the directive reader),
`memopt.data`, `memopt.lm` and `memopt.core`; never the optimizer or MLflow (`memopt.tracking` reads a run's
prompts and hands them here).

- `formats`: prompts → a Mem0 1.x / 2.x config, a DSPy program, a prompts directory (`export`, `mem0_fragment`);
- `knobs`: the knobs the prompts were tuned with, in every format (``knobs.yaml``);
- `check`: what a prompt to ship must not hold (contradictions, leaked training data, fragments, growth), the
  `PromptGuard` every candidate passes;
- `mem0_check`: the real Mem0 (mem0ai 1.0.11) run on exported prompts against SimLM.
"""

from __future__ import annotations

from memopt.core.lazy import lazy_names

__all__ = ["FORMATS", "JSON_INSTRUCTION", "DATE_LINE", "Mem0Fragment", "load_directory", "mem0_fragment", "export",
           "write_tuned_prompts", "Knobs", "check_prompt", "check_prompts", "PromptGuard"]

_HOME = {
    **dict.fromkeys(["FORMATS", "JSON_INSTRUCTION", "DATE_LINE", "Mem0Fragment", "load_directory", "mem0_fragment",
                     "export", "write_tuned_prompts"], "memopt.export.formats"),
    "Knobs": "memopt.export.knobs",
    **dict.fromkeys(["check_prompt", "check_prompts", "PromptGuard"], "memopt.export.check"),
}

__getattr__ = lazy_names("memopt.export", _HOME, globals())


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
