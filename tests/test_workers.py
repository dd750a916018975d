"""The main process's background imports (workers.import_soon) and the fork server's first-use
work (agents.preloaded): each loads what it says, once, and never fails the run."""

import subprocess
import sys
import threading
import time

from helpers import ROOT
from replaylab import workers


def wait_for_imports():
    for thread in threading.enumerate():
        if thread.name == "replaylab-imports":
            thread.join(timeout=60)


def test_import_soon_loads_each_module_once_in_the_background(tmp_path, monkeypatch):
    imported = tmp_path / "imported.txt"
    for name in ("probe_first", "probe_second"):
        (tmp_path / f"{name}.py").write_text(f"open({str(imported)!r}, 'a').write('{name}\\n')\n")
    (tmp_path / "probe_broken.py").write_text("raise RuntimeError('a module that fails to load')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    modules = ["probe_first", "probe_broken", "not_a_module_anywhere", "probe_second"]
    workers.import_soon(modules)
    wait_for_imports()
    workers.import_soon(modules)  # the same list again: nothing more to do
    wait_for_imports()
    try:
        # a module that fails is left to the job that needs it; the ones after it still load
        assert imported.read_text().splitlines() == ["probe_first", "probe_second"]
        assert "probe_broken" not in sys.modules
    finally:
        for name in ("probe_first", "probe_second"):
            sys.modules.pop(name, None)


def test_import_soon_returns_before_the_modules_are_loaded(tmp_path, monkeypatch):
    (tmp_path / "probe_slow.py").write_text("import time\ntime.sleep(1)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    start = time.perf_counter()
    workers.import_soon(["probe_slow"])
    assert time.perf_counter() - start < 0.5
    wait_for_imports()
    try:
        assert "probe_slow" in sys.modules
    finally:
        sys.modules.pop("probe_slow", None)


def test_the_fork_servers_preload_registers_every_provider_and_compiles_the_schema():
    probe = (
        "import sys, pkgutil\n"
        "import replaylab.agents.preloaded\n"
        "from replaylab.agents import clients, recording\n"
        "assert recording._COMPILED is not None\n"
        "modules = {m.name for m in pkgutil.iter_modules(clients.__path__)}\n"
        "assert set(clients._REGISTERED) and set(clients._REGISTERED) <= modules\n"
        "assert all(f'replaylab.agents.clients.{n}' in sys.modules for n in clients._REGISTERED)\n"
        "print(sorted(clients._REGISTERED))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "openai" in done.stdout and "scripted" in done.stdout
