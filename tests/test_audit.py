"""Source audit (AST) of the code a model's request can reach, and of the committed recordings.

The audited code: replaylab/agents, replaylab/physics, replaylab/verification, the lesson contract and
registry, and the tool, judging, scan and exercise code of every lesson of the registry (lab, judge,
scans, exercises and the package's __init__), never figures.py or page.py (which write result files
and live outside the audited code).

Each named exception is one module, and the test asserts both that the exception is really used
there and that no other audited module does the same.
"""

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from helpers import ROOT
from helpers.audit import AUDITED_PARTS, LESSON_CONTRACT, LESSON_REGISTRY, PACKAGE, audited_files, package_folder
from replaylab.lessons import registry

FORBIDDEN_IMPORTS = {
    "subprocess", "socket", "ssl", "http", "urllib", "requests", "httpx", "aiohttp", "ctypes", "pickle", "shelve",
    "marshal", "multiprocessing", "shutil", "webbrowser", "code", "codeop", "runpy", "pty",
    "builtins",  # the way around the forbidden calls below
}
FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__", "open", "input", "getattr", "setattr", "globals", "vars"}
FILE_OPERATIONS = {"open", "fdopen", "write", "write_text", "write_bytes", "mkdir", "makedirs", "unlink", "remove",
                   "rmdir", "rename", "touch", "mkstemp", "mkdtemp", "fsync", "truncate", "chmod", "symlink_to", "link"}
ENVIRONMENT_ATTRIBUTES = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}
STANDARD_STREAMS = {"stdin", "stdout", "__stdin__", "__stdout__"}
DYNAMIC_IMPORT = {"importlib", "importlib.util", "importlib.machinery", "imp", "pkgutil", "zipimport"}

RECORDING = "agents/recording.py"
ENVIRONMENT = "agents/environment.py"
PROVIDER_LOADER = "agents/clients/__init__.py"
DYNAMIC_IMPORTERS = {PROVIDER_LOADER, LESSON_CONTRACT, LESSON_REGISTRY}
OPENAI_CLIENT = "agents/clients/openai.py"
INTERACTIVE = "agents/clients/interactive.py"
FAULTY = "replaylab.verification.faulty"


# ---------------------------------------------------------------------------------------------
# What one module does, from its syntax tree


