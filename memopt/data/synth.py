"""Synthetic LoCoMo-format conversations of any size, from a seed.

Two speakers talk over dated sessions about their lives: pets, jobs, moves, hobbies, sports,
trips, family. Events are told in the first person, often with relative dates ("yesterday",
"last week"), sometimes with the key detail in a second clause; later sessions bring changes of
state ("I left X, now I work at Y"), compatible additions ("we also got a kitten") and
retractions ("I quit tennis"). Every question carries the dia_ids of the turns that answer it,
and all five LoCoMo categories are generated (1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial with gold "Not mentioned").

``hard_percent`` of the questions (default 20) come from stories whose failure no instruction
fixes (`memopt.data.synth_hard`: distractors about another person or an earlier time, pronoun-only
references, facts implied rather than stated, hurried typing beside chit-chat that carries the
question's words); a perfect reader still answers them. Those stories draw on a random stream of
their own and are told after a session's regular events, so ``hard_percent=0`` gives the regular
conversations alone.

Output is byte-identical for the same `SynthSpec`; generation is linear in the number of sessions.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memopt.core.errors import DataError
from memopt.core.files import write_json
from memopt.core.text import MONTHS, WEEKDAYS, format_date
from memopt.data.model import NOT_MENTIONED
from memopt.data.synth_hard import Story, plan_stories

__all__ = ["SynthSpec", "generate", "generate_with_kinds", "write_synthetic", "synthetic_conversations",
           "MAX_SESSIONS"]

MAX_SESSIONS = 200_000  # about two minutes of generation; a bigger spec is a typo more often than a plan

_PEOPLE = (
    "Alex Bea Carmen Dev Elena Farid Grace Hiro Ines Jonah Kira Luca Maya Nadia Omar Priya Quinn Rosa "
    "Sami Tessa Umar Vera Wes Yara Zane Ada Bruno Chloe Diego Emma Felix Gina Hugo Iris Jon Lena Marco "
    "Nora Oscar Paula Ravi Sofia Theo Uma Victor Wendy Xavi Yusuf Zoe"
).split()
_PETS = "Max Luna Biscuit Pepper Milo Olive Rocky Daisy Simba Nala Ziggy Mochi Tofu Bean Juniper Pickles".split()
_SPECIES = (("puppy", "golden retriever"), ("kitten", "tabby"), ("dog", "beagle"), ("cat", "Maine Coon"),
            ("rabbit", "lop"), ("parrot", "cockatiel"))
_CITIES = "Denver Seattle Austin Boston Portland Chicago Toronto Lisbon Dublin Melbourne Vancouver Madrid".split()
_COMPANIES = ("Brightwave", "Nordlane", "Kestrel Labs", "Orbitly", "Hartwell", "Finchley", "Mosaic Health",
              "Tidepool", "Ardent", "Quarry Bank")
_ROLES = ("data analyst", "nurse", "graphic designer", "teacher", "software engineer", "accountant", "chef",
          "architect", "physiotherapist", "journalist")
_HOBBIES = ("pottery", "salsa dancing", "watercolor painting", "rock climbing", "guitar", "photography",
            "baking", "knitting", "chess", "gardening")
_VENUES = ("the Clay Studio", "the community center", "the Riverside Gym", "the Arts Hub", "the library",
           "Maple Hall")
_SPORTS = ("tennis", "soccer", "volleyball", "basketball", "badminton", "squash")
_COUNTRIES = (("Japan", "the Fushimi Inari shrine"), ("Italy", "the Colosseum"), ("Peru", "Machu Picchu"),
              ("Iceland", "the Blue Lagoon"), ("Morocco", "the Majorelle Garden"), ("Canada", "Banff"),
              ("Greece", "the Acropolis"), ("Vietnam", "Ha Long Bay"))
_RELATIVES = ("sister", "brother", "cousin")
_BOOKS = (("The Overstory", "Richard Powers"), ("Circe", "Madeline Miller"), ("Dune", "Frank Herbert"),
          ("Beloved", "Toni Morrison"), ("Educated", "Tara Westover"), ("Piranesi", "Susanna Clarke"))

_SMALL_TALK = (
    "How have you been lately?", "What have you been up to?", "How was your week?",
    "Anything new on your end?", "How are things going?",
)
_NUDGES = ("Haha, go on.", "Oh?", "Tell me everything.", "And?")
_GREETING_REPLIES = ("Good to hear from you.", "Pretty good, thanks.", "Busy as always!", "Not bad at all.")
_REACTIONS = (
    "That's so great to hear!", "Wow, that sounds amazing!", "Haha, I love that.", "That's wonderful news!",
    "Oh nice, good for you!", "Sounds like a lot of fun!", "I'm really happy for you.",
)
_CLOSINGS = ("Talk soon, take care!", "Catch you later!", "Great catching up, bye for now!", "See you soon!")

# Relative date phrases the generator uses, with the gold answer LoCoMo would write for them.
_RELATIVE_GOLD = {
    "yesterday": lambda d: format_date(d - dt.timedelta(days=1)),
    "today": format_date,
    "last week": lambda d: f"the week before {format_date(d)}",
    "last weekend": lambda d: f"the weekend before {format_date(d)}",
    "last month": lambda d: f"{MONTHS[(d.month - 2) % 12]} {d.year - (1 if d.month == 1 else 0)}",
    "this month": lambda d: f"{MONTHS[d.month - 1]} {d.year}",
    "two days ago": lambda d: format_date(d - dt.timedelta(days=2)),
}
def _weekday_gold(weekday: str):
    return lambda d: f"the {weekday} before {format_date(d)}"


_LAST_WEEKDAY = {f"last {w}": _weekday_gold(w) for w in WEEKDAYS}


def _a(noun: str) -> str:
    return ("an " if noun[0].lower() in "aeiou" else "a ") + noun


@dataclass(frozen=True)
class SynthSpec:
    """What to generate: how many conversations, sessions each, and the seed."""

    conversations: int = 6
    sessions: int = 8
    seed: int = 0
    questions_per_conversation: int = 40
    hard_percent: int = 20

    def __post_init__(self) -> None:
        small = [f"{key}={getattr(self, key)}" for key in ("conversations", "sessions", "questions_per_conversation")
                 if getattr(self, key) < 1]
        if small:
            raise DataError(f"synthetic spec {self.describe()}: {', '.join(small)}; conversations, sessions and "
                            "questions_per_conversation must be at least 1.")
        if self.conversations * self.sessions > MAX_SESSIONS:
            raise DataError(f"synthetic spec {self.describe()}: conversations × sessions = "
                            f"{self.conversations * self.sessions:,} sessions; at most {MAX_SESSIONS:,} are "
                            "generated (write bigger sets in parts with `memopt data synth`).")
        if not 0 <= self.hard_percent <= 90:
            raise DataError(f"synthetic spec {self.describe()}: hard_percent={self.hard_percent}; it must be between 0 "
                            "and 90.")

    def describe(self) -> str:
        """The spec as a data name: ``synthetic:conversations=6,sessions=8,seed=0`` (plus options off their default)."""
        name = f"synthetic:conversations={self.conversations},sessions={self.sessions},seed={self.seed}"
        if self.questions_per_conversation != SynthSpec.questions_per_conversation:
            name += f",questions_per_conversation={self.questions_per_conversation}"
        if self.hard_percent != SynthSpec.hard_percent:
            name += f",hard_percent={self.hard_percent}"
        return name


@dataclass
class _QA:
    question: str
    answer: str
    evidence: list[str]
    category: int
    about: tuple[str, str] | None = None  # adversarial: (person, topic) it wrongly presumes
    kind: str | None = None  # the story kind of a question no instruction fixes (synth_hard.KINDS)

    def to_json(self) -> dict[str, Any]:
        item: dict[str, Any] = {"question": self.question, "evidence": self.evidence, "category": self.category}
        if self.category == 5:
            item["adversarial_answer"] = self.answer
        else:
            item["answer"] = self.answer
        return item


@dataclass
class _Life:
    """What the generator knows about one speaker (never shown to any LM)."""

    name: str
    pets: list[tuple[str, str, str]] = field(default_factory=list)  # (species, pet name, dia_id)
    job: tuple[str, str, str] | None = None  # (role, company, dia_id)
    city: tuple[str, str] | None = None  # (city, dia_id)
    hobbies: list[tuple[str, str]] = field(default_factory=list)  # (hobby, dia_id)
    sports: list[tuple[str, str, list[_QA]]] = field(default_factory=list)  # (sport, dia_id, its questions)
    relatives: dict[str, str] = field(default_factory=dict)  # relation -> name
    told: set[str] = field(default_factory=set)  # topics this speaker has talked about
    used: set[str] = field(default_factory=set)


class _Conversation:
    def __init__(self, rng: random.Random, hard_rng: random.Random, sample_id: str, spec: SynthSpec) -> None:
        self.rng = rng
        self.hard_rng = hard_rng
        self.sample_id = sample_id
        self.spec = spec
        a, b = rng.sample(_PEOPLE, 2)
        self.lives = {a: _Life(a), b: _Life(b)}
        self.speakers = (a, b)
        self.qa: list[_QA] = []
        self.picked: list[_QA] = []  # the questions asked, once built
        self.conv: dict[str, Any] = {"speaker_a": a, "speaker_b": b}
        wanted = math.ceil(1.5 * spec.hard_percent / 100 * spec.questions_per_conversation)
        self.stories = plan_stories(hard_rng, self.speakers, spec.sessions, min(wanted, 2 * spec.sessions),
                                    {**_RELATIVE_GOLD, **_LAST_WEEKDAY}) if spec.hard_percent else []

    # --- helpers ---------------------------------------------------------------------------
    def _when(self, day: dt.date) -> tuple[str, str]:
        """A relative date phrase and its LoCoMo-style gold, for an event told on ``day``."""
        table = dict(_RELATIVE_GOLD)
        table.update(_LAST_WEEKDAY)
        phrase = self.rng.choice(sorted(table))
        return phrase, table[phrase](day)

    def _forget(self, question: str) -> None:
        """Drop a question whose answer a later change of state rightly overwrote."""
        self.qa = [q for q in self.qa if q.question != question]

    def _pick(self, life: _Life, pool: tuple | list, key: str) -> Any:
        options = [p for p in pool if f"{key}:{p}" not in life.used]
        choice = self.rng.choice(options or list(pool))
        life.used.add(f"{key}:{choice}")
        return choice

    # --- events: each returns (text, list of QA) given the dia_id and session date -----------
    def pet(self, life: _Life, other: _Life, dia: str, day: dt.date) -> str:
        species, breed = self._pick(life, _SPECIES, "species")
        name = self._pick(life, _PETS, "pet")
        phrase, gold = self._when(day)
        second = bool(life.pets)
        if second:
            text = self.rng.choice((
                f"We also got a {species} {phrase}, a little {breed} named {name}.",
                f"Guess what, I adopted a {species} named {name} {phrase}, so now the house is even busier!",
            ))
        else:
            text = self.rng.choice((
                f"I adopted a {species} named {name} {phrase}, {_a(breed)} from the shelter.",
                f"I finally adopted a {species} {phrase}, and his name is {name}.",
                f"Big news, I brought home a {breed} {species} {phrase}, her name is {name}!",
            ))
        life.pets.append((species, name, dia))
        self.qa.append(_QA(f"What is the name of {life.name}'s {species}?", name, [dia], 4))
        self.qa.append(_QA(f"When did {life.name} adopt {name}?", gold, [dia], 2))
        if not any(s == species for s, _, _ in other.pets):
            self.qa.append(_QA(f"What is the name of {other.name}'s {species}?", NOT_MENTIONED, [dia], 5,
                               (other.name, species)))
        life.told.add(species)
        if second:
            names = ", ".join(n for _, n, _ in life.pets)
            self.qa.append(_QA(f"What are the names of {life.name}'s pets?", names, [d for _, _, d in life.pets], 1))
        return text

    def job(self, life: _Life, other: _Life, dia: str, day: dt.date) -> str:
        role = self._pick(life, _ROLES, "role")
        company = self._pick(life, _COMPANIES, "company")
        phrase, gold = self._when(day)
        if life.job is None:
            text = self.rng.choice((
                f"I started a new job {phrase}, I'm {_a(role)} at {company} now.",
                f"I got hired as {_a(role)} at {company} {phrase}!",
            ))
            self.qa.append(_QA(f"When did {life.name} start working at {company}?", gold, [dia], 2))
        else:
            old = life.job[1]
            self._forget(f"When did {life.name} start working at {old}?")
            text = self.rng.choice((
                f"I left {old} {phrase}, now I work as {_a(role)} at {company}.",
                f"I switched jobs {phrase}, I'm now {_a(role)} at {company} instead of {old}.",
            ))
            self.qa.append(_QA(f"Which company did {life.name} work at before {company}?", old, [life.job[2], dia], 1))
        life.job = (role, company, dia)
        self.qa.append(_QA(f"Where does {life.name} work now?", company, [dia], 4))
        self.qa.append(_QA(f"What does {life.name} do for a living?", role, [dia], 3))
        if other.job is None:
            self.qa.append(_QA(f"Where does {other.name} work?", NOT_MENTIONED, [dia], 5, (other.name, "job")))
        life.told.add("job")
        return text

    def move(self, life: _Life, other: _Life, dia: str, day: dt.date) -> str:
        city = self._pick(life, _CITIES, "city")
        phrase, gold = self._when(day)
        if life.city is None:
            text = self.rng.choice((
                f"I moved to {city} {phrase}, the new apartment is tiny but cozy.",
                f"We finally settled in {city} {phrase}, close to the river.",
            ))
        else:
            text = f"We moved from {life.city[0]} to {city} {phrase}, so I now live in {city}."
            self._forget(f"When did {life.name} move to {life.city[0]}?")
        life.city = (city, dia)
        self.qa.append(_QA(f"Which city does {life.name} live in now?", city, [dia], 4))
        self.qa.append(_QA(f"When did {life.name} move to {city}?", gold, [dia], 2))
        return text

    def hobby(self, life: _Life, other: _Life, dia: str, day: dt.date) -> str:
        hobby = self._pick(life, _HOBBIES, "hobby")
        venue = self.rng.choice(_VENUES)
        phrase, gold = self._when(day)
        if life.hobbies:
            text = f"I've also been learning {hobby} on weekends, I picked it up {phrase}."
        else:
            text = self.rng.choice((
                f"I signed up for {hobby} classes {phrase}, they are at {venue} every Thursday.",
                f"I started {hobby} {phrase} at {venue}, it is so relaxing.",
            ))
            self.qa.append(_QA(f"Where does {life.name} take {hobby} classes?", venue.removeprefix("the "), [dia], 4))
        life.hobbies.append((hobby, dia))
        if len(life.hobbies) >= 2:
            names = ", ".join(h for h, _ in life.hobbies)
            self.qa.append(_QA(f"What hobbies has {life.name} picked up?", names, [d for _, d in life.hobbies], 1))
        self.qa.append(_QA(f"When did {life.name} start {hobby}?", gold, [dia], 2))
        return text

    def sport(self, life: _Life, other: _Life, dia: str, day: dt.date) -> str:
        if life.sports and self.rng.random() < (0.75 if len(life.sports) >= 2 else 0.25):
            sport, first, stale = life.sports.pop(0)
            phrase, gold = self._when(day)
            self.qa = [q for q in self.qa if q not in stale]  # their memory is rightly deleted now
            self.qa.append(_QA(f"Which sport did {life.name} quit?", sport, [first, dia], 1))
            self.qa.append(_QA(f"When did {life.name} quit {sport}?", gold, [dia], 2))
            return self.rng.choice((
                f"I quit {sport} {phrase}, my knee could not take it anymore.",
                f"I no longer play {sport}, I stopped {phrase}.",
            ))
        sport = self._pick(life, _SPORTS, "sport")
        relative = self.rng.choice(_RELATIVES)
        if relative not in life.relatives:
            life.relatives[relative] = self._pick(life, [p for p in _PEOPLE if p not in self.speakers], "person")
        partner = life.relatives[relative]
        questions = [_QA(f"Who does {life.name} play {sport} with?", partner, [dia], 4),
                     _QA(f"What is the name of {life.name}'s {relative}?", partner, [dia], 4)]
        life.sports.append((sport, dia, questions))
        self.qa.extend(questions)
        return f"I play {sport} every {self.rng.choice(WEEKDAYS)} with my {relative} {partner}."

    def trip(self, life: _Life, other: _Life, dia: str, day: dt.date) -> str:
        country, sight = self._pick(life, _COUNTRIES, "country")
        phrase, gold = self._when(day)
        text = self.rng.choice((
            f"I got back from {country} {phrase}, we visited {sight} and it was breathtaking.",
            f"I went to {country} {phrase}, the highlight was {sight}.",
        ))
        self.qa.append(_QA(f"When did {life.name} go to {country}?", gold, [dia], 2))
        self.qa.append(_QA(f"What did {life.name} visit in {country}?", sight.removeprefix("the "), [dia], 4))
        self.qa.append(_QA(f"When did {other.name} go to {country}?", NOT_MENTIONED, [dia], 5, (other.name, country)))
        life.told.add(country)
        return text

    def book(self, life: _Life, other: _Life, dia: str, day: dt.date) -> str:
        title, author = self._pick(life, _BOOKS, "book")
        text = f"My favorite book right now is {title}, it was written by {author}."
        self.qa.append(_QA(f"Who wrote the book {life.name} called a favorite?", author, [dia], 3))
        self.qa.append(_QA(f"What is {other.name}'s favorite book?", NOT_MENTIONED, [dia], 5, (other.name, "book")))
        life.told.add("book")
        return text

    EVENTS = {"pet": 3, "job": 2, "move": 2, "hobby": 3, "sport": 4, "trip": 2, "book": 1}

    # --- sessions ------------------------------------------------------------------------------
    def build(self) -> dict[str, Any]:
        day = dt.date(2022, 1, 3) + dt.timedelta(days=self.rng.randrange(0, 600))
        for s in range(1, self.spec.sessions + 1):
            day += dt.timedelta(days=self.rng.randint(3, 21))
            hour, minute = self.rng.randint(1, 12), self.rng.randrange(0, 60)
            self.conv[f"session_{s}_date_time"] = (
                f"{hour}:{minute:02d} {self.rng.choice(('am', 'pm'))} on {day.day} {MONTHS[day.month - 1]}, {day.year}"
            )
            self.conv[f"session_{s}"] = self._session(s, day)
        self.picked = self._questions()
        return {"sample_id": self.sample_id, "conversation": self.conv, "qa": [q.to_json() for q in self.picked]}

    def _session(self, s: int, day: dt.date) -> list[dict[str, str]]:
        first = self.speakers[0] if self.rng.random() < 0.7 else self.speakers[1]
        second = self.speakers[1] if first == self.speakers[0] else self.speakers[0]
        turns: list[dict[str, str]] = []

        def say(speaker: str, text: str) -> str:
            dia = f"D{s}:{len(turns) + 1}"
            turns.append({"speaker": speaker, "dia_id": dia, "text": text})
            return dia

        say(first, f"Hey {second}! {self.rng.choice(_SMALL_TALK)}")
        say(second, f"Hi {first}! {self.rng.choice(_GREETING_REPLIES)}")
        for speaker in self.rng.sample(self.speakers, 2):
            other = second if speaker == first else first
            for _ in range(self.rng.choice((1, 1, 2))):
                if turns[-1]["speaker"] == speaker:
                    say(other, self.rng.choice(_SMALL_TALK))
                event = self.rng.choices(list(self.EVENTS), weights=list(self.EVENTS.values()))[0]
                dia = f"D{s}:{len(turns) + 1}"
                say(speaker, getattr(self, event)(self.lives[speaker], self.lives[other], dia, day))
                say(other, self.rng.choice(_REACTIONS))
        self._tell_stories(s, day, turns, say)
        closer = second if turns[-1]["speaker"] == first else first
        say(closer, self.rng.choice(_CLOSINGS))
        return turns

    def _tell_stories(self, s: int, day: dt.date, turns: list[dict[str, str]], say: Any) -> None:
        """Tell the story steps planned for session ``s``; a story's questions follow its last step."""
        for story in self.stories:
            for step, (session, lines) in enumerate(zip(story.sessions, story.steps, strict=True)):
                if session != s:
                    continue
                if turns[-1]["speaker"] == lines[0][0]:
                    say(next(p for p in self.speakers if p != lines[0][0]), self.hard_rng.choice(_NUDGES))
                story.days.append(day)
                for n, (speaker, text) in enumerate(lines):
                    story.dia_ids[(step, n)] = say(speaker, text)
                if step == len(story.steps) - 1:
                    self.qa.extend(self._story_questions(story))

    @staticmethod
    def _story_questions(story: Story) -> list[_QA]:
        return [_QA(question, gold if isinstance(gold, str) else gold(story.days), [story.dia_ids[e] for e in evidence],
                    category, kind=story.kind) for question, gold, category, evidence in story.questions]

    def _questions(self) -> list[_QA]:
        seen: dict[str, _QA] = {}
        for q in self.qa:
            seen[q.question] = q  # a later event about the same thing wins (e.g. "work now")
        questions = list(seen.values())
        questions = [q for q in questions if q.category != 5 or not self._answerable(q)]
        regular = [q for q in questions if q.kind is None]
        hard = [q for q in questions if q.kind is not None]
        budget, share = self.spec.questions_per_conversation, self.spec.hard_percent / 100
        n_hard = min(len(hard), round(share * budget))
        n_regular = min(len(regular), budget - n_hard)
        if n_regular < budget - n_hard and share < 1:
            n_hard = min(n_hard, round(share * n_regular / (1 - share)))
        picked = _pick(regular, n_regular, self.rng) + _pick(hard, n_hard, self.hard_rng)
        order = {id(q): n for n, q in enumerate(self.qa)}
        return sorted(picked, key=lambda q: order.get(id(q), 0))

    def _answerable(self, q: _QA) -> bool:
        """An adversarial question must really be unanswerable at the end of the conversation."""
        return q.about is not None and q.about[1] in self.lives[q.about[0]].told


