"""The build's answer of each pendulum instance: the exact crossing of its threshold, from the
arithmetic-geometric mean (bisection until the two ends are neighbouring doubles, no simulation), and
the bracket of its precision that holds it. Thresholds shared by several instances are bisected once."""

from collections.abc import Iterable
from typing import Any

from replaylab.lessons import Instance, shown
from replaylab.lessons.pendulum import family


def answer(excess: float, precision: float) -> dict[str, Any]:
    """{threshold, precision_deg, crossing, bracket} of one question (it does not depend on L or g)."""
    crossing = family.crossing(excess)
    return {"threshold": excess, "precision_deg": precision, "crossing": shown(crossing, f"{crossing:.4f}"),
            "bracket": family.bracket(crossing, precision)}


def answers(instances: Iterable[Instance]) -> dict[str, dict[str, Any]]:
    return {i.id: answer(family.excess(i), family.precision(i)) for i in instances}
