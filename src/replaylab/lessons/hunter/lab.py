"""The hunter lab: the drift tool, the two claims, and the prompts of a hunt."""

import threading
from dataclasses import dataclass

from replaylab.agents.tools import Allowlist, Choice, Parameter, Refused, Tool, answer_tool
from replaylab.lessons import Prompts, Variant
from replaylab.physics.drift import max_energy_drift_by_period, max_energy_drifts_at
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

# A pure function of its arguments: one process that replays or judges many hunts simulates each
# method and number of steps per period once, for the longest run the tool allows, and reads every
# shorter run's drift off it (the same bits as a run of its own: drift.max_energy_drift_by_period).
# Once a process has needed WHOLE_TABLE_AFTER of them for a method (a job of many hunts), it
# simulates every number of steps per period of the tool's bounds at once, with numpy (the same
# bits again: drift.max_energy_drifts_at, tested against the one-run function): a fifth of a
# second per method instead of about 4 s one by one.
WHOLE_TABLE_AFTER = 16
_STEPS = range(PARAMETERS[1].low, PARAMETERS[1].high + 1)
_PERIODS = range(PARAMETERS[2].low, PARAMETERS[2].high + 1)
_TABLES = {}  # method: {steps per period: (drift after 1, 2, ... periods)}
_TRACES = {}  # (method, steps per period): (drift after 1, 2, ... periods), one by one
# A campaign's recording job runs its runs in threads of one process: one at a time in the tables
# (a count over _TRACES while another thread adds to it raised "dictionary changed size during
# iteration", which the harness would record as the tool's answer).
_TABLES_LOCK = threading.Lock()


def _whole_table(method):
    try:
        found = max_energy_drifts_at(method, list(_STEPS), list(_PERIODS))
    except ValueError:  # a run whose energy stops being finite: left to the one-by-one runs
        return None
    return {n: tuple(float(found[p][i]) for p in range(len(_PERIODS))) for i, n in enumerate(_STEPS)}


def _drift_by_period(method, steps_per_period):
    with _TABLES_LOCK:
        return _drift_by_period_unlocked(method, steps_per_period)


def _drift_by_period_unlocked(method, steps_per_period):
    table = _TABLES.get(method)
    if table is not None:
        return table[steps_per_period]
    key = (method, steps_per_period)
    if key not in _TRACES:
        if sum(known == method for known, _ in _TRACES) >= WHOLE_TABLE_AFTER:
            _TABLES[method] = table = _whole_table(method)
            if table is not None:
                return table[steps_per_period]
        _TRACES[key] = tuple(max_energy_drift_by_period(method, steps_per_period, _PERIODS[-1]))
    return _TRACES[key]


def _max_energy_drift(method, steps_per_period, periods):
    drift = _drift_by_period(method, steps_per_period)[periods - 1]
    if drift is None:
        raise ValueError("the energy of the run is not finite")
    return drift


def drift_tool():
    def oscillator_energy_drift(method, steps_per_period, periods):
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


def _experiment_goes_with_outcome(fields):
    given = [p.name for p in EXPERIMENT if p.name in fields]
    if fields["outcome"] == COUNTEREXAMPLE:
        missing = [p.name for p in EXPERIMENT if p.name not in fields]
        if missing:
            raise Refused(f"a counterexample names its experiment: missing {', '.join(missing)}")
    elif given:
        raise Refused(f"{NONE_FOUND} names no experiment: remove {', '.join(given)}")


def answer_text(answer):
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
    fixed: dict
    ranges: dict
    key: str
    limit: float
    budget: int

    def covers(self, arguments):
        if any(arguments.get(k) != v for k, v in self.fixed.items()):
            return False
        return all(k in arguments and low <= arguments[k] <= high for k, (low, high) in self.ranges.items())

    def holds_on(self, value):
        return value <= self.limit


DOMAIN = {"steps_per_period": (16, 200), "periods": (1, 50)}
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

INTRO = (
    "You hunt for counterexamples. You are given a claim about a numerical integrator and a tool "
    "that measures the largest energy error of a simulated oscillator. Each call of the tool is "
    "one experiment, and calls outside the tool's bounds are refused. Look for one experiment inside "
    "the claim's domain whose result breaks the claim."
)


def task(claim):
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


def format1_task(claim):
    return (
        f"The claim: {claim.statement} You may run at most {claim.budget} experiments with "
        f"{claim.tool}. Find a counterexample if one exists."
    )


def tools():
    return [drift_tool()]


VARIANTS = {
    name: Variant(name, INTRO, task(claim), tools, ANSWER, budget=BUDGET, max_steps=MAX_STEPS,
                  format1=Prompts(FORMAT1_SYSTEM, format1_task(claim)))
    for name, claim in CLAIMS.items()
}


def all_tools():
    """Every tool of the lesson on a fresh allowlist (with its fresh budget)."""
    return Allowlist(tools(), budget=BUDGET)