def dotted(node):
    """'os.environ.get' for an attribute chain on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


@dataclass
class Module:
    name: str  # path relative to src/replaylab, e.g. "agents/tools.py"
    imports: set = field(default_factory=set)  # full module names, and module.name for from-imports
    plain_imports: set = field(default_factory=set)  # the modules of `import x.y` statements
    from_names: set = field(default_factory=set)  # "os:environ" for `from os import environ`
    names: set = field(default_factory=set)  # every Name loaded
    calls: list = field(default_factory=list)  # (dotted name or attribute name, line, node)
    attributes: set = field(default_factory=set)  # every dotted attribute chain on a name
    tree: ast.AST = None

    @property
    def top_imports(self):
        return {name.split(".")[0] for name in self.imports}

    def called(self, name):
        return [line for called, line, _ in self.calls if called == name]

    def attribute_calls(self, attr):
        return [called for called, _, node in self.calls if isinstance(node.func, ast.Attribute) and node.func.attr == attr]


def analyse(source, relative="module.py"):
    tree = ast.parse(source)
    module = Module(relative, tree=tree)
    package = ["replaylab"] + list(Path(relative).parent.parts)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            module.imports.update(alias.name for alias in node.names)
            module.plain_imports.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module
            module.imports.add(base)
            for alias in node.names:
                module.imports.add(f"{base}.{alias.name}")
                module.from_names.add(f"{base}:{alias.name}")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            module.names.add(node.id)
        elif isinstance(node, ast.Attribute):
            chain = dotted(node)
            if chain:
                module.attributes.add(chain)
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else dotted(func) or (
                func.attr if isinstance(func, ast.Attribute) else None
            )
            module.calls.append((name, node.lineno, node))
    return module


def load_modules(files):
    return {
        str(path.relative_to(PACKAGE)): analyse(path.read_text("utf-8"), str(path.relative_to(PACKAGE)))
        for path in files
    }


AUDITED = load_modules(audited_files())
EVERYTHING = load_modules(sorted(PACKAGE.rglob("*.py")))


def test_the_audited_files_exist_and_exclude_figures_and_pages():
    for path in audited_files():
        assert path.is_file(), path
    names = set(AUDITED)
    assert {"agents/tools.py", "agents/loop.py", "agents/replay.py", RECORDING, PROVIDER_LOADER, INTERACTIVE,
            LESSON_CONTRACT, LESSON_REGISTRY, "verification/checks.py", "verification/faulty.py"} <= names
    for lesson in registry.lessons():  # every lesson of the registry, none left unaudited
        folder = str(package_folder(lesson).relative_to(PACKAGE))
        assert {f"{folder}/{part}.py" for part in AUDITED_PARTS} <= names, lesson.name
    assert not any(name.endswith(("figures.py", "page.py")) for name in names)
    assert len(AUDITED) >= 30


# ---------------------------------------------------------------------------------------------
# Rules for every audited module


@pytest.mark.parametrize("name", sorted(AUDITED))
def test_no_forbidden_import(name):
    module = AUDITED[name]
    assert not (module.top_imports & FORBIDDEN_IMPORTS), sorted(module.top_imports & FORBIDDEN_IMPORTS)


# What the audited code may import (an allow-list: a networking library not named in
# FORBIDDEN_IMPORTS, httpx2 or urllib3 say, is refused all the same): the standard library's pure
# computation, numpy and replaylab, and for a few modules, named, what their one job needs.
ALLOWED_IMPORTS = {
    "__future__", "abc", "bisect", "cmath", "collections", "copy", "dataclasses", "decimal", "enum", "fractions", "functools",
    "heapq", "itertools", "json", "math", "numbers", "operator", "random", "re", "statistics", "string", "textwrap",
    "types", "typing", "numpy", "replaylab",
}
ALLOWED_BY_MODULE = {
    RECORDING: {"datetime", "errno", "os", "pathlib", "stat", "tempfile", "jsonschema", "fastjsonschema", "importlib"},
    OPENAI_CLIENT: {"openai", "logging"},  # the SDK that sends the requests, and its retry log
    PROVIDER_LOADER: {"importlib", "pkgutil", "shlex"},
    LESSON_CONTRACT: {"importlib", "matplotlib"},  # a lesson's parts, and the type of its figures
    LESSON_REGISTRY: {"importlib"},
    ENVIRONMENT: {"os"},
    INTERACTIVE: {"sys"},  # its JSON lines on stdin and stdout
    "agents/live.py": {"signal"},  # a session's end on SIGTERM and SIGHUP
    "agents/loop.py": {"time"},  # the per-run limit of seconds
    "lessons/hunter/drift_table.py": {"threading"},  # its tables made once, whichever thread asks first
}


@pytest.mark.parametrize("name", sorted(AUDITED))
def test_only_allowed_imports(name):
    allowed = ALLOWED_IMPORTS | ALLOWED_BY_MODULE.get(name, set())
    assert AUDITED[name].top_imports <= allowed, sorted(AUDITED[name].top_imports - allowed)


def test_each_module_uses_all_of_its_own_allowance():  # so that an allowance never outlives its use
    for name, allowance in ALLOWED_BY_MODULE.items():
        assert allowance <= AUDITED[name].top_imports, (name, sorted(allowance - AUDITED[name].top_imports))


@pytest.mark.parametrize("name", sorted(AUDITED))
def test_no_forbidden_call_or_reference(name):
    module = AUDITED[name]
    # not called, not even named (so not aliased either), and not reached through builtins
    assert not (module.names & FORBIDDEN_CALLS), sorted(module.names & FORBIDDEN_CALLS)
    assert "__builtins__" not in module.names
    assert not any(c.startswith(("builtins.", "__builtins__.")) for c, _, _ in module.calls if c)


@pytest.mark.parametrize("name", sorted(set(AUDITED) - {RECORDING}))
def test_only_the_recording_module_touches_files(name):
    module = AUDITED[name]
    allowed = {"os"} if name == ENVIRONMENT else set()  # for os.environ only, checked below
    assert module.top_imports & {"os", "tempfile", "io", "fcntl", "mmap", "glob", "pathlib"} <= allowed
    touched = {called for called, _, node in module.calls if isinstance(node.func, ast.Attribute)
               and node.func.attr in FILE_OPERATIONS}
    if name == INTERACTIVE:
        # writes its JSON lines to the stream it was given (sys.stdout by default), never to a file
        assert touched == {"self._out.write"}
    else:
        assert touched == set(), touched


def test_the_recording_module_opens_writes_renames_and_syncs():
    module = AUDITED[RECORDING]
    assert {"os", "tempfile"} <= module.top_imports
    # a file of no name (O_TMPFILE) or a named temporary one, written, synced, then linked or renamed
    for operation in ("tempfile.mkstemp", "os.write", "os.fsync", "os.replace", "os.link", "os.unlink"):
        assert module.called(operation), operation
    # reads a file without blocking (a pipe in its place)
    for operation in ("os.open", "os.fstat", "os.read", "os.close"):
        assert module.called(operation), operation
    # and nothing else of os: no environment, no processes
    os_uses = {a for a in module.attributes if a.startswith("os.")}
    assert os_uses <= {"os.fsync", "os.replace", "os.path", "os.path.exists", "os.unlink", "os.fchmod", "os.stat", "os.umask",
                       "os.open", "os.O_RDONLY", "os.O_NONBLOCK", "os.O_NOCTTY", "os.O_TMPFILE", "os.O_WRONLY", "os.O_DIRECTORY",
                       "os.fstat", "os.read", "os.write", "os.close", "os.link", "os.urandom", "os.path.isdir",
                       "os.path.islink", "os.path.lexists"}, os_uses


@pytest.mark.parametrize("name", sorted(set(AUDITED) - {ENVIRONMENT}))
def test_only_the_environment_module_reads_the_environment(name):
    module = AUDITED[name]
    assert not any(a.split(".")[-1] in ENVIRONMENT_ATTRIBUTES or ".environ." in f".{a}." for a in module.attributes)
    assert not any(f.split(":")[1] in ENVIRONMENT_ATTRIBUTES for f in module.from_names)
    assert not (module.names & ENVIRONMENT_ATTRIBUTES)


def test_the_environment_module_reads_os_environ_and_nothing_else_of_os():
    assert ENVIRONMENT in AUDITED, "the one module that reads the environment is missing or renamed"
    module = AUDITED[ENVIRONMENT]
    assert "os" in module.top_imports and module.top_imports <= {"os", "replaylab"}
    assert "os.environ.get" in module.attributes or "os.environ" in module.attributes
    assert {a for a in module.attributes if a.startswith("os.")} <= {"os.environ", "os.environ.get"}


@pytest.mark.parametrize("name", sorted(set(AUDITED) - DYNAMIC_IMPORTERS))
def test_only_the_named_loaders_import_dynamically(name):
    module = AUDITED[name]
    assert not (module.plain_imports & DYNAMIC_IMPORT), sorted(module.plain_imports & DYNAMIC_IMPORT)
    from_importlib = {f for f in module.from_names if f.split(":")[0] in DYNAMIC_IMPORT}
    assert from_importlib <= ({"importlib:resources"} if name == RECORDING else set()), from_importlib
    assert not any(a.startswith(("importlib.import_module", "importlib.util", "importlib.machinery"))
                   for a in module.attributes)
    assert not any("import_module" in (c or "") for c, _, _ in module.calls)
    # reading packaged data through importlib.resources is allowed, in the recording module only
    if name != RECORDING:
        assert not any(i.startswith("importlib") for i in module.imports)


def test_the_recording_module_uses_importlib_only_for_package_data():
    module = AUDITED[RECORDING]
    assert not any(i.startswith("importlib") for i in module.plain_imports)
    assert {f for f in module.from_names if f.startswith("importlib")} == {"importlib:resources"}
    assert module.called("resources.files")


def test_the_provider_loader_checks_the_name_before_importing():
    module = AUDITED[PROVIDER_LOADER]
    assert "importlib" in module.plain_imports
    (import_line,) = module.called("importlib.import_module")
    (check_line,) = module.called("is_provider_name")
    assert check_line < import_line
    (call_node,) = [node for called, _, node in module.calls if called == "importlib.import_module"]
    (argument,) = call_node.args
    assert isinstance(argument, ast.JoinedStr)
    assert isinstance(argument.values[0], ast.Constant) and argument.values[0].value == "replaylab.agents.clients."
    function = next(n for n in ast.walk(module.tree) if isinstance(n, ast.FunctionDef) and n.name == "load_provider")
    first = function.body[1] if isinstance(function.body[0], ast.Expr) else function.body[0]
    assert isinstance(first, ast.If) and isinstance(first.body[0], ast.Raise)  # refused first, before anything


@pytest.mark.parametrize("name, function_name", [(LESSON_CONTRACT, "part"), (LESSON_REGISTRY, "lesson")])
def test_the_lesson_loaders_check_the_name_before_importing(name, function_name):
    """The contract imports a part of a lesson, the registry a lesson's package: each refuses a name
    that is not on its own list before anything is imported."""
    module = AUDITED[name]
    assert {f for f in module.from_names if f.startswith("importlib")} == {"importlib:import_module"}
    (call_node,) = [node for called, _, node in module.calls if called == "import_module"]
    function = next(n for n in ast.walk(module.tree) if isinstance(n, ast.FunctionDef) and n.name == function_name)
    assert call_node in list(ast.walk(function))
    first = function.body[1] if isinstance(function.body[0], ast.Expr) else function.body[0]
    assert isinstance(first, ast.If) and isinstance(first.body[0], ast.Raise)
    assert first.lineno < call_node.lineno


@pytest.mark.parametrize("name", sorted(EVERYTHING))
def test_only_the_openai_client_imports_the_sdk(name):
    module = EVERYTHING[name]
    if name == OPENAI_CLIENT:
        assert "openai" in module.top_imports
    else:
        assert "openai" not in module.top_imports


@pytest.mark.parametrize("name", sorted(set(AUDITED) - {INTERACTIVE}))
def test_only_the_interactive_client_touches_stdin_and_stdout(name):
    module = AUDITED[name]
    streams = {a for a in module.attributes if a.split(".")[0] == "sys" and len(a.split(".")) > 1
               and a.split(".")[1] in STANDARD_STREAMS}
    assert streams == set(), streams
    assert not any(f.startswith("sys:") and f.split(":")[1] in STANDARD_STREAMS for f in module.from_names)


def test_the_interactive_client_reads_stdin_and_writes_stdout():
    module = AUDITED[INTERACTIVE]
    assert {"sys.stdin", "sys.stdout"} <= module.attributes
    assert {a for a in module.attributes if a.startswith("sys.")} == {"sys.stdin", "sys.stdin.buffer", "sys.stdout"}


def importers_of_faulty(modules):
    return sorted(
        name for name, module in modules.items()
        if FAULTY in module.imports or "replaylab.verification:faulty" in module.from_names
    )


def test_the_faulty_stepper_is_imported_by_one_lesson_only():
    importers = importers_of_faulty(EVERYTHING)
    assert importers, "a lesson imports the faulty stepper"
    folders = {str(package_folder(lesson).relative_to(PACKAGE)) + "/" for lesson in registry.lessons()}
    (owner,) = {folder for folder in folders if any(name.startswith(folder) for name in importers)}
    assert f"{owner}lab.py" in importers
    assert all(name.startswith(owner) for name in importers), importers
    for path in list(ROOT.glob("scripts/**/*.py")) + list(ROOT.glob("workflow/**/*.py")):
        assert FAULTY not in analyse(path.read_text("utf-8")).imports, path
    for path in PACKAGE.rglob("*.py"):
        relative = str(path.relative_to(PACKAGE))
        if not relative.startswith(owner) and relative != "verification/faulty.py":
            assert "verification.faulty" not in path.read_text("utf-8"), relative


# ---------------------------------------------------------------------------------------------
# The audit can fail: each rule finds what it looks for


def test_the_audit_rules_detect_violations():
    lesson = registry.names()[0]
    bad = analyse(
        "import subprocess\nfrom http import client\nimport os.path\nfrom . import faulty\n"
        "from ...verification import faulty as f\nfrom sys import stdin\nimport importlib.util\n"
        "x = getattr(o, 'a')\ne = eval\nimport builtins\nbuiltins.open('x')\n"
        "os.environ['K']\nos.getenv('K')\nsys.stdout.write('x')\npath.write_text('x')\n",
        f"lessons/{lesson}/lab.py",
    )
    assert {"subprocess", "http", "builtins"} <= bad.top_imports & FORBIDDEN_IMPORTS
    assert {"getattr", "eval"} <= bad.names & FORBIDDEN_CALLS
    assert FAULTY in bad.imports and f"replaylab.lessons.{lesson}.faulty" in bad.imports
    assert "sys:stdin" in bad.from_names and "sys.stdout" in bad.attributes
    assert {"os.environ", "os.getenv"} <= bad.attributes
    assert "importlib.util" in bad.plain_imports & DYNAMIC_IMPORT
    assert bad.attribute_calls("write_text") == ["path.write_text"]
    assert importers_of_faulty({"x.py": bad}) == ["x.py"]
    assert analyse("import openai.types\n").top_imports == {"openai"}


# ---------------------------------------------------------------------------------------------
# No credential-shaped text in the committed recordings

CREDENTIAL = re.compile(r"sk-[A-Za-z0-9_\-]{6,}|Bearer\s+[A-Za-z0-9._~+/=\-]+|api[_\-]?key", re.IGNORECASE)


def test_the_credential_pattern_finds_keys():
    for text in ("sk-test-FAKE0123456789abcdef", "sk-proj-abcdefgh", "Authorization: Bearer abc.def",
                 '"api_key": "x"', "OPENAI_API_KEY", "apikey"):
        assert CREDENTIAL.search(text), text
    for text in ("the task", "skipped", "risk-free", "[redacted]", "a key insight", "sk-1"):
        assert not CREDENTIAL.search(text), text


def test_no_credential_shaped_text_in_committed_recordings():
    folder = ROOT / "recordings"
    assert folder.is_dir()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        text = path.read_bytes().decode("utf-8", errors="replace")
        found = CREDENTIAL.findall(text)
        assert not found, f"{path.relative_to(ROOT)}: {found[:3]}"
