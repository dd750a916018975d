"""The build's answer of each review instance: the checks each piece fails when the build runs every
check on it itself (pieces.failures). The checks are pure per (piece, check) and cached per piece,
so the family costs one run of the five checks per catalogue entry it uses, however many instances
share it."""

from collections.abc import Iterable
from typing import Any

from replaylab.lessons import Instance
from replaylab.lessons.review import pieces
from replaylab.lessons.review.family import pieces_of


def answers(instances: Iterable[Instance]) -> dict[str, dict[str, Any]]:
    return {instance.id: {"failures": {str(number): pieces.failures(piece) for number, piece in pieces_of(instance).items()}}
            for instance in instances}
