"""The main process's background imports (workers.import_soon), the fork server's first-use
work (agents.preloaded): each loads what it says, once, and never fails the run; and the line that
ends a job's log, read back (workers.done_line, read_done_line)."""

import sys
import threading
import time

from helpers import python
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
    # a module that fails is left to the job that needs it; the ones after it still load
    assert imported.read_text().splitlines() == ["probe_first", "probe_second"]
    assert "probe_broken" not in sys.modules
    for name in ("probe_first", "probe_second"):
        sys.modules.pop(name)  # so that importing them again would run them again
    workers.import_soon(modules)  # the same list again: nothing more to do
    wait_for_imports()
    assert imported.read_text().splitlines() == ["probe_first", "probe_second"]
    assert "probe_first" not in sys.modules


def test_import_soon_returns_before_the_modules_are_loaded(tmp_path, monkeypatch):
    go, done = tmp_path / "go", tmp_path / "done"
    # a module whose import waits for the test (at most a minute, so that a blocking import_soon
    # fails the test instead of hanging it)
    (tmp_path / "probe_waits.py").write_text(
        "import os, time\n"
        f"for _ in range(6000):\n    if os.path.exists({str(go)!r}): break\n    time.sleep(0.01)\n"
        f"open({str(done)!r}, 'w').write('imported')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    workers.import_soon(["probe_waits"])
    assert not done.exists()  # returned while the module was still loading
    go.write_text("")
    wait_for_imports()
    try:
        assert done.read_text() == "imported"
    finally:
        sys.modules.pop("probe_waits", None)


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
    done = python(probe)
    assert done.returncode == 0, done.stderr
    assert "openai" in done.stdout and "scripted" in done.stdout


def test_the_line_that_ends_a_job_log_reads_back(tmp_path):
    log = tmp_path / "render.log"
    start, began = time.perf_counter() - 1.5, time.time() - 1.5
    log.write_text("an earlier line\n" + workers.done_line("render", start, began, " in worker process 42") + "\nHTML page: 0.071 s\n")
    name, seconds, first, last = workers.read_done_line(log)
    assert name == "render" and 1.5 <= seconds < 60
    half = 0.0005  # the line gives its times to the millisecond
    assert abs(first - began) <= half and began + 1.5 - half <= last <= time.time() + half
    log.write_text("render: failed: ValueError: a bug\n")  # a job that did not end well has none
    assert workers.read_done_line(log) is None
