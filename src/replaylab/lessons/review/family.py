"""The review family: two pieces of code drawn from a catalogue of faults (pieces.CATALOGUE), reviewed
by three reviewers (physics, numerics, evidence) against the five-check contract.

An instance is a pair (piece 1, piece 2) of distinct catalogue entries; its three variants are the
reviewers, and the runs of one group and one model are decided together, as the seed's. Every
piece claims the same thing (symplectic Euler, order 1, bounded energy) and every instance's texts
are the seed's word for word: which entries an instance holds is `hidden` (`hidden["pieces"]`,
their catalogue keys), listed nowhere; ids, parameters and variant names say nothing of them.

The draw (`random.Random(SEED)`, `.random()` only): the 60 drawn instances take the levels of a
shuffled list of `COUNTS` (14 easy, 24 medium, 22 hard), and each a pair drawn uniformly from the
pairs of its level not drawn yet (a pair and its mirror count as one; the seed's pair is never
drawn again).

Difficulty, from the catalogue's design (`fails`, `subtle`; tests hold both to the build's checks):
- easy: one piece is the correct symplectic Euler, the other has one obvious fault: one check
  fails in all, far beyond its tolerance (the seed's pair is easy);
- medium: two or three checks fail in all, none close to its tolerance: two pieces with one fault
  each, or one piece breaking two checks (beside the correct one, or beside a one-fault piece);
- hard: a subtle piece (a check fails just beyond its tolerance, or a near miss passes just within
  it and must not be named), or four checks fail in all (two pieces breaking two checks each).

Edge cases: a check passes when its measured value is within its tolerance, the bound included,
and a value that is not finite fails (checks.py); the build's own pass flag decides, never a
reading of the numbers. No entry's measured value lies closer to a tolerance than pieces.MARGIN (a
factor 1.5 for the exact checks, 0.03 in order, 0.05 in energy growth), so no round-off can flip a
flag: no instance sits on the edge. A pair in which no check fails at all is never drawn (the
trivial answer "nothing fails" would be right on all three reviewers).
"""

import random
from functools import cache
from typing import cast

from replaylab.lessons import DIFFICULTIES, Instance, Variant
from replaylab.lessons.review import lab
from replaylab.lessons.review.pieces import CATALOGUE, CORRECT, ENTRIES, Piece

SEED = 35  # the family's draw seed: the drawn instances, and their ids, follow from it
SEED_ID = "review-seed"
SEED_PAIR = tuple(piece.key for piece in lab.SEED_PIECES.values())
# What the task text states, the same for every instance (the oscillator the pieces step); the
# pieces themselves are hidden.
OSCILLATOR = {"mass_kg": 0.5, "stiffness_n_m": 2.0}
PARAMETERS = {
    "mass_kg": "the oscillator's mass (kg), the same in every instance",
    "stiffness_n_m": "the oscillator's spring constant (N/m), the same in every instance",
}
COUNTS = {"easy": 14, "medium": 24, "hard": 22}


def level(first: Piece, second: Piece) -> str | None:
    """The difficulty of a pair of entries (the module's rule), or None for a pair never drawn."""
    total = len(first.fails) + len(second.fails)
    if total == 0 or first.key == second.key:
        return None
    if first.subtle or second.subtle or total >= 4:
        return "hard"
    if total == 1 and CORRECT in (first.key, second.key):
        return "easy"
    return "medium"


def pairs() -> dict[str, list[tuple[str, str]]]:
    """{level: [(key 1, key 2)]} of every pair that may be drawn, in catalogue order."""
    found: dict[str, list[tuple[str, str]]] = {name: [] for name in DIFFICULTIES}
    for first in ENTRIES:
        for second in ENTRIES:
            chosen = level(first, second)
            if chosen and {first.key, second.key} != set(SEED_PAIR):
                found[chosen].append((first.key, second.key))
    return found


def _pick(draw: random.Random, items: list[tuple[str, str]]) -> tuple[str, str]:
    return items[int(draw.random() * len(items))]


@cache
def _drawn() -> tuple[Instance, ...]:
    draw = random.Random(SEED)
    levels = [name for name in DIFFICULTIES for _ in range(COUNTS[name])]
    for i in range(len(levels) - 1, 0, -1):  # Fisher-Yates with .random() alone
        j = int(draw.random() * (i + 1))
        levels[i], levels[j] = levels[j], levels[i]
    left = pairs()
    found: list[Instance] = []
    for n, name in enumerate(levels, start=1):
        pair = _pick(draw, left[name])
        left[name] = [p for p in left[name] if set(p) != set(pair)]
        found.append(Instance(f"review-{n:03d}", name, dict(OSCILLATOR), hidden={"pieces": pair}))
    return tuple(found)


def seeds() -> list[Instance]:
    """The seeds' own pair, without a draw."""
    return [Instance(SEED_ID, cast(str, level(*(CATALOGUE[key] for key in SEED_PAIR))), dict(OSCILLATOR), seed=True,
                     hidden={"pieces": SEED_PAIR})]


def instances() -> list[Instance]:
    return [*seeds(), *_drawn()]


def pieces_of(instance: Instance) -> dict[int, Piece]:
    """{1: Piece, 2: Piece} of an instance (its hidden catalogue keys)."""
    return {number: CATALOGUE[key] for number, key in enumerate(instance.hidden["pieces"], start=1)}


def variants(instance: Instance) -> dict[str, Variant]:
    if instance.seed:
        return dict(lab.VARIANTS)
    return lab.variants(pieces_of(instance))
