"""How a rule's script runs its job: a process Snakemake starts (`script:`), which writes its log,
says what went wrong on one line, and ends when the Snakemake that started it is gone.

- The log (the rule's `log:`) ends with the job's time, `done_line`, or its error.
- A replay mismatch, a malformed input or a damaged result is its own one line, on stderr (which
  Snakemake shows) and in the log. Any other error is a bug: its one line names the file that holds
  its traceback, the log's name with `.traceback`, so that even `--show-failed-logs` shows the line.
- Ctrl-C (SIGINT, which a terminal sends to Snakemake and its jobs alike) and SIGTERM end the job
  without a traceback, its half-made outputs removed by the `finally` blocks of the code that
  writes them.
- No job outlives the Snakemake that started it: when Snakemake is killed (`kill -9`), no signal
  reaches its jobs, so a watchdog thread looks, ten times a second, whether that Snakemake (named
  by the workflow in the environment, `mark_this_process`) is still an ancestor of this process,
  and once it is not, interrupts the job the same way.
- No Snakemake outlives the command that owns it (`replaylab campaign`, replaylab.owned_workflow):
  that command gives it the read end of a pipe (OWNER_FD) whose write end only the command holds.
  The end of the command, however it ends (`kill -9` too), closes the pipe; a thread of Snakemake
  that reads it then sends SIGINT to Snakemake's process group, as a terminal's Ctrl-C would
  (Snakemake stops its jobs and lets go of its lock), and SIGKILL if it has not ended after
  OWNER_GRACE_S.
"""

import json
import os
import signal
import stat
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, cast

from replaylab.agents.recording import printable
from replaylab.errors import ReplaylabError

if TYPE_CHECKING:
    import psutil


class Failed(ReplaylabError):
    """A job's failure that its message already says in one line (a run the provider refused)."""


EXPECTED = (ReplaylabError,)  # replaylab's own errors: each is its one line (a mismatch, a damaged file, a defect)
STARTER = "REPLAYLAB_SNAKEMAKE_PID"  # set by the workflow in Snakemake's process, inherited by its jobs
INTERRUPTED = 130
WATCH_S = 0.1  # how often the watchdog looks for the Snakemake that started the job
GRACE_S = 5.0  # after Snakemake is gone: time for the job's cleanup before the process ends anyway
OWNER_FD = "REPLAYLAB_OWNER_FD"  # set by the command that owns a Snakemake: the pipe that closes when it ends
OWNER_GRACE_S = 60.0  # after its owner is gone: time for Snakemake to stop its jobs before it is killed


class JobFailed(Exception):
    """A job that failed unexpectedly (a bug): its message names the file that holds the traceback."""


def mark_this_process(library: str | Path | None = None) -> None:
    """Called by the workflow in Snakemake's own process: its jobs inherit its process id, and with
    `library` (the clone's src/) a PYTHONPATH that starts with it, so that every job imports that
    library first, before any installed copy (docs/workflow.md says why)."""
    os.environ[STARTER] = str(os.getpid())
    if library is not None:
        others = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(library)]
        os.environ["PYTHONPATH"] = os.pathsep.join([str(library), *others])
    watch_owner()


def watch_owner() -> None:
    """In a Snakemake started by a command that owns it (OWNER_FD, read once: its jobs do not see
    it), start the thread that stops this Snakemake and its jobs once that command has ended."""
    text = os.environ.pop(OWNER_FD, None)
    try:
        fd = int(text or "")
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return
    except (ValueError, OSError):
        return
    threading.Thread(target=_end_with_owner, args=(fd,), name="replaylab-owner", daemon=True).start()


