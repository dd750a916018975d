"""The processes a test starts end with the test, whatever happens to it.

`track(popen)` (or `start(args, ...)`) records a process; after each test, `tests/conftest.py`
ends every process recorded during the test that is still there (`end`): the process, every
process below it, and, when it leads a process group of its own (`start_new_session=True`), every
process of that group. A test that fails midway (an assertion, a timeout) so leaves no Snakemake,
job, session or server running behind it. A test that stops a process itself (Ctrl-C, kill) still
does so, and asserts what it asserts, before this teardown.
"""

import os
import signal
import subprocess
import time

import psutil

STARTED = []  # every process recorded, in order: [(Popen, the time it was started, whether it leads its group)]


def track(process):
    """Record a process (a subprocess.Popen) that the current test started; returns it."""
    try:
        leads = os.getpgid(process.pid) == process.pid  # Popen returns once the child is in its own session
        since = psutil.Process(process.pid).create_time()
    except (OSError, psutil.Error):
        leads, since = False, time.time() - 5
    STARTED.append((process, since, leads))
    return process


def start(args, **options):
    """subprocess.Popen(args, **options), recorded."""
    return track(subprocess.Popen(args, **options))


def _ours(process, since):
    """Whether a psutil process is one started since `since` (not another that reuses an old id)."""
    try:
        return process.is_running() and process.create_time() >= since
    except psutil.Error:
        return False


def end(process, since=0.0, leads=False):
    """Kill `process` (SIGKILL), the processes below it, and, when it `leads` a process group of
    its own, the processes of that group; then reap it and close its pipes. Nothing happens to a
    process that already ended and left nothing behind."""
    victims = []
    try:
        top = psutil.Process(process.pid)
        if process.poll() is None:  # not reaped: its id is still its own
            victims = [top, *top.children(recursive=True)]
    except psutil.Error:
        pass
    if leads:  # the rest of its group: jobs left behind by a leader that already ended
        for candidate in psutil.process_iter():
            try:
                if candidate.pid != process.pid and os.getpgid(candidate.pid) == process.pid and _ours(candidate, since):
                    victims.append(candidate)
            except (OSError, psutil.Error):
                continue
    for victim in victims:
        try:
            victim.send_signal(signal.SIGKILL)
        except psutil.Error:
            pass
    psutil.wait_procs([v for v in victims if v.pid != process.pid], timeout=10)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            try:
                stream.close()
            except OSError:
                pass


def end_since(mark):
    """End every process recorded after the first `mark` ones (`len(STARTED)` before a test); they are
    then forgotten."""
    ended = STARTED[mark:]
    del STARTED[mark:]
    for process, since, leads in ended:
        end(process, since, leads)


def ended(pid, timeout):
    """Whether the process `pid` (a child or not) ends within `timeout` seconds: waited for as an
    event (Linux's pidfd becomes readable when the process ends), not by looking again and again."""
    import select

    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        if select.select([handle], [], [], timeout)[0]:
            return True
        # a zombie has ended: its parent has not reaped it yet
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True
    finally:
        os.close(handle)


def appears(path, process, timeout):
    """Whether the file `path` appears (a job writes it when it reaches the point a test waits
    for) while `process` runs, within `timeout` seconds (`until`)."""
    return until(lambda: os.path.exists(path), process, timeout)


def run(args, timeout, **options):
    """subprocess.run(args, capture_output=True, text=True, ...) in a process group of its own,
    recorded: what it starts (Snakemake and its jobs) ends with the test too, even when the test
    stops waiting for it (a timeout, an interrupted test). Its CompletedProcess."""
    options = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True, "start_new_session": True, **options}
    process = start(args, **options)
    stdout, stderr = process.communicate(timeout=timeout)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def until(condition, process, timeout):
    """Whether `condition()` comes true (a file written, a count reached) while `process` runs,
    within `timeout` seconds: looked at every 20 ms, the wait ends as soon as it is true, or as
    soon as `process` has ended (it will not come true then)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if process.poll() is not None or time.monotonic() > deadline:
            return condition()
        time.sleep(0.02)
    return True


def all_ended(running, timeout):
    """The processes of `running` (psutil processes) that have not ended within `timeout` seconds
    (each waited for as an event, `ended`); [] when all have."""
    deadline = time.monotonic() + timeout
    return [p for p in running if not ended(p.pid, max(0.0, deadline - time.monotonic()))]