def _pick(questions: list[_QA], n: int, rng: random.Random) -> list[_QA]:
    """``n`` questions drawn one category after another, so every category gets its share."""
    by_cat: dict[int, list[_QA]] = {}
    for q in questions:
        by_cat.setdefault(q.category, []).append(q)
    picked: list[_QA] = []
    while len(picked) < n and any(by_cat.values()):
        for cat in sorted(by_cat):
            if by_cat[cat] and len(picked) < n:
                picked.append(by_cat[cat].pop(rng.randrange(len(by_cat[cat]))))
    return picked


def _sub_seed(seed: int, index: int, stream: str = "memopt-synth") -> int:
    return int.from_bytes(hashlib.sha256(f"{stream}:{seed}:{index}".encode()).digest()[:8], "big")


def generate_with_kinds(spec: SynthSpec) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The samples for ``spec`` and the story kind of each question no instruction fixes, by case id (``sample:qN``)."""
    samples, kinds = [], {}
    for i in range(spec.conversations):
        rng = random.Random(_sub_seed(spec.seed, i))
        hard_rng = random.Random(_sub_seed(spec.seed, i, "memopt-synth-hard"))
        conversation = _Conversation(rng, hard_rng, f"synth-{spec.seed}-{i:03d}", spec)
        sample = conversation.build()
        samples.append(sample)
        kinds.update({f"{sample['sample_id']}:q{n}": q.kind for n, q in enumerate(conversation.picked) if q.kind})
    return samples, kinds


def generate(spec: SynthSpec) -> list[dict[str, Any]]:
    """The LoCoMo-format samples for ``spec`` (deterministic)."""
    return generate_with_kinds(spec)[0]


def synthetic_conversations(spec: SynthSpec | None = None) -> list[Any]:
    """Generated conversations parsed into `memopt.data.Conversation` objects."""
    from memopt.data.locomo import parse_locomo

    spec = spec or SynthSpec()
    return parse_locomo(generate(spec), source=spec.describe())


def write_synthetic(spec: SynthSpec, out: str | Path) -> dict[str, Any]:
    """Write the samples for ``spec`` to ``out`` as JSON; return counts (sessions, turns, questions)."""
    samples, kinds = generate_with_kinds(spec)
    write_json(out, samples)
    cats = Counter(q["category"] for s in samples for q in s["qa"])
    return {
        "conversations": len(samples),
        "sessions": sum(len([k for k in s["conversation"] if k.endswith("_date_time")]) for s in samples),
        "turns": sum(len(v) for s in samples for k, v in s["conversation"].items() if isinstance(v, list)),
        "questions": sum(cats.values()),
        "by_category": dict(sorted(cats.items())),
        "hard": dict(sorted(Counter(kinds.values()).items())),
    }
