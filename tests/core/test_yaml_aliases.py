"""YAML aliases are followed only so far: a few hundred bytes of nested aliases (the "billion laughs") are one
clear error, not a command that hangs; ordinary aliases still read."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from memopt.core.files import MAX_YAML_VALUES, load_yaml

LAUGHS = "\n".join(["name: bomb", "pipeline: mem0", 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
                    *(f"{b}: &{b} [{','.join([f'*{a}'] * 9)}]" for a, b in zip("abcdefgh", "bcdefghi", strict=True)),
                    "knobs: *i"]) + "\n"


def test_nested_aliases_past_the_bound_are_refused_naming_the_line():
    assert len(LAUGHS.encode()) < 1000  # under a kilobyte, 9 ** 9 values expanded
    with pytest.raises(yaml.YAMLError, match=rf"aliases expand to more than {MAX_YAML_VALUES:,} values \(at line"):
        load_yaml(LAUGHS)


def test_an_alias_inside_itself_is_refused():
    with pytest.raises(yaml.YAMLError, match="an alias refers to the value that holds it"):
        load_yaml("a: &a [1, *a]\n")


def test_ordinary_aliases_still_read():
    text = "base: &base {top_k: 5, chunk: 200}\nrun1: *base\nrun2: {<<: *base, top_k: 10}\nlist: [*base, *base]\n"
    loaded = load_yaml(text)
    assert loaded["run1"] == {"top_k": 5, "chunk": 200} and loaded["run2"] == {"top_k": 10, "chunk": 200}
    assert loaded["list"] == [loaded["base"]] * 2 and load_yaml("") is None


def test_optimize_estimate_on_the_laughs_is_one_error(tmp_path):
    (tmp_path / "bomb.yaml").write_text(LAUGHS)
    done = subprocess.run([sys.executable, "-m", "memopt", "optimize", "bomb.yaml", "--estimate"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr[-2000:]
    assert lines[0].startswith("error: bomb.yaml: not valid YAML (its aliases expand to more than")
