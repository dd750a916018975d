"""The scripted baseline agent of the projectile lesson: a program, not a language model.

It narrows the best whole-degree angle with a coarse step, then checks that the answer survives
smaller steps, deciding each message from the results it has read so far.
"""

from replaylab.agents.messages import ModelMessage, ToolCall, exchanges
from replaylab.lessons.projectile import lab

COARSE_DT, FINE_DTS = 0.01, (0.002, 0.001)
MODEL = "projectile baseline search (a scripted program, not a language model)"


def _ranges(conversation):
    """{dt: {angle: range}} of the accepted range_with_drag calls so far."""
    found = {}
    for call, result in exchanges(conversation):
        if result.ok and call is not None and call.name == "range_with_drag":
            found.setdefault(call.arguments["dt"], {})[call.arguments["angle"]] = result.content["range_m"]
    return found


def _best(ranges):
    return max(ranges, key=lambda angle: (ranges[angle], -angle))


def _calls(angles, dt, start):
    return tuple(
        ToolCall(str(start + i), "range_with_drag", {"speed": lab.SPEED, "angle": a, "dt": dt}) for i, a in enumerate(angles)
    )


def _clamp(angles, known):
    low, high = lab.ANGLE_PARAMETER.low, lab.ANGLE_PARAMETER.high
    return sorted({a for a in angles if low <= a <= high and a not in known})


def _around(ranges, centre, reach):
    """Angles within `reach` of the best measured angle (or `centre`) not yet measured at this dt."""
    best = _best(ranges) if ranges else centre
    return best, _clamp(range(best - reach, best + reach + 1), ranges)


def baseline(variant="default", seed=0):
    """A program(conversation) -> ModelMessage; `seed` shifts the first coarse angles by whole degrees."""
    first = [30 + seed % 5, 36 + seed % 5, 42 + seed % 5, 48 + seed % 5]

    def program(conversation):
        found = _ranges(conversation)
        count = sum(len(v) for v in found.values())
        coarse = found.get(COARSE_DT, {})
        if not coarse:
            return ModelMessage("Coarse survey with dt = 0.01 s.", _calls(first, COARSE_DT, 1))
        best, missing = _around(coarse, None, 2)
        if missing:
            return ModelMessage(f"Narrowing around {best} degrees at dt = 0.01 s.", _calls(missing[:4], COARSE_DT, count + 1))
        for dt in FINE_DTS:
            best, missing = _around(found.get(dt, {}), best, 1)
            if missing:
                return ModelMessage(
                    f"Checking convergence: the angles around {best} degrees again with dt = {dt:g} s.",
                    _calls(missing, dt, count + 1),
                )
        finest = found[FINE_DTS[-1]]
        neighbour = max((a for a in (best - 1, best + 1) if a in finest), key=lambda a: finest[a])
        low, high = sorted((best, neighbour))
        return ModelMessage(
            f"At dt = {FINE_DTS[-1]:g} s the best whole-degree angle is {best} and the runner-up {neighbour}; "
            f"the best angle lies between {low} and {high} degrees.",
            (),
        )

    return program
