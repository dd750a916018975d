"""A Snakemake that the command which starts it owns: whatever ends the command ends it, and its jobs.

Snakemake runs in a session of its own (a terminal's signals reach the command alone, which passes
them on), holding the read end of a pipe whose write end only the command holds: when the command
ends, however it ends (`kill -9` of it or of its process group too), the kernel closes the pipe and
Snakemake stops itself and its jobs (replaylab.jobs.watch_owner). While the command runs, SIGINT,
SIGTERM and SIGHUP are taken as requests to stop (`Stopping`), and `stop` stops Snakemake's group
as a terminal's Ctrl-C does, and waits for it: Snakemake lets go of its lock, its jobs keep what
they recorded.
"""

import contextlib
import os
import select
import signal
import subprocess
from collections.abc import Iterator, Sequence
from typing import IO, Any

from replaylab.jobs import OWNER_FD

STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # what a terminal, `timeout` or a closed terminal sends
STOP_WAIT_S = 120.0  # for Snakemake to stop its jobs after SIGINT, before it is killed (SIGKILL)
OUTPUT_CLOSED = 128 + signal.SIGPIPE  # 141: the exit code of a command whose output was closed, as a shell counts it


class Stopping:
    """The signals received while `signals_stop` is in force; the first is the one that counts."""

    def __init__(self) -> None:
        self.signals: list[int] = []

    @property
    def signum(self) -> int | None:
        return self.signals[0] if self.signals else None


@contextlib.contextmanager
def signals_stop() -> Iterator[Stopping]:
    """SIGINT, SIGTERM and SIGHUP noted (not raised: a signal never cuts a start or a wait short)
    for the watching loop to act on; the handlers before are back after."""
    stopping = Stopping()
    before = {number: signal.signal(number, lambda signum, frame: stopping.signals.append(signum)) for number in STOPPING}
    try:
        yield stopping
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


class Workflow:
    """Snakemake, started by `start`; `pipe` the write end the command holds until it ends."""

    def __init__(self, process: "subprocess.Popen[bytes]", pipe: int) -> None:
        self.process, self.pipe = process, pipe

    def poll(self) -> int | None:
        return self.process.poll()

    def wait(self) -> int:
        """Snakemake's exit code (negative: the signal that killed it); the pipe is closed after."""
        code = self.process.wait()
        self.close()
        return code

    def stop(self, wait: float = STOP_WAIT_S) -> int:
        """Stop Snakemake and its jobs (SIGINT to its process group, SIGKILL after `wait` seconds),
        and wait for it; its exit code. Further signals are ignored meanwhile (the stop is under way)."""
        for number in STOPPING:
            signal.signal(number, signal.SIG_IGN)
        try:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:  # it had ended already
            pass
        return self.wait()

    def close(self) -> None:
        if self.pipe >= 0:
            os.close(self.pipe)
            self.pipe = -1


def start(command: Sequence[str], output: IO[Any], keep: Sequence[int] = ()) -> Workflow:
    """Start `command` (Snakemake) in a session of its own, its output to `output`, with the read end
    of the owner's pipe (and the descriptors `keep`, such as a lock it holds with the command)."""
    read, write = os.pipe()  # neither is inherited by any other child: only Snakemake gets `read`
    try:
        process = subprocess.Popen(list(command), stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
                                   pass_fds=(read, *keep), env={**os.environ, OWNER_FD: str(read)})
    except BaseException:
        os.close(write)
        raise
    finally:
        os.close(read)
    return Workflow(process, write)


def output_closed(fd: int) -> bool:
    """Whether `fd`, the command's output, can no longer be read by anyone: a pipe whose reader has
    gone (`| head`), or a terminal that hung up. A file, or a pipe still read, is not closed."""
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
