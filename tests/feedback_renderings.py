"""Feedback examples rendered as other people write them, one function per rendering (issue 47, tuning material).

Each public function renders ONE example (`memopt.feedback.formats.ExampleParts`) as text; a feedback holds the
examples one after another. This is the shape a set of renderings is handed over in (`memopt.feedback.formats.
load_renderings` reads such a module, `python -m tests.feedback_formats --renderings FILE` measures it, `memopt
bench feedback --renderings FILE` runs each as a feedback kind ``attribution_<name>``). These were written while
SimLM's reflection was changed to read what a sentence says rather than memopt's phrasing (active and passive,
labels before / after, a bug ticket, unquoted prose; then Markdown headings, XML-ish tags and key="value" pairs), so
they are tuning figures, not a held-out measurement.

memopt's observation on an update says which memory replaced which in its own passive sentence; a person writes it
in their own words. `restated` rewrites that one sentence in the active voice, the way these renderings do.
"""

from __future__ import annotations

import re

from memopt.feedback.formats import ExampleParts

__all__ = ["active_voice", "bug_ticket", "before_after", "chat_log", "plain_prose", "headings", "xml_tags",
           "key_values"]

_PASSIVE = re.compile(r"The memory '(?P<old>[^']+)' was overwritten by '(?P<new>[^']+)'(?P<rest>.*)")
_DELETED = re.compile(r"The memory '(?P<old>[^']+)' was deleted(?P<rest>.*)")


def restated(observation: str, update_with: str = "the update replaced '{old}' with '{new}'") -> str:
    """memopt's passive observation on a replaced memory in other words (others as they are)."""
    m = _PASSIVE.match(observation)
    if m:
        said = update_with.format(old=m.group("old"), new=m.group("new"))
        return said[:1].upper() + said[1:] + m.group("rest")
    m = _DELETED.match(observation)
    return f"The update deleted '{m.group('old')}'{m.group('rest')}" if m else observation


def active_voice(p: ExampleParts) -> str:
    """memopt's own labels, with the observation in the active voice."""
    lines = [f"Question: {p.question}", f"Gold answer: {p.gold}", f"System answered: {p.answer}",
             f"Error: {p.error_type} — {p.reason}",
             "Evidence: " + " / ".join(f"{who}: {text}" for who, text in p.turns)]
    lines += ["This operation produced: " + " | ".join(p.produced)] if p.produced else []
    lines += ["This operation read: " + " | ".join(p.read)] if p.read else []
    return "\n".join([*lines, f"Observation: {restated(p.observation, 'it overwrote {old!r} with {new!r}')}"])


def bug_ticket(p: ExampleParts) -> str:
    """A bug report in a tracker's layout."""
    lines = [f"### Wrong answer: {p.question}", "", "**Steps to reproduce**",
             *(f"1. {who} says: \"{text}\"" for who, text in p.turns), f"2. Ask: {p.question}", "",
             f"**Expected behavior:** {p.gold}", f"**Actual behavior:** {p.answer}", ""]
    if p.produced or p.read:
        lines += ["**Memory state**", *(f"- {x}" for x in p.produced), *(f"- (retrieved) {x}" for x in p.read), ""]
    lines += [f"**Suspected component:** {p.operation} ({p.error_type})",
              f"**Notes:** {restated(p.observation, '{new!r} replaced {old!r} in the store')}"]
    return "\n".join(lines)


def before_after(p: ExampleParts) -> str:
    """A diff of the memory: before and after, then the answers."""
    m = _PASSIVE.match(p.observation)
    lines = [f"Case: {p.question}"]
    lines += [f"Chat — {who}: {text}" for who, text in p.turns]
    if m:
        lines += [f"Memory before: {m.group('old')}", f"Memory after: {m.group('new')}"]
    else:
        lines += [f"Memory: {x}" for x in p.produced] + [f"Retrieved: {x}" for x in p.read]
        lines.append(p.observation)
    lines += [f"Should have said: {p.gold}", f"Said: {p.answer}", f"Where: {p.operation}"]
    return "\n".join(lines)


def chat_log(p: ExampleParts) -> str:
    """A reviewer's note pasted from a chat: the turn quoted, the rest in short sentences."""
    turns = " ".join(f"{who} wrote “{text}”." for who, text in p.turns)
    memory = "; ".join(f"“{x}”" for x in p.produced + p.read)
    return (f"re {p.operation}: asked “{p.question}” → got “{p.answer}”, wanted “{p.gold}”. {turns} "
            f"What the memory had: {memory}. {restated(p.observation)}")


def plain_prose(p: ExampleParts) -> str:
    """One paragraph with no quotes around the memories."""
    turns = " ".join(f"{who} told us: {text}" for who, text in p.turns)
    m = _PASSIVE.match(p.observation)
    change = f"The update step overwrote {m.group('old')} with {m.group('new')}{m.group('rest')}" if m \
        else p.observation
    held = f" After the operation the memory held {'; '.join(p.produced + p.read)}." if p.produced or p.read else ""
    return (f"For the question {p.question} the system answered {p.answer}, but the answer should have been "
            f"{p.gold}. {turns}{held} {change}")


def _unquoted(observation: str, replaced: str, deleted: str) -> str:
    m = _PASSIVE.match(observation)
    if m:
        return replaced.format(old=m.group("old"), new=m.group("new"))
    m = _DELETED.match(observation)
    return deleted.format(old=m.group("old")) if m else observation


def headings(p: ExampleParts) -> str:
    """One Markdown heading per part, its content on the lines below."""
    out = [f"### Question\n{p.question}", f"### Expected\n{p.gold}", f"### Got\n{p.answer}",
           "### Conversation\n" + "\n".join(f"{who}: {text}" for who, text in p.turns)]
    if p.produced or p.read:
        out.append("### Memory\n" + "\n".join(p.produced + p.read))
    return "\n".join([*out, "### Notes\n" + _unquoted(p.observation, "{old} got overwritten with {new}",
                                                       "The update removed {old}")])


def xml_tags(p: ExampleParts) -> str:
    """Each part in a tag of its own, the turns tagged with their speaker."""
    lines = ["<case>", f"<question>{p.question}</question>", f"<expected>{p.gold}</expected>",
             f"<actual>{p.answer}</actual>", *(f'<turn speaker="{who}">{text}</turn>' for who, text in p.turns),
             *(f"<memory>{x}</memory>" for x in p.produced + p.read),
             "<note>" + _unquoted(p.observation, "The memory was updated from {old!r} to {new!r}.",
                                  "{old!r} is no longer in the memory.") + "</note>",
             "</case>"]
    return "\n".join(lines)


def key_values(p: ExampleParts) -> str:
    """One line of key="value" pairs."""
    turns = " / ".join(f"{who}: {text}" for who, text in p.turns)
    note = _unquoted(p.observation, "{old} -> {new}", "deleted: {old}")
    return (f'question="{p.question}"; expected="{p.gold}"; got="{p.answer}"; said="{turns}"; '
            f'memory="{" / ".join(p.produced + p.read)}"; note="{note}"')
