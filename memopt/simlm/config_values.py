"""Configuration values read as instructions: JSON objects, YAML and TOML entries in a prompt.

A prompt may set a behaviour as a key and a value (``{"shorten": false}``, ``merge_policy: contradiction_only``,
``removal-scope = "named_memory_only"``). A reader takes such an entry as the instruction it names: the key and
the value are words (``snake_case``, ``kebab-case`` and ``camelCase`` split into them), a true boolean asserts the
key and a false one negates it (``"shorten": false`` reads "do not shorten", ``"allow_speculation": false`` "do
not allow speculation"). `config_as_text(text)` rewrites every such entry as a plain clause, ``key: value``; the
entries of one JSON object become one sentence, separated by semicolons, and a JSON string that is prose loses its
JSON quotes (they delimit the value, they do not quote an example). Text that is not a configuration entry is left
as it is; a JSON object whose entries are not all plain values (a template such as ``{"id": ..., "text": ...}``) too,
and a record: an object with an ``id`` or a ``role`` (a memory, an event, a message shown as data, as in a few-shot
example's input or output).
"""

from __future__ import annotations

import re

__all__ = ["config_as_text", "key_words"]

_KEY = r"[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)*"
_STRING = r'"(?:[^"\\\n]|\\.)*"'
_SCALAR = rf"true|false|null|-?\d+(?:\.\d+)?|{_STRING}"
_VALUE = rf"{_SCALAR}|\[\s*(?:(?:{_SCALAR})\s*,?\s*)*\]"
_ENTRY = re.compile(rf'"(?P<key>{_KEY})"\s*:\s*(?P<value>{_VALUE})\s*,?\s*')
_OBJECT = re.compile(r"\{[^{}]*\}")
_TRUE = frozenset({"true", "yes", "on", "enabled"})
_FALSE = frozenset({"false", "no", "off", "disabled"})
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+|[A-Za-z][a-z0-9]*(?:[A-Z][a-z0-9]+)+|[A-Z]+")
# a YAML / TOML entry: a key with a separator (or any key when the value is a boolean) and a plain value
_LINE_VALUE = r"true|false|yes|no|on|off|enabled|disabled|[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+|[A-Z]+"
_LINE = re.compile(rf"^(?P<lead>[ \t]*(?:-[ \t]+)?)(?P<key>{_KEY})[ \t]*[:=][ \t]*(?P<quote>[\"']?)"
                   rf"(?P<value>{_LINE_VALUE})(?P=quote)[ \t]*(?=#|$)", re.MULTILINE)
_SEPARATED = r"[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+"
_INLINE = re.compile(rf"(?<![\w\"'-])(?P<key>{_SEPARATED})[ \t]*[:=][ \t]*(?P<quote>[\"']?)"
                     rf"(?P<value>true|false|{_SEPARATED})(?P=quote)(?![\w-])")


def key_words(identifier: str) -> str:
    """The words of an identifier: ``keep_names``, ``keep-names`` and ``keepNames`` are "keep names"."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", identifier)
    return re.sub(r"[_-]+", " ", spaced).strip().lower()


def _entry(key: str, value: str) -> str:
    """One entry as a clause: a boolean asserts or negates its key, another value follows it after a colon."""
    words = key_words(key)
    low = value.lower()
    if low in _TRUE:
        return words
    if low in _FALSE:
        return f"do not {words}"
    return f"{words}: {value}"


def _scalar(value: str) -> str:
    """A JSON scalar as words: an identifier split, a prose string without its JSON quotes."""
    if value.startswith('"'):
        value = value[1:-1].replace('\\"', '"')
    return key_words(value) if _IDENTIFIER.fullmatch(value) else value


def _value(value: str) -> str:
    if not value.startswith("["):
        return _scalar(value)
    items = [_scalar(v) for v in re.findall(_SCALAR, value[1:-1])]
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else "".join(items)


def _object(match: re.Match[str]) -> str:
    """A JSON object of plain entries as one sentence; any other braces as they are."""
    body = match.group()[1:-1].strip()
    entries, pos = [], 0
    for m in _ENTRY.finditer(body):
        if m.start() != pos:
            return match.group()
        pos = m.end()
        if m.group("value") != "null":
            entries.append(_entry(m.group("key"), m.group("value")) if m.group("value") in ("true", "false")
                           else f"{key_words(m.group('key'))}: {_value(m.group('value'))}")
    placeholder = re.search(r'"(?:\.\.\.|…|<[^"<>]*>)?"', body)  # a template: {"answer": "..."}
    record = re.search(r'"(?:id|role)"\s*:', body)  # a memory, an event or a message shown as data
    if pos != len(body) or not entries or placeholder or record:
        return match.group()
    return "; ".join(entries) + "."


def _line(match: re.Match[str]) -> str:
    key, value = match.group("key"), match.group("value")
    plain_key = not re.search(r"[_-]|[a-z][A-Z]", key)
    if plain_key and (value.lower() not in _TRUE | _FALSE or not key.islower()):
        return match.group()  # "Answer: no" or "Note: ADD" is prose, not a setting
    return match.group("lead") + _entry(key, key_words(value))


def _inline(match: re.Match[str]) -> str:
    return _entry(match.group("key"), key_words(match.group("value")))


def config_as_text(text: str) -> str:
    """``text`` with its configuration entries written as plain clauses (see the module docstring)."""
    if not re.search(r"[:=]", text):
        return text
    previous = None
    while previous != text:  # innermost objects first
        previous, text = text, _OBJECT.sub(lambda m: _object(m).replace("\n", " "), text)
    return _INLINE.sub(_inline, _LINE.sub(_line, text))
