"""The library in layers, arrows pointing down only, and one hierarchy of errors.

- the core (agents/, physics/, verification/, lessons/, errors, and http_deadlines, the openai
  client's HTTP layer, kept out of agents/ whose audit allows no networking) imports only the core;
- the services (everything else of the package) import the core and other services;
- the shells (the command line, `session`, MCP, the Inspect tasks, `python -m replaylab`) import
  anything, and nothing below them imports a shell;
- no import circle at all, counting the imports inside functions too.
"""

import ast
from pathlib import Path

import pytest

from helpers import ROOT, environment, in_process
from replaylab import errors, pipeline
from replaylab.lessons import registry

PACKAGE = ROOT / "src" / "replaylab"
CORE = ("replaylab.agents", "replaylab.physics", "replaylab.verification", "replaylab.lessons", "replaylab.errors",
        "replaylab.http_deadlines")
SHELLS = ("replaylab.cli", "replaylab.campaign_command", "replaylab.session", "replaylab.mcp_server",
          "replaylab.mcp_stdio", "replaylab.inspect_tasks", "replaylab.__main__")


def modules():
    """{module name: file} of the package (the lessons' own tests aside)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        if "tests" in path.relative_to(PACKAGE).parts:
            continue
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = modules()


def known(name):
    """The module of the package an import names (a name imported from a module: that module)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports(name):
    """The package's modules that module `name` imports, at its top or inside a function."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        found |= {known(t) for t in targets if t.startswith("replaylab")} - {None, name}
    return found


GRAPH = {name: imports(name) for name in MODULES}


def layer(name):
    if name == "replaylab" or any(name == c or name.startswith(f"{c}.") for c in CORE):
        return 0
    if any(name == s or name.startswith(f"{s}.") for s in SHELLS):
        return 2
    return 1


def test_no_import_points_up_a_layer():
    up = [(name, target) for name, targets in GRAPH.items() for target in targets if layer(target) > layer(name)]
    assert up == [], up
    assert layer("replaylab.recorder") == 1 and layer("replaylab.cli") == 2 and layer("replaylab.lessons.markdown") == 0


def test_there_is_no_import_circle():
    """Every import, those inside functions too: a depth-first walk finds no way back."""
    state, circles = {}, []

    def visit(name, path):
        state[name] = "open"
        for target in sorted(GRAPH[name]):
            if state.get(target) == "open":
                circles.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[name] = "done"

    for name in sorted(GRAPH):
        if name not in state:
            visit(name, [name])
    assert circles == [], circles


def test_the_check_finds_a_circle_and_an_arrow_up(monkeypatch):
    """The checks above can fail: a service that imports a shell is an arrow up, and with the shell's
    import of it, a circle."""
    monkeypatch.setitem(GRAPH, "replaylab.recorder", GRAPH["replaylab.recorder"] | {"replaylab.cli"})
    with pytest.raises(AssertionError):
        test_no_import_points_up_a_layer()
    with pytest.raises(AssertionError):
        test_there_is_no_import_circle()


# ---------------------------------------------------------------------------------------------
# One hierarchy of errors: the command line catches only replaylab's own


def test_every_error_a_command_reports_is_one_of_replaylabs_with_its_exit_code():
    from replaylab.agents.clients import ProviderError
    from replaylab.agents.recording import RecordingError
    from replaylab.agents.replay import ReplayMismatch
    from replaylab.configuration import InputError
    from replaylab.inputs import DamagedResult
    from replaylab.lessons import UnknownLesson
    from replaylab.selection import SelectionError

    for kind in (RecordingError, UnknownLesson, InputError, DamagedResult, SelectionError):
        assert issubclass(kind, errors.InvalidInput) and kind.exit_code == 2
    assert issubclass(ReplayMismatch, errors.ReplaylabError) and ReplayMismatch.exit_code == 3
    assert issubclass(ProviderError, errors.ReplaylabError) and ProviderError.exit_code == 1


def run_main(*args):
    ran = in_process(*args)  # cli.main as the console script runs it
    return ran.returncode, ran.stdout, ran.stderr


@pytest.mark.parametrize("bug", [KeyError("x"), ValueError("a ValueError of a bug"), RuntimeError("boom")])
def test_a_bug_is_said_to_be_one_and_never_reported_as_invalid_input(monkeypatch, bug):
    """An error that is not replaylab's own (a ValueError of a bug too) exits 1 and asks for a report."""

    def broken(lesson):
        raise bug

    monkeypatch.setattr(pipeline, "allowlists", broken)
    code, out, err = run_main("tools", "projectile")
    assert code == 1 and out == ""
    assert err.startswith("replaylab: unexpected error, a bug of replaylab (please report it") and type(bug).__name__ in err
    assert len(err.splitlines()) == 1


def test_invalid_input_is_one_line_and_exit_code_2():
    code, _, err = run_main("tasks", "astronomy")
    assert code == 2 and err == f"replaylab: unknown lesson 'astronomy'; the lessons are: {', '.join(registry.names())}\n"


# ---------------------------------------------------------------------------------------------
# The commands that read the configuration run from any folder


def test_campaign_doctor_and_verify_find_the_project_from_another_folder(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    plan = in_process("campaign", "--dry-run", "--model", "scripted-careful", "--lesson", "pendulum", "--runs", "1", cwd=elsewhere,
               env=environment(REPLAYLAB_PROJECT=str(ROOT)))
    assert plan.returncode == 0, plan.stderr
    assert "dry run: nothing sent, nothing written" in plan.stdout
    doctor = in_process("doctor", cwd=elsewhere, env=environment(REPLAYLAB_PROJECT=str(ROOT)))
    assert "config/config.yaml: valid (the workflow's schema and checks)" in doctor.stdout
    nowhere = in_process("verify", cwd=elsewhere, env=environment(REPLAYLAB_PROJECT=str(elsewhere)))
    assert nowhere.returncode == 2
    assert nowhere.stderr.startswith(f"replaylab: no replaylab project in {Path(elsewhere).resolve()} or above it")
