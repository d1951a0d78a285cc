"""SimLM's directive reading on every corpus of instruction sentences: one parametrised test over data files.

Each corpus SimLM trains on is ``memopt/simlm/corpora/<name>.yaml`` (`tests.directive_corpora` says how items count);
``tests/fixtures/directive_corpora.yaml`` says, per corpus, its size, its history (who wrote it and the one
measurement), and what it is held to:

- ``simlm``: SimLM's reader, whose classifier was trained on this corpus (tuning figures): issue 21's targets
  (``targets``) or at least the figures pinned;
- ``held_out`` (a slow test): SimLM's reader with its classifier trained on every other corpus: at least the figures
  pinned, the closest these corpora come to saying how it reads an author it has not seen;
- ``rules``: the rules alone, which are frozen: exactly the figures pinned (a change to the rules that moves a corpus
  sentence fails here, and must come with a construction test of its own).

Measure a corpus once, by name or path (a new author's, before it joins the training data, or one SimLM ships):
``python -m tests.simlm.test_corpora NAME [NAME ...]``. A corpus SimLM ships prints its tuning figures and its
held-out figures; a new one prints how SimLM as shipped reads it, which is the held-out measurement. The rules alone
are printed beside them.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
import yaml

from memopt.simlm.directives import rule_stances
from tests.directive_corpora import (
    FIXTURES,
    check_corpus,
    check_measured,
    check_targets,
    corpus_figures,
    corpus_path,
    figures_line,
    held_out_reader,
    load_corpus,
    shipped_corpora,
)

CORPORA: dict[str, dict[str, Any]] = yaml.safe_load((FIXTURES / "directive_corpora.yaml").read_text(encoding="utf-8"))
COUNTS = ("recognised", "backwards", "cross", "false")


def _sizes(name: str) -> tuple[int, int]:
    return CORPORA[name]["grants"], CORPORA[name]["negatives"]


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_corpus_is_valid_and_covers_every_directive(name):
    check_corpus(load_corpus(name))


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_simlm_reads_corpus(name):
    """Issue 21's targets, or at least the pinned figures, with the classifier trained on this corpus too."""
    figures = corpus_figures(load_corpus(name))
    held = CORPORA[name]["simlm"]
    if held == "targets":
        check_targets(figures, _sizes(name))
    else:
        check_measured(figures, _sizes(name), held)


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_the_rules_are_frozen_on_corpus(name):
    figures = corpus_figures(load_corpus(name), rule_stances)
    assert (figures["grants"], figures["negatives"]) == _sizes(name)
    assert {k: figures[k] for k in COUNTS} == CORPORA[name]["rules"], figures["misses"]


@pytest.mark.slow  # fits a classifier on every other corpus
@pytest.mark.parametrize("name", sorted(CORPORA))
def test_simlm_on_corpus_held_out(name):
    check_measured(corpus_figures(load_corpus(name), held_out_reader(name)), _sizes(name), CORPORA[name]["held_out"])


def test_every_corpus_simlm_ships_has_an_entry():
    assert set(shipped_corpora()) == set(CORPORA)
    for entry in CORPORA.values():
        assert entry["history"] and entry["simlm"] and set(entry["rules"]) == set(COUNTS) == set(entry["held_out"])


def report(name: str) -> None:
    """Print a corpus' figures and SimLM's misses (module docstring)."""
    items = load_corpus(name)
    shipped = corpus_path(name).parent.name == "corpora" and name in shipped_corpora()
    reading = corpus_figures(items, held_out_reader(name)) if shipped else corpus_figures(items)
    if shipped:
        print(figures_line(f"{name}, SimLM trained on it (tuning figures)", corpus_figures(items)))
    print(figures_line(f"{name}, SimLM {'trained on every other corpus' if shipped else 'as shipped'} (held out)",
                       reading))
    print(figures_line(f"{name}, the rules alone", corpus_figures(items, rule_stances)))
    print("misses of the held-out reading by style:", reading["missed_styles"])
    print("\n".join(reading["misses"]))


if __name__ == "__main__":
    for corpus in sys.argv[1:] or shipped_corpora():
        report(corpus)
