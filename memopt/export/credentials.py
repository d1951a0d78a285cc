"""Secrets in a prompt about to be shipped: a prompt is stored and exported verbatim, so a key in it is a leaked key.

`secrets_in(text)` says what secrets a prompt holds, never the secret itself:

- **the environment's credentials** and the passwords memopt was given (`memopt.lm.redaction.secret_values`),
  wherever they occur;
- **a URI with a password** (``scheme://user:password@host``);
- **secret-looking tokens**, by the shapes providers give them: OpenAI (``sk-...``, ``sk-proj-...``),
  Anthropic (``sk-ant-...``), GitHub (``ghp_``, ``gho_``, ``ghs_``, ``github_pat_``), AWS access key ids
  (``AKIA...``), Google API keys (``AIza...``), Slack (``xoxb-``), Hugging Face (``hf_...``), a PEM private key,
  and a value assigned to a secret-named key (``api_key=...``, ``password: ...``) that looks like one (8 or more
  characters holding a digit, no spaces).

`mask_secrets(text)` is ``text`` with each of them replaced by ``***``: the check's messages quote sentences.
"""

from __future__ import annotations

import re

from memopt.lm.redaction import MASK, credential_values, secret_values, uri_password

__all__ = ["secrets_in", "mask_secrets"]

_TOKENS = [
    ("an Anthropic-style API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{12,}")),
    ("an OpenAI-style API key", re.compile(r"\bsk-(?!ant-)[A-Za-z0-9_-]{16,}")),
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{30,}")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("a Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{20,}")),
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")),
    ("a value under a secret-named key", re.compile(
        r"\b(?:api[_ -]?key|secret(?:[_ -]?key)?|access[_ -]?token|auth[_ -]?token|password|passwd)\b['\"]?\s*"
        r"(?:[:=]|\bis\b)\s*['\"]?(?P<value>(?=[^\s'\"]*\d)(?=[^\s'\"]*[A-Za-z])[^\s'\"<>]{8,})", re.IGNORECASE)),
]
_URI = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://\S+")


def _spans(text: str) -> list[tuple[int, int, str]]:
    """Where the secrets of ``text`` are, each with what it is."""
    spans = []
    named = {value: name for name, value in credential_values().items()}
    for value in secret_values():
        what = f"the value of ${named[value]}" if value in named else "a password or secret memopt was given"
        spans += [(m.start(), m.end(), what) for m in re.finditer(re.escape(value), text)]
    for m in _URI.finditer(text):
        password = uri_password(m.group())
        if password:
            at = m.group().find(":" + password + "@")
            start = m.start() + at + 1
            spans.append((start, start + len(password), "the password of a URI"))
    for what, pattern in _TOKENS:
        for m in pattern.finditer(text):
            start, end = (m.start("value"), m.end("value")) if "value" in pattern.groupindex else m.span()
            if text[start:end] != MASK:
                spans.append((start, end, what))
    kept: list[tuple[int, int, str]] = []
    for start, end, what in spans:  # the first reading of a span wins: $OPENAI_API_KEY over "an OpenAI-style key"
        if not any(start < e and s < end for s, e, _ in kept):
            kept.append((start, end, what))
    return sorted(kept)


def secrets_in(text: str) -> list[str]:
    """What secrets ``text`` holds (descriptions only, never the secret), each once."""
    return list(dict.fromkeys(what for _, _, what in _spans(text)))


def mask_secrets(text: str) -> str:
    """``text`` with every secret `secrets_in` finds replaced by ``***``."""
    out, last = [], 0
    for start, end, _ in _spans(text):
        if start < last:
            start = last
        if start >= end:
            continue
        out += [text[last:start], MASK]
        last = end
    return "".join(out) + text[last:]