def _end_with_owner(fd: int) -> None:
    """Wait until the pipe `fd` closes (its owner never writes to it), then stop this process's
    group (this process alone when it leads none) with SIGINT, and with SIGKILL after OWNER_GRACE_S."""
    try:
        while os.read(fd, 1):
            pass
    except OSError:
        pass
    group = os.getpgrp() == os.getpid()

    def stop(signum: int) -> None:
        if group:
            os.killpg(os.getpid(), signum)
        else:
            os.kill(os.getpid(), signum)

    stop(signal.SIGINT)
    time.sleep(OWNER_GRACE_S)
    stop(signal.SIGKILL)


def settings(job: Any) -> Any:
    """The settings a job reads from its input `settings` (the workflow writes them when it starts)."""
    return json.loads(Path(job.input.settings).read_text(encoding="utf-8"))


def done_line(name: str, start: float, began: float) -> str:
    """The line a job's log ends with: its time (from perf_counter `start`), and when it ran (from
    time.time `began` to now)."""
    return f"{name}: done in {time.perf_counter() - start:.2f} s, from {began:.3f} to {time.time():.3f} (seconds since 1970)"


def run(job: Any, main: Callable[[Any, TextIO], object]) -> NoReturn:
    """Run `main(job, log)` as the job of `job` (the `snakemake` object of a rule's script; `log`,
    its log file, open for writing) and exit the process: 0 when it succeeds, 1 when it fails (one
    line on stderr and in the log), 130 when interrupted. What `main` returns (a note, such as the
    time the HTML page took) goes to the log after its time."""
    log = Path(job.log[0])
    log.parent.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, _interrupt)
    watch_starter()
    start, began = time.perf_counter(), time.time()
    with open(log, "w", encoding="utf-8") as stream:
        try:
            note = main(job, stream)
        except KeyboardInterrupt:  # its outputs' cleanup has run: end now, requests in flight too
            print(f"{job.rule}: interrupted", file=stream)
            stream.close()
            sys.stdout.flush()
            os._exit(INTERRUPTED)
        except EXPECTED as error:  # its message is its one line, naming the file and what is wrong
            code = _fail(stream, printable(str(error)))
        except Exception as error:  # a bug
            where = log.with_suffix(".traceback")
            where.write_text("".join(traceback.format_exception(error)), encoding="utf-8")
            code = _fail(stream, f"{JobFailed.__name__}: {type(error).__name__}: {printable(str(error))} "
                                 f"(a bug: the traceback is in {where})")
        else:
            print(done_line(job.rule, start, began), file=stream)
            if note:
                print(note, file=stream)
            code = 0
    sys.exit(code)


def _fail(stream: TextIO, line: str) -> int:
    print(line, file=stream)
    print(line, file=sys.stderr, flush=True)
    return 1


def _interrupt(signum: int, frame: FrameType | None) -> NoReturn:
    raise KeyboardInterrupt


def watch_starter() -> None:
    """Start the watchdog if the Snakemake that started this job is known (STARTER) and is an
    ancestor of this process; a job started any other way (by hand, on another machine) runs on."""
    import psutil

    try:
        starter = psutil.Process(int(os.environ.get(STARTER, "")))
        ancestors = {process.pid for process in psutil.Process().parents()}
    except (ValueError, psutil.Error):
        return
    if starter.pid in ancestors:
        threading.Thread(target=_end_with, args=(starter,), name="replaylab-watchdog", daemon=True).start()


def _end_with(starter: "psutil.Process") -> NoReturn:
    """Once `starter` is no longer an ancestor of this process (it ended, and the kernel gave its
    children to another parent: a killed Snakemake that no one has reaped yet is gone too), interrupt
    the job's main thread with SIGINT, as Ctrl-C would (KeyboardInterrupt: the job's cleanup runs,
    `run` exits); if the process has not ended after GRACE_S, end it."""
    import psutil

    this = psutil.Process()
    while True:
        time.sleep(WATCH_S)
        try:
            if starter.pid not in {process.pid for process in this.parents()}:
                break
        except psutil.Error:
            break
    signal.pthread_kill(cast(int, threading.main_thread().ident), signal.SIGINT)
    time.sleep(GRACE_S)
    os._exit(INTERRUPTED)
