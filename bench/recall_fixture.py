"""A recall fixture: 2,000 facts about an owner, each with the owner's own words as evidence,
and 100 questions each needing one known fact, worded unlike the fact.

Generated, deterministic (seeded). Facts come from families (pets, people, work, food,
health, places, hobbies, dates, things owned, preferences), many facts per family with
different details, so a question competes with its family's other facts, as in a real
memory. The question templates were written to be how someone would ask, not copies of
the statement: some share a detail word with the fact, some only with the owner's words
in the evidence, and some share nothing but meaning (those can only be missed by BM25;
they are kept, and counted, on purpose).
"""

from __future__ import annotations

import random
from dataclasses import dataclass


def _words(text: str) -> list[str]:
    return text.split()


@dataclass(frozen=True)
class FixtureFact:
    statement: str
    evidence: str
    category: str


@dataclass(frozen=True)
class Question:
    text: str
    fact_index: int


NAMES = _words(
    """Ada Boris Chloe Dmitri Elena Farid Greta Hugo Ines Jonas Kira Leon Maya Nils Olga Pavel
Quinn Rosa Sven Tara Umar Vera Wiktor Xenia Yusuf Zoe Anton Bea Carl Dora Emil Fiona Gus Hanna Ivo
Jana Kai Lina Marek Nora Oskar Petra Rafael Sara Timo Ulla Vito Wanda Yara Zeno"""
)
ANIMALS = {
    "dog": "pup",
    "cat": "kitty",
    "parrot": "bird",
    "rabbit": "bunny",
    "horse": "pony",
    "tortoise": "shell buddy",
}
RELATIONS = [
    "sister",
    "brother",
    "cousin",
    "neighbour",
    "colleague",
    "friend",
    "aunt",
    "uncle",
    "manager",
    "dentist",
]
CITIES = _words(
    """Oslo Lisbon Krakow Tbilisi Porto Valencia Tallinn Riga Ghent Bergen Turin Seville Graz Lyon
Bologna Malmo Aarhus Split Bled Cork"""
)
FOODS = _words(
    """mushrooms cilantro olives anchovies eggplant blue cheese okra beetroot liver oysters
raisins celery tofu sardines kale"""
)
DRINKS = ["oolong tea", "flat white", "kombucha", "rooibos", "espresso", "matcha", "chai", "cold brew"]
HOBBIES = [
    "bouldering",
    "pottery",
    "birdwatching",
    "chess",
    "sourdough baking",
    "trail running",
    "woodworking",
    "watercolour painting",
    "salsa dancing",
    "beekeeping",
    "sailing",
    "knitting",
]
INSTRUMENTS = ["cello", "ukulele", "piano", "trumpet", "banjo", "harmonica", "violin", "drums"]
BRANDS = {
    "bicycle": ["Cannondale", "Brompton", "Trek", "Gazelle"],
    "car": ["Volvo", "Skoda", "Subaru", "Fiat"],
    "laptop": ["ThinkPad", "MacBook", "Framework", "XPS"],
    "phone": ["Pixel", "iPhone", "Fairphone", "Galaxy"],
}
COLOURS = ["red", "green", "grey", "blue", "yellow", "black", "white", "orange"]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
JOBS = ["data engineer", "nurse", "carpenter", "teacher", "architect", "translator", "pharmacist", "pilot"]
ALLERGENS = ["penicillin", "peanuts", "cat dander", "pollen", "shellfish", "latex", "wasp stings"]
SPORTS_TEAMS = ["Ajax", "Celtic", "Benfica", "Porto", "Rapid", "Legia", "Sparta", "Dinamo"]


def _pet(r: random.Random) -> tuple[FixtureFact, list[str]]:
    animal, nick = r.choice(list(ANIMALS.items()))
    name, owner = r.choice(NAMES), r.choice(["the owner", *[f"the owner's {x}" for x in RELATIONS[:4]]])
    whose = "I" if owner == "the owner" else f"my {owner.split()[-1]}"
    fact = FixtureFact(
        f"{owner.capitalize()} has a {animal} called {name}",
        f"{name} knocked over the plant again, {whose} really need to train that {nick}",
        "pets",
    )
    mine = owner == "the owner"
    questions = (
        [
            f"what's the name of my {animal} again?",
            f"how should I train {name}?",
            f"what do I call my {nick}?",
        ]
        if mine
        else [f"what's my {owner.split()[-1]}'s {animal} called?", f"who is {name}?"]
    )
    return fact, questions


def _person(r: random.Random) -> tuple[FixtureFact, list[str]]:
    rel, name, city = r.choice(RELATIONS), r.choice(NAMES), r.choice(CITIES)
    fact = FixtureFact(
        f"The owner's {rel} {name} lives in {city}",
        f"called {name} today, the weather in {city} is awful apparently",
        "people",
    )
    return fact, [
        f"where does my {rel} live these days?",
        f"which city is {name} in?",
        f"who do I know in {city}?",
    ]


def _birthday(r: random.Random) -> tuple[FixtureFact, list[str]]:
    rel, name, month, day = r.choice(RELATIONS), r.choice(NAMES), r.choice(MONTHS), r.randint(1, 28)
    fact = FixtureFact(
        f"{name}, the owner's {rel}, has a birthday on {month} {day}",
        f"must not forget {name}'s party on the {day}th of {month} this year",
        "dates",
    )
    return fact, [
        f"when is {name} celebrating?",
        f"when was my {rel}'s birthday?",
        f"whose birthday falls in {month}?",
    ]


def _food(r: random.Random) -> tuple[FixtureFact, list[str]]:
    food = r.choice(FOODS)
    verb = r.choice(["dislikes", "cannot stand", "avoids"])
    fact = FixtureFact(
        f"The owner {verb} {food}", f"ugh, the salad had {food} in it again, took them all out", "food"
    )
    return fact, [f"should I order the dish with {food}?", "what goes in salads that I always pick out?"]


