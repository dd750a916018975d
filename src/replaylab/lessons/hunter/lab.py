"""The hunter lab: the drift tool, the claims (the seeds' two, and any drawn one), and the prompts of a hunt."""

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from replaylab.agents.tools import Allowlist, Choice, Parameter, Refused, Tool, answer_tool
from replaylab.lessons import Instance, Prompts, Variant
from replaylab.lessons.hunter import drift_table
from replaylab.physics.integrators import STEPPERS

BUDGET = 8
MAX_STEPS = 12
TOOL_NAME = "oscillator_energy_drift"
RESULT_KEY = "max_energy_drift"
PARAMETERS = (
    Choice("method", "the integrator", tuple(STEPPERS)),
    Parameter("steps_per_period", "integration steps per oscillation period", 4, 200, integer=True),
    Parameter("periods", "number of periods simulated", 1, 50, integer=True),
)

# A pure function of its arguments, read off the table of every experiment the tool allows, simulated
# once per process and method (drift_table: the same bits as a run of its own, tested). The family's
# draw needs the tables anyway, so a session or a replay has them before its first call. Their bounds
# are the tool's (a test checks it).


def _max_energy_drift(method: str, steps_per_period: int, periods: int) -> float:
    drift = drift_table.drift(method, steps_per_period, periods)
    if not math.isfinite(drift):  # never within the tool's bounds (drift_table)
        raise ValueError("the energy of the run is not finite")
    return drift


def drift_tool() -> Tool:
    def oscillator_energy_drift(method: str, steps_per_period: int, periods: int) -> dict[str, float]:
        return {RESULT_KEY: _max_energy_drift(method, steps_per_period, periods)}

    return Tool(
        TOOL_NAME,
        "Simulate the oscillator (m = 0.5 kg, k = 2 N/m, released from rest at 1 m) with the method, for "
        f"periods periods of steps_per_period steps each. Returns {RESULT_KEY}: the largest relative energy "
        "error |E/E0 - 1| over the whole run (a pure number: 0.05 is 5 %).",
        PARAMETERS,
        oscillator_energy_drift,
    )


COUNTEREXAMPLE, NONE_FOUND = "counterexample", "none found"
EXPERIMENT = tuple(
    Parameter(p.name, f"the counterexample's {p.description} (only with outcome {COUNTEREXAMPLE})", p.low, p.high,
              integer=True, optional=True) if isinstance(p, Parameter)
    else Choice(p.name, f"the counterexample's integrator (only with outcome {COUNTEREXAMPLE})", p.options, optional=True)
    for p in PARAMETERS
)
OUTCOME = Choice("outcome", f"{COUNTEREXAMPLE}: an experiment breaks the claim; {NONE_FOUND}: you found none", (COUNTEREXAMPLE, NONE_FOUND))


def _experiment_goes_with_outcome(fields: dict[str, Any]) -> None:
    given = [p.name for p in EXPERIMENT if p.name in fields]
    if fields["outcome"] == COUNTEREXAMPLE:
        missing = [p.name for p in EXPERIMENT if p.name not in fields]
        if missing:
            raise Refused(f"a counterexample names its experiment: missing {', '.join(missing)}")
    elif given:
        raise Refused(f"{NONE_FOUND} names no experiment: remove {', '.join(given)}")


def answer_text(answer: dict[str, Any]) -> str:
    """An answer as submitted, in words."""
    if answer["outcome"] == COUNTEREXAMPLE:
        periods = answer["periods"]
        return (f"counterexample {answer['method']}, {answer['steps_per_period']} steps per period, "
                f"{periods} {'period' if periods == 1 else 'periods'}")
    return NONE_FOUND


ANSWER = answer_tool(
    f"Your answer; it ends the run. outcome {COUNTEREXAMPLE} with the experiment that breaks the claim "
    f"(method, steps_per_period, periods), or outcome {NONE_FOUND} with no experiment.",
    (OUTCOME, *EXPERIMENT),
    _experiment_goes_with_outcome,
    answer_text,
)


@dataclass(frozen=True)
class Claim:
    """A statement about a tool's result over a domain; one experiment above the limit refutes it."""

    name: str
    statement: str
    tool: str
    fixed: dict[str, Any]
    ranges: dict[str, tuple[int, int]]
    key: str
    limit: float
    budget: int

    def covers(self, arguments: dict[str, Any]) -> bool:
        if any(arguments.get(k) != v for k, v in self.fixed.items()):
            return False
        return all(k in arguments and low <= arguments[k] <= high for k, (low, high) in self.ranges.items())

    def holds_on(self, value: float) -> bool:
        return value <= self.limit


DOMAIN: dict[str, tuple[int, int]] = {"steps_per_period": (16, 200), "periods": (1, 50)}
# Each claim (and the variant that hunts it) is named by what it is about, never by whether it
# holds: the agent sees the name, and the answer is what the hunt must find.
CLAIMS = {
    "symplectic-euler": Claim(
        "symplectic-euler",
        "Symplectic Euler keeps the oscillator's energy within 5 % of its initial value for every "
        "run of 16 to 200 steps per period and 1 to 50 periods.",
        TOOL_NAME, {"method": "symplectic Euler"}, DOMAIN, RESULT_KEY, 0.05, BUDGET,
    ),
    "velocity-verlet": Claim(
        "velocity-verlet",
        "Velocity Verlet keeps the oscillator's energy within 4 % of its initial value for every "
        "run of 16 to 200 steps per period and 1 to 50 periods.",
        TOOL_NAME, {"method": "velocity Verlet"}, DOMAIN, RESULT_KEY, 0.04, BUDGET,
    ),
}

