"""One loader rule for every JSON / JSON-lines file memopt reads: a value nested 100,000 levels deep is one
`DataError` naming the file and the line, never a RecursionError (hostile probes B10-B13)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memopt.attribution.cases import load_cases
from memopt.attribution.labels import load_labels
from memopt.attribution.types import load_attributions
from memopt.core.errors import DataError
from memopt.live.attach import load_answers
from memopt.report.sources import read_attribution_lines

DEEP = "[" * 100_000 + "]" * 100_000
GOOD = {
    "cases": '{"question": "Where did Ann go?", "expected": "Paris"}',
    "answers": '{"case_id": "c1", "answer": "Paris"}',
    "labels": "",
    "attributions": "",
    "report": "",
}
LOADERS = {"cases": load_cases, "answers": load_answers, "labels": load_labels, "attributions": load_attributions,
           "report": read_attribution_lines}


@pytest.mark.parametrize("kind", sorted(LOADERS))
def test_a_value_nested_too_deeply_is_one_error_naming_the_file_and_line(kind: str, tmp_path: Path) -> None:
    path = tmp_path / f"{kind}.jsonl"
    path.write_text("\n".join(line for line in (GOOD[kind], DEEP) if line) + "\n")
    line = 2 if GOOD[kind] else 1
    with pytest.raises(DataError) as caught:
        LOADERS[kind](path)
    message = str(caught.value)
    assert str(path) in message and (f":{line}:" in message or f"line {line}" in message), message
    assert "nested too deeply" in message and "\n" not in message
