"""The toy family: the square of a whole number from 1 to 9, drawn by the family's seed."""

import random

from replaylab.lessons import Instance
from replaylab.lessons.toy import lab

SEED = 1
PARAMETERS = {"number": "the number to square"}
DRAWN = 3


def seeds():
    return [Instance("toy-seed", "easy", {"number": lab.NUMBER}, seed=True)]


def instances():
    draw = random.Random(SEED)
    drawn = [1 + int(draw.random() * 9) for _ in range(DRAWN)]
    return seeds() + [
        Instance(f"toy-{n:03d}", "easy" if number < 5 else "medium", {"number": number}) for n, number in enumerate(drawn, 1)
    ]


def variants(instance):
    return {"default": lab.variant(instance.parameters["number"])}
