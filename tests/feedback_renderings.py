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
           "key_values", "spreadsheet", "log_line", "store_diff", "story", "ticket_de", "ticket_es", "ticket_fr",
           "ticket_pt"]

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


# --- issue 47b: shapes read by mechanism (tables of rows, logs, diffs, narratives, other languages) --------------
# Written after renderings47 was measured, in other words and layouts than it: each exercises one mechanism of the
# reader (columns named in any words, key=value pairs, the two sides of a diff, a story without labels, the role
# words and verbs of German, Spanish, French and Portuguese), not one rendering.


def _memories(p: ExampleParts) -> tuple[str, str, str]:
    """(old, new, "") for a replaced memory, (old, "", "") for a deleted one, else ("", "", "")."""
    m, gone = _PASSIVE.match(p.observation), _DELETED.match(p.observation)
    return (m.group("old"), m.group("new"), "") if m else (gone.group("old"), "", "") if gone else ("", "", "")


def spreadsheet(p: ExampleParts) -> str:
    """A semicolon-separated export with German column names, one header row and one row."""
    old, new, _ = _memories(p)
    row = ["1", p.question, p.gold, p.answer, " / ".join(w for w, _ in p.turns), " / ".join(t for _, t in p.turns),
           " | ".join(p.produced), " | ".join(p.read), f"{old} -> {new}" if new else old]
    header = ["Nr", "Frage", "Erwartete Antwort", "Antwort des Systems", "Sprecher", "Aussage", "Gespeichert",
              "Gelesen", "Aenderung" if new else "Geloescht" if old else "Befund"]
    return ";".join(header) + "\n" + ";".join(f'"{c}"' if ";" in c or '"' in c else c for c in row)


def log_line(p: ExampleParts) -> str:
    """A structured log line: key=value pairs, the turns as speaker/said pairs, a change as 'old -> new'."""
    old, new, _ = _memories(p)
    pairs = [("ts", "2024-05-02T09:14:00Z"), ("lvl", "warn"), ("q", p.question), ("expected", p.gold),
             ("actual", p.answer)]
    for who, text in p.turns:
        pairs += [("speaker", who), ("said", text)]
    pairs += [("stored", x) for x in p.produced] + [("fetched", x) for x in p.read]
    pairs += [("change", f"{old} -> {new}")] if new else [("removed", old)] if old else []
    return " ".join(f'{k}="{v}"' if " " in v else f"{k}={v}" for k, v in pairs)


def store_diff(p: ExampleParts) -> str:
    """The answers on two lines, the turns quoted, then a diff of the memory store before and after the step."""
    old, new, _ = _memories(p)
    lines = [f"Q: {p.question}", f"want: {p.gold}", f"have: {p.answer}", *(f"> {who}: {text}" for who, text in p.turns),
             f"--- memory before {p.operation}", f"+++ memory after {p.operation}"]
    if p.read:
        lines += ["@@ read to answer @@", *(f" {x}" for x in p.read)]
    if p.produced or old:
        lines += ["@@ store @@", *([f"-{old}"] if old else []), *(f"+{x}" for x in p.produced)]
    return "\n".join(lines)


def story(p: ExampleParts) -> str:
    """A colleague's account in running prose: no labels, the parts told in the order they happened."""
    old, new, _ = _memories(p)
    said = " ".join(f"{who} had told the assistant “{text}”." for who, text in p.turns)
    kept = f" Afterwards the store only held {' and '.join(f'“{x}”' for x in p.produced)}." if p.produced else ""
    change = f" Then the update replaced “{old}” with “{new}”." if new else \
        f" Then the update deleted “{old}”." if old else ""
    read = f" To answer, it looked at {' and '.join(f'“{x}”' for x in p.read)}." if p.read else ""
    return (f"{said}{kept}{change}{read} When someone later asked “{p.question}”, the assistant said “{p.answer}”, "
            f"although the right answer is “{p.gold}”.")


def _ticket(p: ExampleParts, words: dict[str, str]) -> str:
    old, new, _ = _memories(p)
    lines = [f"{words['question']}: {p.question}", f"{words['gold']}: {p.gold}", f"{words['answer']}: {p.answer}",
             *(words["said"].format(who=who, text=text) for who, text in p.turns)]
    lines += [f"{words['stored']}: " + "; ".join(f"“{x}”" for x in p.produced)] if p.produced else []
    lines += [f"{words['read']}: " + "; ".join(f"“{x}”" for x in p.read)] if p.read else []
    lines += [words["replaced"].format(old=old, new=new)] if new else [words["deleted"].format(old=old)] if old else []
    return "\n".join([*lines, f"{words['where']}: {p.operation}"])


def ticket_de(p: ExampleParts) -> str:
    """A ticket in German: German labels, a German verb of saying, the verb last in its sentence."""
    return _ticket(p, {"question": "Frage", "gold": "Erwartete Antwort", "answer": "Tatsächliche Antwort",
                       "said": "{who} hat gesagt: „{text}“", "stored": "Gespeicherte Fakten", "read": "Gelesen",
                       "replaced": "Der Schritt hat „{old}“ durch „{new}“ ersetzt.",
                       "deleted": "Der Schritt hat „{old}“ gelöscht.", "where": "Komponente"})


def ticket_es(p: ExampleParts) -> str:
    """A ticket in Spanish."""
    return _ticket(p, {"question": "Pregunta", "gold": "Respuesta correcta", "answer": "Respuesta del sistema",
                       "said": "{who} dijo: «{text}»", "stored": "Lo que guardó la operación",
                       "read": "Memorias consultadas", "replaced": "La actualización sustituyó «{old}» por «{new}».",
                       "deleted": "La actualización borró «{old}».", "where": "Operación"})


def ticket_fr(p: ExampleParts) -> str:
    """A ticket in French."""
    return _ticket(p, {"question": "Question posée", "gold": "Réponse attendue", "answer": "Réponse obtenue",
                       "said": "{who} a dit : « {text} »", "stored": "Ce que l'opération a enregistré",
                       "read": "Souvenirs lus", "replaced": "La mise à jour a écrasé « {old} » par « {new} ».",
                       "deleted": "La mise à jour a supprimé « {old} ».", "where": "Étape"})


def ticket_pt(p: ExampleParts) -> str:
    """A ticket in Portuguese."""
    return _ticket(p, {"question": "Pergunta", "gold": "Resposta esperada", "answer": "Resposta do sistema",
                       "said": "{who} disse: “{text}”", "stored": "O que a operação guardou",
                       "read": "Memórias lidas", "replaced": "A atualização substituiu “{old}” por “{new}”.",
                       "deleted": "A atualização apagou “{old}”.", "where": "Operação"})
