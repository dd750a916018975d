"""Which files the source audit (tests/test_audit.py) reads: the code a model's request can reach.

replaylab/agents, replaylab/physics, replaylab/verification, the lesson contract and registry, and
the tool, judging, scan and exercise code of every lesson of the registry: those parts and every
module of the lesson's package that they import (a lesson that keeps its simulation in a module of
its own, say), never figures.py or page.py (which write result files and live outside the audited
code).
"""

from helpers import ROOT
from replaylab.import_graph import ImportGraph
from replaylab.lessons import registry

SRC = ROOT / "src"
PACKAGE = SRC / "replaylab"
LESSON_CONTRACT = "lessons/__init__.py"  # imports a part of a lesson (a name of its PARTS)
LESSON_REGISTRY = "lessons/registry.py"  # imports a lesson's package (a name of its list)
AUDITED_PARTS = ("__init__", "lab", "judge", "scans", "exercises")


def package_folder(lesson):
    """The folder of a lesson's package, from its declared module name."""
    return SRC.joinpath(*lesson.package.split("."))


def audited_files():
    files = sorted((PACKAGE / "agents").rglob("*.py"))
    files += sorted((PACKAGE / "physics").glob("*.py"))
    files += sorted((PACKAGE / "verification").glob("*.py"))
    files += [PACKAGE / LESSON_CONTRACT, PACKAGE / LESSON_REGISTRY]
    for lesson in registry.lessons():
        files += lesson_files(lesson)
    return files


def lesson_files(lesson):
    """The audited parts of a lesson and the modules of its package that they import, directly or not."""
    folder = package_folder(lesson)
    reached = ImportGraph([SRC]).files(modules=[f"{lesson.package}.{part}" for part in AUDITED_PARTS])
    return [path for path in reached if folder in path.parents]