def _drink(r: random.Random) -> tuple[FixtureFact, list[str]]:
    drink, time = r.choice(DRINKS), r.choice(["mornings", "afternoons", "evenings", "weekends"])
    fact = FixtureFact(
        f"The owner drinks {drink} in the {time}", f"first {drink} of the day, finally awake", "food"
    )
    return fact, [f"what do I usually have to drink in the {time}?", f"how often do I have {drink}?"]


def _someone(r: random.Random) -> tuple[str, str, str]:
    """(subject as the fact says it, as a question says it, possessive): the owner one time in ten."""
    if r.random() < 0.1:
        return "The owner", "I", "my"
    rel, name = r.choice(RELATIONS), r.choice(NAMES)
    return f"The owner's {rel} {name}", f"my {rel} {name}", f"{name}'s"


def _hobby(r: random.Random) -> tuple[FixtureFact, list[str]]:
    hobby, day = r.choice(HOBBIES), r.choice(["Tuesdays", "Thursdays", "Saturdays", "Sundays"])
    who, asked, _ = _someone(r)
    fact = FixtureFact(f"{who} does {hobby} on {day}", f"can't meet on {day}, that's {hobby} time", "hobbies")
    if who == "The owner":
        return fact, [
            f"am I free on {day}?",
            f"when is my {hobby} session?",
            "what do I do for fun each week?",
        ]
    return fact, [f"what does {asked} do on {day}?", f"when does {asked} go {hobby}?"]


def _instrument(r: random.Random) -> tuple[FixtureFact, list[str]]:
    inst, teacher = r.choice(INSTRUMENTS), r.choice(NAMES)
    who, asked, _ = _someone(r)
    fact = FixtureFact(
        f"{who} is learning the {inst} with a teacher called {teacher}",
        f"lesson with {teacher} went badly, fingers hurt from practising scales",
        "hobbies",
    )
    if who == "The owner":
        return fact, [
            "who gives me music lessons?",
            "which instrument am I practising?",
            f"when is my next lesson with {teacher}?",
        ]
    return fact, [f"what instrument does {asked} play?", f"who teaches {asked}?"]


def _thing(r: random.Random) -> tuple[FixtureFact, list[str]]:
    thing = r.choice(list(BRANDS))
    brand, colour = r.choice(BRANDS[thing]), r.choice(COLOURS)
    fact = FixtureFact(
        f"The owner owns a {colour} {brand} {thing}",
        f"the {brand} needs a service soon, it's making noises",
        "things",
    )
    syn = {"bicycle": "bike", "car": "automobile", "laptop": "computer", "phone": "mobile"}[thing]
    return fact, [
        f"what make is my {syn}?",
        f"what colour is my {thing}?",
        f"where can I get the {brand} serviced?",
    ]


def _work(r: random.Random) -> tuple[FixtureFact, list[str]]:
    job, company = r.choice(JOBS), r.choice(NAMES) + r.choice(["soft", "works", " & Co", "tech"])
    who, asked, _ = _someone(r)
    fact = FixtureFact(
        f"{who} works as a {job} at {company}",
        f"long shift at {company} today, being a {job} is tiring",
        "work",
    )
    if who == "The owner":
        return fact, ["what's my job?", "where am I employed?", f"how long have I been at {company}?"]
    return fact, [f"what does {asked} do for a living?", f"where does {asked} work?"]


def _health(r: random.Random) -> tuple[FixtureFact, list[str]]:
    allergen = r.choice(ALLERGENS)
    who, asked, _ = _someone(r)
    fact = FixtureFact(
        f"{who} is allergic to {allergen}", f"hives after {allergen} again, the doctor confirmed it", "health"
    )
    if who == "The owner":
        return fact, [f"is {allergen} safe for me?", "what am I allergic to?", "what gave me hives?"]
    return fact, [f"can {asked} have {allergen}?", f"what allergy does {asked} have?"]


def _team(r: random.Random) -> tuple[FixtureFact, list[str]]:
    team = r.choice(SPORTS_TEAMS)
    who, asked, _ = _someone(r)
    fact = FixtureFact(f"{who} supports {team} football club", f"{team} lost again, what a season", "sport")
    if who == "The owner":
        return fact, ["which club do I cheer for?", f"did {team} play this weekend?"]
    return fact, [f"which team does {asked} support?", f"is {asked} a {team} fan?"]


def _travel(r: random.Random) -> tuple[FixtureFact, list[str]]:
    city, month = r.choice(CITIES), r.choice(MONTHS)
    fact = FixtureFact(
        f"The owner plans a trip to {city} in {month}",
        f"booked flights to {city} for {month}, so excited",
        "travel",
    )
    return fact, [
        f"when am I travelling to {city}?",
        f"where am I going in {month}?",
        "what holiday did I book?",
    ]


FAMILIES = [
    _pet,
    _person,
    _birthday,
    _food,
    _drink,
    _hobby,
    _instrument,
    _thing,
    _work,
    _health,
    _team,
    _travel,
]


def build(
    n_facts: int = 2000, n_questions: int = 100, seed: int = 14
) -> tuple[list[FixtureFact], list[Question]]:
    r = random.Random(seed)
    facts: list[FixtureFact] = []
    questions_of: list[list[str]] = []
    seen: set[str] = set()
    while len(facts) < n_facts:
        fact, questions = r.choice(FAMILIES)(r)
        if fact.statement in seen:
            continue
        seen.add(fact.statement)
        facts.append(fact)
        questions_of.append(questions)
    picked = r.sample(range(n_facts), n_questions)
    return facts, [Question(r.choice(questions_of[i]), i) for i in picked]
