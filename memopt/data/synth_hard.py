"""Synthetic cases whose failure no instruction fixes: noise, ambiguity and distractors.

A perfect reader answers every one of them from the conversation; a system that matches the
question's words against the memory does not, whatever its prompts say. Each *story* is a few
turns placed in one or more sessions, and asks one or two questions with evidence links:

- ``distractor_person``: a near-duplicate fact about someone else, worded like the question ("My
  uncle Rafael bought a Tesla and drives that car everywhere"), while the speaker's own fact is told
  in other words ("Got myself a secondhand Mini Cooper last month") — "What car does X drive?".
- ``distractor_time``: the answer changed twice; the two stale statements share the question's
  words, the latest does not ("Ironworks shut down, so I swim laps at the Westside Pool").
- ``pronoun``: a person is introduced by name, and what the question asks is said two turns later
  with a pronoun only ("She's a vet at the animal hospital").
- ``indirect``: the fact is implied, not stated ("ten years since Hana and I said 'I do'" — how
  long married).
- ``noise``: the evidence turn is typed in a hurry ("omg finaly got tix for the Lorde show") while a
  chit-chat turn of the same speaker carries the question's words ("concert tickets cost way too
  much").

Stories use their own topics (cars, restaurants, races, bands, gyms, neighbours, marriage,
allergies, home towns, concerts, cooking) and their own people, and avoid the words SimLM reads as a
change of state or a retraction, so they never rewrite what the regular events say.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["KINDS", "Story", "plan_stories"]

KINDS = ("distractor_person", "distractor_time", "pronoun", "indirect", "noise")

_OTHERS = tuple((name, "she") for name in "Hana Greta Leila Nia Ingrid Mira Ruth Yuki".split()) + tuple(
    (name, "he") for name in "Rafael Milan Soren Tomas Arjun Kofi Pablo Stellan".split())
_RELATIONS = {"she": ("aunt", "best friend", "boss", "old roommate"),
              "he": ("uncle", "best friend", "boss", "old roommate")}
_CARS = ("Mini Cooper", "Subaru Outback", "Honda Civic", "Mazda Miata", "Volkswagen Golf", "Ford Bronco")
_OTHER_CARS = ("Tesla Model 3", "Jeep Wrangler", "Toyota Prius", "BMW X5", "Volvo XC60", "Kia Soul")
_RESTAURANTS = (("Casa Pepe", "tapas"), ("The Golden Wok", "dumplings"), ("Mama Rosa's", "pasta"),
                ("Saffron House", "curry"), ("Blue Fin", "sushi"), ("Little Seoul", "bibimbap"))
_RACES = ("Berlin Marathon", "Valencia Marathon", "Loch Ness Marathon", "Big Sur Marathon", "Tokyo Marathon")
_OTHER_RACES = ("Rotterdam Half Marathon", "Great North Run", "Cherry Blossom Ten Miler", "Bay to Breakers")
_BANDS = (("The Night Owls", "Velvet Static", "Paper Lanterns"), ("Loose Gravel", "Moonwalk Club", "Tin Orchard"),
          ("The Quiet Storm", "Neon Harbor", "Salt and Cedar"))
_GYMS = (("Peak Fitness", "Ironworks Gym", "the Westside Pool"), ("Core Republic", "Anvil House", "the Lakeside Pool"),
         ("Pulse Studio", "Forge Athletics", "the Eastgate Pool"))
_NEIGHBOURS = ("new neighbour", "new roommate", "new flatmate", "new landlord")
_PROFESSIONS = (("vet", "the animal hospital on Elm Street"), ("pilot", "a small airline up north"),
                ("dentist", "the clinic by the station"), ("firefighter", "the station on Fifth Avenue"),
                ("librarian", "the university library"), ("paramedic", "the county hospital"))
_ALLERGENS = ("peanuts", "shellfish", "sesame", "strawberries", "kiwi")
_TOWNS = (("Krakow", "pierogi"), ("Porto", "bacalhau"), ("Galway", "stew"), ("Bergen", "fish soup"),
          ("Cusco", "empanadas"), ("Hanoi", "pho"))
_ARTISTS = ("Lorde", "Hozier", "Adele", "Coldplay", "Florence and the Machine", "Arctic Monkeys")
_PARTY_DISHES = ("chilli", "lasagna", "paella", "gumbo", "biryani", "dumplings")
_YEARS = ("five", "ten", "twelve", "fifteen")
_REACTIONS = ("Haha, classic!", "Oh nice, tell me more!", "No way!", "That's hilarious.", "Ha, I can picture it.",
              "Good for you!")

Gold = str | Callable[[list[dt.date]], str]
_Pick = Callable[[tuple], Any]


@dataclass
class Story:
    """Steps of (speaker, text) turns, each told in one session; questions refer to turns by (step, turn).

    A question's gold is a string, or a function of the dates of the sessions the steps were told in.
    """

    kind: str
    steps: list[list[tuple[str, str]]]
    questions: list[tuple[str, Gold, int, list[tuple[int, int]]]]
    sessions: list[int] = field(default_factory=list)
    days: list[dt.date] = field(default_factory=list)
    dia_ids: dict[tuple[int, int], str] = field(default_factory=dict)


def _relative(rng: random.Random, table: dict[str, Callable[[dt.date], str]]) -> tuple[str, Callable[[dt.date], str]]:
    phrase = rng.choice(sorted(table))
    return phrase, table[phrase]


def _someone(rng: random.Random, pick: _Pick) -> tuple[str, str]:
    """A relation and a name that fit each other (an aunt is a she)."""
    person, pronoun = pick(_OTHERS)
    return rng.choice(_RELATIONS[pronoun]), person


def _car(rng: random.Random, pick: _Pick, x: str, y: str, when: dict) -> Story:
    car, other_car = pick(_CARS), pick(_OTHER_CARS)
    relation, person = _someone(rng, pick)
    phrase, gold = _relative(rng, when)
    other_phrase, _ = _relative(rng, when)
    own = [(x, f"Got myself a secondhand {car} {phrase}, no more waiting for the bus!"), (y, rng.choice(_REACTIONS))]
    other = [(x, f"My {relation} {person} bought a {other_car} {other_phrase} and drives that car everywhere.")]
    steps = [own, other] if rng.random() < 0.5 else [other, own]
    at = steps.index(own)
    return Story("distractor_person", steps, [
        (f"What car does {x} drive?", car, 4, [(at, 0)]),
        (f"When did {x} buy a car?", lambda days: gold(days[at]), 2, [(at, 0)]),
    ])


def _restaurant(rng: random.Random, pick: _Pick, x: str, y: str, when: dict) -> Story:
    place, dish = pick(_RESTAURANTS)
    other_place, _ = pick(_RESTAURANTS)
    relation, person = _someone(rng, pick)
    own = [(x, f"{place} on Friday nights is our little ritual, best {dish} around.")]
    other = [(x, f"My {relation} {person} says the best restaurant is {other_place}, a favorite restaurant "
                 "for the whole family.")]
    steps = [own, other] if rng.random() < 0.5 else [other, own]
    return Story("distractor_person", steps, [(f"What is {x}'s favorite restaurant?", place, 4,
                                                [(steps.index(own), 0)])])


def _race(rng: random.Random, pick: _Pick, x: str, y: str, when: dict) -> Story:
    race, other_race = pick(_RACES), pick(_OTHER_RACES)
    relation, person = _someone(rng, pick)
    own = [(x, f"Long runs every Sunday are killing me, the {race} is going to hurt."), (y, rng.choice(_REACTIONS))]
    other = [(x, f"My {relation} {person} is training for a race too, the {other_race}, with an actual coach.")]
    steps = [own, other] if rng.random() < 0.5 else [other, own]
    return Story("distractor_person", steps, [(f"Which race is {x} training for?", race, 4,
                                                [(steps.index(own), 0)])])


def _band(rng: random.Random, pick: _Pick, x: str, y: str, when: dict) -> Story:
    first, second, last = pick(_BANDS)
    return Story("distractor_time", [
        [(x, f"I joined a band with some friends from the choir, we're called {first}!"), (y, rng.choice(_REACTIONS))],
        [(x, f"The band had to pick a different name, the old one was taken, so we're {second} these days.")],
        [(x, f"{second} is dead haha, from Friday on we're {last}, final answer.")],
    ], [(f"What is {x}'s band called these days?", last, 1, [(0, 0), (1, 0), (2, 0)])])


def _gym(rng: random.Random, pick: _Pick, x: str, y: str, when: dict) -> Story:
    first, second, last = pick(_GYMS)
    return Story("distractor_time", [
        [(x, f"I joined {first}, I like to exercise there before my shift.")],
        [(x, f"{first} got way too crowded, so I exercise at {second} these days.")],
        [(x, f"{second.removesuffix(' Gym')} shut down, so I swim laps at {last} every morning."),
         (y, rng.choice(_REACTIONS))],
    ], [(f"Where does {x} exercise these days?", last.removeprefix("the "), 1, [(0, 0), (1, 0), (2, 0)])])


def _neighbour(rng: random.Random, pick: _Pick, x: str, y: str, when: dict) -> Story:
    relation, (person, pronoun) = pick(_NEIGHBOURS), pick(_OTHERS)
    profession, place = pick(_PROFESSIONS)
    phrase, _ = _relative(rng, when)
    return Story("pronoun", [[
        (x, f"I met my {relation} {person} {phrase}, we chatted for ages."),
        (y, f"Ooh, what's {pronoun} like?"),
        (x, f"{pronoun.capitalize()}'s a {profession} at {place}, super friendly too."),
    ]], [(f"What does {x}'s {relation} do for a living?", profession, 1, [(0, 0), (0, 2)])])


def _married(rng: random.Random, pick: _Pick, x: str, y: str, when: dict) -> Story:
    years, (spouse, _) = pick(_YEARS), pick(_OTHERS)
    return Story("indirect", [[(x, f"Can't believe it's been {years} years since {spouse} and I said 'I do'!"),
                                (y, "Aww, happy anniversary!")]],
                  [(f"How long has {x} been married?", f"{years} years", 3, [(0, 0)])])


def _allergy(rng: random.Random, pick: _Pick, x: str, y: str, when: dict) -> Story:
    allergen = pick(_ALLERGENS)
    return Story("indirect", [[(x, f"Had to skip the birthday cake at the office, one bite of anything with "
                                    f"{allergen} and I end up in the hospital.")]],
                  [(f"What is {x} allergic to?", allergen, 3, [(0, 0)])])


def _hometown(rng: random.Random, pick: _Pick, x: str, y: str, when: dict) -> Story:
    town, dish = pick(_TOWNS)
    return Story("indirect", [[(x, f"Nothing beats my mom's {dish}, every Christmas in {town} as a kid was pure "
                                    "magic.")]],
                  [(f"Where did {x} grow up?", town, 3, [(0, 0)])])


def _concert(rng: random.Random, pick: _Pick, x: str, y: str, when: dict) -> Story:
    artist = pick(_ARTISTS)
    return Story("noise", [
        [(x, "I always say concert tickets cost way too much these days."), (y, rng.choice(_REACTIONS))],
        [(x, f"omg finaly got tix for the {artist} show on saturday, soooo hyped!!")],
    ], [(f"Which concert did {x} get tickets for?", artist, 4, [(1, 0)])])


def _party(rng: random.Random, pick: _Pick, x: str, y: str, when: dict) -> Story:
    dish = pick(_PARTY_DISHES)
    return Story("noise", [
        [(x, "I'm hopeless at cooking for parties, I always burn something.")],
        [(x, f"made a huuuge pot of {dish} for sat nite, evry1 went back for seconds lol"),
         (y, rng.choice(_REACTIONS))],
    ], [(f"What did {x} cook for the party?", dish, 4, [(1, 0)])])


_BUILDERS: dict[str, tuple[Callable[..., Story], ...]] = {
    "distractor_person": (_car, _restaurant, _race),
    "distractor_time": (_band, _gym),
    "pronoun": (_neighbour,),
    "indirect": (_married, _allergy, _hometown),
    "noise": (_concert, _party),
}


def plan_stories(rng: random.Random, speakers: tuple[str, str], sessions: int, count: int,
                 when: dict[str, Callable[[dt.date], str]]) -> list[Story]:
    """Up to ``count`` stories for one conversation (each topic once), kinds in turn; people and names not reused."""
    taken: set[Any] = set()

    def pick(pool: tuple) -> Any:
        choice = rng.choice([v for v in pool if v not in taken] or list(pool))
        taken.add(choice)
        return choice

    unused = {kind: list(builders) for kind, builders in _BUILDERS.items()}
    stories = []
    for n in range(count):
        kinds = [KINDS[(n + k) % len(KINDS)] for k in range(len(KINDS))]
        kind = next((k for k in kinds if unused[k]), None)
        if kind is None:
            break
        build = unused[kind].pop(rng.randrange(len(unused[kind])))
        x = rng.choice(speakers)
        y = speakers[1] if x == speakers[0] else speakers[0]
        story = build(rng, pick, x, y, when)
        k = len(story.steps)
        story.sessions = sorted(rng.sample(range(1, sessions + 1), k)) if sessions >= k else sorted(
            rng.choices(range(1, sessions + 1), k=k))
        stories.append(story)
    return stories
