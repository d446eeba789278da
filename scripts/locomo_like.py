"""Write a synthetic file in LoCoMo's format (for offline figures; LoCoMo's own data is not
ours to ship): two friends talk over many dated sessions; facts about each are said once
among small talk, some revisited later; questions of LoCoMo's five categories point at the
turns that hold their answer (category 5 keeps its gold under ``adversarial_answer``, as
LoCoMo's file does).

    python scripts/locomo_like.py OUT.json [--conversations 3] [--sessions 10] [--turns 20]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
from pathlib import Path
from typing import Any

PEOPLE = [("Maya", "Tom"), ("Priya", "Lukas"), ("Sofia", "Kwame"), ("Elena", "Hiro"),
          ("Nadia", "Sam")]
HOBBIES = [("pottery", "I signed up for a pottery class, we throw bowls on the wheel"),
           ("rock climbing", "I started rock climbing at the indoor gym near my office"),
           ("the violin", "I finally began violin lessons with a teacher from the conservatory"),
           ("sourdough baking", "I have been baking sourdough, my starter is called Bubbles"),
           ("birdwatching", "I took up birdwatching, I bought binoculars and a field guide"),
           ("salsa dancing", "I joined a salsa dancing class on Thursday evenings"),
           ("chess", "I have been playing chess online every night and joined a club"),
           ("watercolour painting", "I started watercolour painting, mostly landscapes")]
PLACES = ["Lisbon", "Kyoto", "Vancouver", "Marrakesh", "Reykjavik", "Cape Town", "Oaxaca",
          "Tallinn", "Hanoi", "Edinburgh"]
PETS = [("a beagle", "Pepper"), ("a tabby cat", "Miso"), ("a parrot", "Kiwi"),
        ("a rescue greyhound", "Comet"), ("two goldfish", "Salt and Pepper")]
JOBS = ["nurse at the children's hospital", "high school chemistry teacher",
        "software tester", "carpenter", "librarian", "bus driver", "pastry chef"]
BOOKS = ["The Left Hand of Darkness", "Middlemarch", "Piranesi", "The Overstory",
         "Americanah", "Stoner", "Pachinko"]
SMALL_TALK = ["How has your week been?", "Haha, that sounds like you.", "Oh wow, really?",
              "I know what you mean.", "That's so good to hear!", "Same here, honestly.",
              "Work has been busy but fine.", "The weather has been awful lately.",
              "I slept badly, too much coffee.", "We should catch up more often.",
              "Tell me more about that!", "That made me laugh.", "I hope it goes well.",
              "Take care of yourself, okay?", "Anyway, what else is new?",
              "I watched a documentary about octopuses last night, fascinating.",
              "My neighbour's renovation is driving me mad.", "Thanks for asking!"]


def _date(day: dt.date, rng: random.Random) -> str:
    hour, minute = rng.randint(8, 21), rng.choice([2, 10, 15, 31, 45, 56])
    clock = f"{(hour - 1) % 12 + 1}:{minute:02d} {'am' if hour < 12 else 'pm'}"
    return f"{clock} on {day.day} {day.strftime('%B')}, {day.year}"


def conversation(n: int, sessions: int, turns: int, rng: random.Random) -> dict[str, Any]:
    a, b = PEOPLE[n % len(PEOPLE)]
    day = dt.date(2023, 1, 9) + dt.timedelta(days=rng.randint(0, 60))
    facts: list[dict[str, Any]] = []  # what was said, for the questions
    conv: dict[str, Any] = {"speaker_a": a, "speaker_b": b}
    hobbies = rng.sample(HOBBIES, 4)
    trips = rng.sample(PLACES, 3)
    pets = rng.sample(PETS, 2)
    jobs = rng.sample(JOBS, 2)
    books = rng.sample(BOOKS, 2)
    plan: list[tuple[str, str, str, Any]] = [
        (a, "job", f"I started my new job as a {jobs[0]} this week.", jobs[0]),
        (b, "job", f"Since last spring I work as a {jobs[1]}, still enjoying it.", jobs[1]),
        (a, "hobby", hobbies[0][1] + ".", hobbies[0][0]),
        (b, "hobby", hobbies[1][1] + ".", hobbies[1][0]),
        (a, "hobby", hobbies[2][1] + ", it is my new obsession.", hobbies[2][0]),
        (a, "trip", f"I just got back from a week in {trips[0]}, the food was amazing.",
         trips[0]),
        (b, "trip", f"We booked flights to {trips[1]} for the summer holidays!", trips[1]),
        (a, "trip", f"Next month I am going to {trips[2]} for a friend's wedding.", trips[2]),
        (b, "pet", f"We adopted {pets[0][0]} from the shelter, we named it {pets[0][1]}.",
         pets[0]),
        (a, "book", f"I am reading {books[0]} for my book club, it is beautiful.", books[0]),
        (b, "book", f"I could not put down {books[1]}, finished it in two days.", books[1]),
        (b, "hobby", hobbies[3][1] + ".", hobbies[3][0]),
    ]
    rng.shuffle(plan)
    slots = rng.sample(range(sessions), min(sessions, len(plan)))
    placed = {s: plan[i] for i, s in enumerate(slots)}
    for s in range(1, sessions + 1):
        day += dt.timedelta(days=rng.randint(3, 20))
        conv[f"session_{s}_date_time"] = _date(day, rng)
        said = []
        fact_at = rng.randint(2, max(2, turns - 3)) if (s - 1) in placed else -1
        for k in range(1, turns + 1):
            speaker = a if k % 2 else b
            dia = f"D{s}:{k}"
            text = rng.choice(SMALL_TALK)
            if k == fact_at:
                who, kind, line, value = placed[s - 1]
                speaker = who
                text = line
                facts.append({"who": who, "kind": kind, "value": value, "dia": dia,
                              "day": day, "session": s})
            turn: dict[str, Any] = {"speaker": speaker, "dia_id": dia, "text": text}
            if k == fact_at + 1 and fact_at > 0 and rng.random() < 0.4:
                turn["img_url"] = ["https://example.invalid/photo.jpg"]
                turn["blip_caption"] = "a photo of a smiling person holding a cup of coffee"
            said.append(turn)
        conv[f"session_{s}"] = said
    return {"sample_id": f"synth-{n + 1}", "conversation": conv,
            "qa": questions(facts, a, b, rng)}


def questions(facts: list[dict[str, Any]], a: str, b: str,
              rng: random.Random) -> list[dict[str, Any]]:
    qa: list[dict[str, Any]] = []
    asks = {"job": "What does {who} do for a living?",
            "hobby": "Which new hobby did {who} mention in that chat?",
            "trip": "Which place did {who} talk about travelling to?",
            "book": "What book was {who} reading?",
            "pet": "What kind of animal did {who} adopt?"}
    for f in facts:
        value = f["value"][0] if isinstance(f["value"], tuple) else f["value"]
        qa.append({"question": asks[f["kind"]].format(who=f["who"]), "answer": value,
                   "evidence": [f["dia"]], "category": 4})
        qa.append({"question": f"When did {f['who']} bring up the {f['kind']} "
                               f"{'(' + value + ')' if f['kind'] != 'pet' else ''}?".strip(),
                   "answer": f"{f['day'].day} {f['day'].strftime('%B')} {f['day'].year}",
                   "evidence": [f["dia"]], "category": 2})
    for who in (a, b):
        mine = [f for f in facts if f["who"] == who and f["kind"] in ("hobby", "trip")]
        if len(mine) >= 2:
            qa.append({"question": f"What activities and places has {who} mentioned?",
                       "answer": ", ".join(str(f["value"]) for f in mine),
                       "evidence": [f["dia"] for f in mine], "category": 1})
    for f in facts:
        if f["kind"] == "hobby":
            qa.append({"question": f"Would {f['who']} probably like a gift related to "
                                   f"{f['value']}?",
                       "answer": f"Yes; {f['who']} took up {f['value']}",
                       "evidence": [f["dia"]], "category": 3})
    for f in facts:
        other = b if f["who"] == a else a
        if f["kind"] in ("pet", "book", "trip"):
            value = f["value"][0] if isinstance(f["value"], tuple) else f["value"]
            qa.append({"question": asks[f["kind"]].format(who=other),
                       "adversarial_answer": value, "evidence": [f["dia"]], "category": 5})
    rng.shuffle(qa)
    return qa


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--conversations", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    data = [conversation(n, args.sessions, args.turns, rng) for n in range(args.conversations)]
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    turns = sum(len(c["conversation"][f"session_{s}"]) for c in data
                for s in range(1, args.sessions + 1))
    print(f"{args.out}: {len(data)} conversations, {turns} turns, "
          f"{sum(len(c['qa']) for c in data)} questions")


if __name__ == "__main__":
    main()
