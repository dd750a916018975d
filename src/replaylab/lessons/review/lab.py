"""The review lab: the two pieces of code, the check tools, and the three reviewers' prompts.

The tools of a variant run the checks on its own instance's pieces (`pieces`: {1: Piece, 2: Piece}
of pieces.CATALOGUE); every instance's texts are the seed's, word for word, so that nothing an
agent reads tells one pair of pieces from another. `PIECES` are the seed's own two pieces as the
contract's checks take them.
"""

from collections.abc import Callable
from typing import Any

from replaylab.agents.tools import Allowlist, Names, Parameter, Tool, answer_tool
from replaylab.lessons import Prompts, Variant
from replaylab.lessons.review import pieces as catalogue
from replaylab.physics.integrators import symplectic_euler
from replaylab.verification import checks
from replaylab.verification.faulty import build_mislabelled_symplectic

MAX_STEPS = 12
# The names the agents, the judge and the pages use for the tools that are not one check each, and their results.
REPRODUCE_TOOL, ERROR_TOOL, ERROR_KEY = "reproduce_check", "oscillator_error", "distance_m"
PIECES = {
    1: checks.Candidate("symplectic Euler", lambda: symplectic_euler),
    2: checks.Candidate("explicit Euler as symplectic", build_mislabelled_symplectic),
}
# The seed instance's pieces in the catalogue: the same builders as PIECES (a test holds them equal).
SEED_PIECES = {1: catalogue.CATALOGUE[catalogue.CORRECT], 2: catalogue.CATALOGUE["explicit-euler"]}
PIECE_CLAIMS = "claim to be symplectic Euler, of order 1, with bounded energy"
CANDIDATE = Parameter("candidate", "the piece of code under review: 1 or 2", 1, 2, integer=True)
NUMBERED_CHECKS = ", ".join(f"{number} {name}" for number, name in enumerate(checks.CHECK_NAMES, start=1))
CHECK_NUMBER = Parameter("check", f"the check of the contract, by its number: {NUMBERED_CHECKS}", 1, 5, integer=True)
STEPS_PER_PERIOD = Parameter("steps_per_period", "integration steps per oscillation period", 20, 800, integer=True)

CHECK_DESCRIPTIONS = {
    "clock": "one step must advance the time by exactly dt",
    "purity": "the same step twice, with unrelated steps between, must give the same result",
    "limits": "no force gives uniform motion; a constant force gives the exact velocity",
    "convergence-order": "the error must shrink at the claimed order as the step shrinks",
    "bounded-energy": "the energy error late in a long run may not grow beyond 1.5 times the early one",
}
# What each check's `measured` and `tolerance` are, with their units: the agent reads these in the
# tools' descriptions, so that no number comes back without its name and unit.
MEASURED = {
    "clock": "measured: how far one step of 0.125 s from t = 3 s misses t = 3.125 s (s); tolerance: the largest miss that passes (s)",
    "purity": "measured: the largest difference between the two results of the same step, in position (m) or velocity (m/s); "
              "tolerance: the largest difference that passes",
    "limits": "measured: the largest error against uniform motion and against the exact motion under a constant force, in "
              "position (m, beyond the allowance of a first-order method) or velocity (m/s); tolerance: the largest error that passes",
    "convergence-order": "measured: the order fitted to the error as the step shrinks (no unit); tolerance: the largest distance "
                         "from the claimed order, 1, that passes",
    "bounded-energy": "measured: the largest energy error in the last 5 periods of a 100-period run divided by that of the "
                      "first 5 (no unit); tolerance: the largest ratio that passes",
}
PASSED = "passed: 1.0 if measured is within tolerance, else 0.0"


def check_content(result: checks.CheckResult) -> dict[str, float]:
    """A check's result as a tool returns it: measured, tolerance, passed (1.0 or 0.0), in that order."""
    return {"measured": result.measured, "tolerance": result.tolerance, "passed": 1.0 if result.passed else 0.0}


def check_tool_name(check: str) -> str:
    """The tool that runs one check: check_bounded_energy for bounded-energy."""
    return "check_" + check.replace("-", "_")


def check_of(name: str, arguments: dict[str, Any]) -> str | None:
    """The check a tool call runs, or None for a tool that is not a check (the error measurement)."""
    if name == REPRODUCE_TOOL:
        return checks.CHECK_NAMES[arguments["check"] - 1]
    return next((check for check in checks.CHECK_NAMES if check_tool_name(check) == name), None)


def _check_tool(name: str, exact: float, pieces: dict[int, catalogue.Piece] = SEED_PIECES) -> Tool:
    def function(candidate: int) -> dict[str, float]:
        return check_content(catalogue.check(name, pieces[candidate], exact))

    return Tool(
        check_tool_name(name),
        f"Run the {name} check on a piece of code: {CHECK_DESCRIPTIONS[name]}. Returns {MEASURED[name]}; {PASSED}.",
        (CANDIDATE,),
        function,
    )


def reproduce_tool(exact: float, pieces: dict[int, catalogue.Piece] = SEED_PIECES) -> Tool:
    def reproduce_check(check: int, candidate: int) -> dict[str, Any]:
        name = checks.CHECK_NAMES[check - 1]
        return {"check": name, **check_content(catalogue.check(name, pieces[candidate], exact))}

    return Tool(
        REPRODUCE_TOOL,
        f"Run any check of the contract by its number ({NUMBERED_CHECKS}) on a piece of code. Returns check "
        f"(the name of the check that ran), measured and tolerance (as each check tool describes them: "
        + "; ".join(f"{name}: {MEASURED[name]}" for name in checks.CHECK_NAMES) + f"), and {PASSED}.",
        (CHECK_NUMBER, CANDIDATE),
        reproduce_check,
    )