# How an instance's parameters name the claim (family.PARAMETERS describes them).
METHOD, LIMIT = "method", "limit_percent"
RANGES = {"steps_per_period": ("steps_per_period_low", "steps_per_period_high"), "periods": ("periods_low", "periods_high")}


def variant_name(method: str) -> str:
    """The variant that hunts a claim about a method: named by the method alone ("velocity-verlet")."""
    return method.lower().replace(" ", "-")


def percent_text(percent: float) -> str:
    """A limit in per cent as the claim states it: the shortest decimal of the number, no exponent."""
    return format(Decimal(repr(float(percent))).normalize(), "f")


def limit_of(percent: float) -> float:
    """The limit on |E/E0 - 1| that a limit in per cent states: the double nearest percent / 100 as
    written ("4.5 %" is 0.045, never 4.5 / 100 rounded twice)."""
    return float(Decimal(percent_text(percent)) / 100)


def claim(name: str, method: str, percent: float, ranges: dict[str, tuple[int, int]]) -> Claim:
    """A claim that a method keeps the energy within `percent` % over a domain of runs, in the seeds' words."""
    (low_n, high_n), (low_p, high_p) = ranges["steps_per_period"], ranges["periods"]
    statement = (f"{method[0].upper()}{method[1:]} keeps the oscillator's energy within {percent_text(percent)} % of its "
                 f"initial value for every run of {low_n} to {high_n} steps per period and {low_p} to {high_p} periods.")
    ranges = {"steps_per_period": (low_n, high_n), "periods": (low_p, high_p)}
    return Claim(name, statement, TOOL_NAME, {"method": method}, ranges, RESULT_KEY, limit_of(percent), BUDGET)


def parameters_of(method: str, percent: float, ranges: dict[str, tuple[int, int]]) -> dict[str, Any]:
    """An instance's parameters, named as its claim states them."""
    return {METHOD: method, LIMIT: percent, **{k: v for key, names in RANGES.items() for k, v in zip(names, ranges[key])}}


def claim_of(instance: Instance) -> Claim:
    """The claim an instance is about: a seed's own (named by its variant), or a drawn one (named by
    the instance's id, so that two drawn claims about one method are told apart on the pages)."""
    p = instance.parameters
    if instance.seed:
        return CLAIMS[variant_name(p[METHOD])]
    return claim(instance.id, p[METHOD], p[LIMIT], {key: (p[low], p[high]) for key, (low, high) in RANGES.items()})


INTRO = (
    "You hunt for counterexamples. You are given a claim about a numerical integrator and a tool "
    "that measures the largest energy error of a simulated oscillator. Each call of the tool is "
    "one experiment, and calls outside the tool's bounds are refused. Look for one experiment inside "
    "the claim's domain whose result breaks the claim."
)


def task(claim: Claim) -> str:
    return (
        f"The claim: {claim.statement} You may run at most {claim.budget} experiments with "
        f"{claim.tool}. Find a counterexample if one exists. Answer by calling answer with outcome "
        f"{COUNTEREXAMPLE!r} and the experiment that breaks the claim (method, steps_per_period, periods), or "
        f"with outcome {NONE_FOUND!r}. A counterexample is right when the build runs that experiment itself "
        "and its result breaks the claim; any experiment inside the claim's domain whose result is above the "
        f"limit counts. {NONE_FOUND!r} is right when the build's own scan of the whole domain finds no "
        "experiment that breaks the claim. A counterexample is supported when it is one of your own experiments "
        f"inside the domain (the first {claim.budget} of them count) and you saw its result break the claim; "
        f"{NONE_FOUND!r} is supported when you ran at least one experiment inside the domain and none of those "
        "that count broke it."
    )


# The prompts of recordings of format 1, before runs ended with an answer.
FORMAT1_SYSTEM = (
    "You hunt for counterexamples. You are given a claim about a numerical integrator and a tool "
    "that measures the largest energy error of a simulated oscillator. Each call of the tool is "
    "one experiment; you have a fixed budget of experiments, and calls outside the tool's bounds "
    "are refused. Use at most 4 tool calls per message. Look for one experiment inside the claim's "
    "domain whose result breaks the claim. When you stop, answer without calling a tool and say "
    "whether you found a counterexample."
)


def format1_task(claim: Claim) -> str:
    return (
        f"The claim: {claim.statement} You may run at most {claim.budget} experiments with "
        f"{claim.tool}. Find a counterexample if one exists."
    )


def tools() -> list[Tool]:
    return [drift_tool()]


VARIANTS = {
    name: Variant(name, INTRO, task(claim), tools, ANSWER, budget=BUDGET, max_steps=MAX_STEPS,
                  format1=Prompts(FORMAT1_SYSTEM, format1_task(claim)))
    for name, claim in CLAIMS.items()
}


def variant(claim: Claim) -> Variant:
    """The variant that hunts a drawn claim: the seeds' rules, tools and answer, the claim's own task
    (no recording of format 1 was ever made of one)."""
    name = variant_name(claim.fixed["method"])
    return Variant(name, INTRO, task(claim), tools, ANSWER, budget=BUDGET, max_steps=MAX_STEPS)


def all_tools() -> Allowlist:
    """Every tool of the lesson on a fresh allowlist (with its fresh budget)."""
    return Allowlist(tools(), budget=BUDGET)
