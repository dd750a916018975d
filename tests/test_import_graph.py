"""The import graph behind the workflow's `code=` inputs, on small packages written for each test,
and on replaylab itself against what Python really imports."""

import subprocess
import sys
import textwrap

import pytest

from helpers import ROOT
from replaylab.import_graph import ImportGraph, ImportGraphError


def write(folder, files):
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


def names(folder, paths):
    return sorted(str(p.relative_to(folder)) for p in paths)


@pytest.fixture
def tree(tmp_path):
    return write(
        tmp_path,
        {
            "src/pkg/__init__.py": "",
            "src/pkg/a.py": "import numpy\nfrom pkg import b\n",
            "src/pkg/b.py": "from .sub import c\n",
            "src/pkg/sub/__init__.py": "from ..d import VALUE\n",
            "src/pkg/sub/c.py": "def late():\n    import pkg.e\n",
            "src/pkg/d.py": "VALUE = 1\n",
            "src/pkg/e.py": "import json, os.path\n",
            "src/pkg/unused.py": "",
            "scripts/job.py": "from pkg.a import anything\n",
        },
    )


def test_a_script_imports_its_modules_their_packages_and_what_they_import(tree):
    graph = ImportGraph([tree / "scripts", tree / "src"])
    found = names(tree, graph.files(scripts=[tree / "scripts" / "job.py"]))
    assert found == [
        "scripts/job.py",
        "src/pkg/__init__.py",
        "src/pkg/a.py",
        "src/pkg/b.py",  # `from pkg import b`: a module, not a name
        "src/pkg/d.py",  # relative import two levels up, from a package's __init__
        "src/pkg/e.py",  # imported inside a function
        "src/pkg/sub/__init__.py",
        "src/pkg/sub/c.py",
    ]


def test_roots_by_module_name_add_what_only_a_computed_name_imports(tree):
    graph = ImportGraph([tree / "src"])
    assert names(tree, graph.files(modules=["pkg.d"])) == ["src/pkg/__init__.py", "src/pkg/d.py"]
    assert "src/pkg/unused.py" in names(tree, graph.files(modules=["pkg.unused"]))


def test_direct_imports_of_one_file(tree):
    graph = ImportGraph([tree / "src"])
    assert graph.imports(tree / "src" / "pkg" / "b.py", "pkg.b") == {"pkg", "pkg.sub", "pkg.sub.c"}
    assert graph.imports(tree / "src" / "pkg" / "e.py", "pkg.e") == set()  # the standard library is not followed


def test_the_cache_gives_the_same_files_and_a_changed_file_is_read_again(tree):
    cache_file = tree / "cache" / "imports.json"
    job = tree / "scripts" / "job.py"
    first = ImportGraph([tree / "scripts", tree / "src"], cache_file).files(scripts=[job])
    assert cache_file.is_file() and first == ImportGraph([tree / "scripts", tree / "src"]).files(scripts=[job])
    assert ImportGraph([tree / "scripts", tree / "src"], cache_file).files(scripts=[job]) == first
    (tree / "src" / "pkg" / "d.py").write_text("import pkg.unused\nVALUE = 1\n")  # a new import: another size
    again = ImportGraph([tree / "scripts", tree / "src"], cache_file).files(scripts=[job])
    assert names(tree, again) == sorted([*names(tree, first), "src/pkg/unused.py"])
    cache_file.write_text("not json")  # a damaged cache is read as none
    assert ImportGraph([tree / "scripts", tree / "src"], cache_file).files(scripts=[job]) == again


def test_a_relative_import_above_the_top_is_ignored(tmp_path):
    write(tmp_path, {"alone.py": "from .. import x\nfrom . import y\n"})
    assert ImportGraph([tmp_path]).imports(tmp_path / "alone.py") == set()


def test_an_unknown_root_and_a_syntax_error_are_one_line_each(tree):
    graph = ImportGraph([tree / "src"])
    with pytest.raises(ImportGraphError, match=r"^no module pkg\.missing in .*src$"):
        graph.files(modules=["pkg.missing"])
    (tree / "src" / "pkg" / "d.py").write_text("def broken(:\n")
    with pytest.raises(ImportGraphError, match=r"src/pkg/d\.py, line 1: "):
        ImportGraph([tree / "src"]).files(modules=["pkg.d"])


def test_the_graph_of_replaylab_holds_every_module_python_imports():
    """What a script of the workflow imports for real (sys.modules after the import) is in the graph."""
    # each script ends by running its job (`run(snakemake, main)`): without Snakemake's object it
    # stops there, after its imports
    script = ("import sys, runpy\ntry:\n    runpy.run_path(sys.argv[1], init_globals={'snakemake': None})\n"
              "except AttributeError:\n    pass\nprint('\\n'.join(sorted(sys.modules)))")
    for entry in sorted((ROOT / "scripts").glob("*.py")):
        imported = subprocess.run(
            [sys.executable, "-c", script, str(entry)], capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout.split()
        ours = {name for name in imported if name == "replaylab" or name.startswith("replaylab.")}
        graph = ImportGraph([ROOT / "scripts", ROOT / "src"])
        files = set(graph.files(scripts=[entry]))
        missing = {name for name in ours if graph.file_of(name) not in files}
        assert ours and not missing, (entry.name, sorted(missing))