def error_tool(pieces: dict[int, catalogue.Piece] = SEED_PIECES) -> Tool:
    def oscillator_error(candidate: int, steps_per_period: int) -> dict[str, float]:
        return {ERROR_KEY: catalogue.error(pieces[candidate], steps_per_period)}

    return Tool(
        ERROR_TOOL,
        f"Step the oscillator with a piece of code for two periods. Returns {ERROR_KEY}: the largest distance (m) "
        "to the exact oscillator in the phase plane (x, v/omega).",
        (CANDIDATE, STEPS_PER_PERIOD),
        oscillator_error,
    )


REVIEWER_CHECKS = {
    "physics": ("limits", "bounded-energy"),
    "numerics": ("clock", "purity", "convergence-order"),
}


def remit(reviewer: str) -> tuple[str, ...]:
    """The checks a reviewer's answer speaks of: those its tools run (every one, for evidence)."""
    return REVIEWER_CHECKS.get(reviewer, checks.CHECK_NAMES)


def failed_field(piece: int) -> str:
    return f"piece_{piece}_failed"


def answer_text(answer: dict[str, Any]) -> str:
    """An answer as submitted, in words."""
    return "; ".join(f"piece {piece} fails {', '.join(answer[failed_field(piece)]) or 'none'}" for piece in PIECES)


def answer(reviewer: str) -> Tool:
    """A reviewer's answer tool: per piece, the checks of its remit that the piece fails."""
    names = remit(reviewer)
    return answer_tool(
        "Your answer; it ends the run. For each piece, the checks of your remit (" + ", ".join(names) + ") that it "
        "fails, each list possibly empty.",
        tuple(Names(failed_field(piece), f"the checks of your remit that piece {piece} fails", names) for piece in PIECES),
        echo=answer_text,
    )
REVIEWER_ROLES = {
    "physics": "You review the physics: does the code reproduce the known limits, and does it keep the energy bounded?",
    "numerics": "You review the numerics: is the clock right, is each step a pure function, is the order as claimed?",
    "evidence": "You reproduce evidence: you may rerun any check by number and measure the error against the exact solution.",
}


def reviewer_tools(reviewer: str, pieces: dict[int, catalogue.Piece] = SEED_PIECES) -> Callable[..., list[Tool]]:
    def tools(exact: float = checks.EXACT) -> list[Tool]:
        if reviewer == "evidence":
            return [reproduce_tool(exact, pieces), error_tool(pieces)]
        return [_check_tool(name, exact, pieces) for name in REVIEWER_CHECKS[reviewer]]

    return tools


def intro(reviewer: str) -> str:
    return (
        "You are one of three reviewers of two pieces of code that step a harmonic oscillator "
        f"(m = 0.5 kg, k = 2 N/m). Both {PIECE_CLAIMS}. {REVIEWER_ROLES[reviewer]} "
        "You act only through your tools; every tolerance was fixed before the review began."
    )


def task(reviewer: str) -> str:
    names = ", ".join(remit(reviewer))
    return (
        "Review piece 1 and piece 2. For each, run the checks your tools allow. Answer by calling answer with "
        f"{failed_field(1)} and {failed_field(2)}: the checks of your remit ({names}) that each piece fails, each "
        "list possibly empty; a check outside your remit is refused. Your answer is right when each list holds "
        "exactly the checks of your remit that fail when the build runs them itself. It is supported when you ran "
        "every check of your remit on both pieces yourself and named as failed exactly those whose results failed."
    )


# The prompts of recordings of format 1, before runs ended with an answer.
def format1_system(reviewer: str) -> str:
    return (
        "You are one of three reviewers of two pieces of code that step a harmonic oscillator "
        f"(m = 0.5 kg, k = 2 N/m). Both {PIECE_CLAIMS}. {REVIEWER_ROLES[reviewer]} "
        "You act only through your tools, at most 4 calls per message; every tolerance was fixed "
        "before the review began. When you are done, answer without calling a tool and give your "
        "verdict on each piece."
    )


FORMAT1_TASK = (
    "Review piece 1 and piece 2. For each, run the checks your tools allow and say whether it "
    "passes them."
)

REVIEWERS = ("physics", "numerics", "evidence")


def variants(pieces: dict[int, catalogue.Piece]) -> dict[str, Variant]:
    """{reviewer: Variant} of one pair of pieces: the seed's texts, tools on these pieces."""
    return {
        reviewer: Variant(reviewer, intro(reviewer), task(reviewer), reviewer_tools(reviewer, pieces), answer(reviewer),
                          budget=None, max_steps=MAX_STEPS, format1=Prompts(format1_system(reviewer), FORMAT1_TASK))
        for reviewer in REVIEWERS
    }


VARIANTS = variants(SEED_PIECES)


def all_tools(exact: float = checks.EXACT, pieces: dict[int, catalogue.Piece] = SEED_PIECES) -> Allowlist:
    """Every tool of the lesson on a fresh allowlist, run on `pieces` (the seed's by default)."""
    tools = [_check_tool(name, exact, pieces) for name in checks.CHECK_NAMES]
    return Allowlist(tools + [reproduce_tool(exact, pieces), error_tool(pieces)])
