"""SimLM's directive reading on the corpora written by other authors: one parametrised test over data files.

Each corpus is ``tests/fixtures/directive_corpus_<name>.yaml`` (a ``sentences:`` list of ``{text, expect, op,
style}``, counted as `tests.directive_corpora` says); ``tests/fixtures/directive_corpora.yaml`` says, per corpus, its
size, its history (who wrote it and the one measurement), and what the reader is held to: issue 21's targets on
corpora that became tuning material, else at least the figures pinned after the last pass (a change to the reader
that loses a sentence fails here). Print a corpus' figures and misses with ``python -m tests.simlm.test_corpora NAME``.
"""

from __future__ import annotations

import sys

import pytest
import yaml

from tests.directive_corpora import FIXTURES, check_corpus, check_measured, check_targets, corpus_figures, load_corpus
from tests.directive_corpora import report as report_corpus

CORPORA: dict[str, dict] = yaml.safe_load((FIXTURES / "directive_corpora.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_corpus_is_valid_and_covers_every_directive(name):
    check_corpus(load_corpus(name))


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_reader_on_corpus(name):
    """Issue 21's targets, or at least the pinned figures (see the module docstring and the corpus' history)."""
    entry = CORPORA[name]
    figures = corpus_figures(load_corpus(name))
    sizes = (entry["grants"], entry["negatives"])
    if entry.get("targets"):
        check_targets(figures, sizes)
    else:
        check_measured(figures, sizes, entry["pinned"])


def test_every_corpus_file_has_an_entry():
    files = {p.name[len("directive_corpus_"):-len(".yaml")] for p in FIXTURES.glob("directive_corpus_*.yaml")}
    assert files - {"fresh", "styles"} == set(CORPORA)
    for entry in CORPORA.values():
        assert entry["history"] and (entry.get("targets") or entry.get("pinned"))


if __name__ == "__main__":
    for corpus in sys.argv[1:] or sorted(CORPORA):
        report_corpus(corpus)
