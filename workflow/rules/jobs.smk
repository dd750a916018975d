"""Running a job: its entry point in scripts/, called inside Snakemake's own process or, for the
replay batches of a lesson of several, in a worker process (run_job), a new run's recording in a
process of its own (record_job; a campaign's: record_campaign_run), and the end of a run
(end_of_run). SCRIPTS, PYTHON, WORKER_PRELOAD and RENDER_IMPORTS come from common.smk.
"""

import atexit
import gc
import subprocess
import threading
import time
import traceback
from contextlib import nullcontext
from pathlib import Path

from replaylab.agents.recording import RecordingError, printable
from replaylab.agents.replay import ReplayMismatch
from replaylab.inputs import DamagedResult
from replaylab.lessons import UnknownLesson


class JobFailed(Exception):
    """A job that failed unexpectedly: its message names the log that holds the traceback."""


EXPECTED_FAILURES = (ReplayMismatch, RecordingError, UnknownLesson, DamagedResult)

# One job at a time in this process, even with --cores 2: jobs are Python, and two at once in one
# process only take turns on the interpreter lock (measured: slower than one after the other). It
# also keeps matplotlib, which is not thread-safe, in one thread at a time. The jobs that run in
# workers (`apart`) do not hold it.
ONE_JOB_AT_A_TIME = threading.Lock()


def run_job(name, log, *args, apart=False):
    """Call `main(*args)` of scripts/<name>.py, in this process: the default profile sets
    force-use-threads (a cluster executor implies it), so that a job costs no new Python, no
    imports and no second Snakemake. With `apart` (a replay batch of a lesson of several) and more
    than one core, in a worker process instead (replaylab.workers), so that the batches run side
    by side.

    The log gets the job's time and what `main` returns (a note: the time of the HTML page), or
    its error on one line. A replay mismatch, a malformed input or a damaged result fails the job
    with its one-line message, under its own type; any other error (a bug) with its type and
    message, and its traceback in <log>.traceback, which the line names. Snakemake then shows that
    line and where the rule called this (two lines naming this file and the rule file), never the
    library's traceback, even with --show-failed-logs.
    """
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    in_worker = apart and workflow.cores > 1
    lock = nullcontext() if in_worker else ONE_JOB_AT_A_TIME
    with lock, open(log, "w", encoding="utf-8") as stream:
        start, began = time.perf_counter(), time.time()
        try:
            if in_worker:
                workers.import_soon(RENDER_IMPORTS)  # while the workers replay
                worker, note = workers.run(
                    workflow.cores, WORKER_PRELOAD, SCRIPTS / f"{name}.py", *args
                )
            else:
                worker = None
                note = workers.entry_point(SCRIPTS / f"{name}.py").main(*args)
        except EXPECTED_FAILURES as error:
            failure = type(error)(printable(str(error)))
        except Exception as error:
            where = Path(log).with_suffix(".traceback")
            with open(where, "w", encoding="utf-8") as details:
                # from the entry point on: this file's own frame, compiled by Snakemake,
                # would name a line that is not the one that ran
                traceback.print_exception(
                    type(error), error, error.__traceback__.tb_next, file=details
                )
            failure = JobFailed(
                f"{type(error).__name__}: {printable(str(error))} (a bug: the traceback is in {where})"
            )
        else:
            where = f" in worker process {worker}" if worker else ""
            print(workers.done_line(name, start, began, where), file=stream)
            if note:
                print(note, file=stream)
            return
        print(f"{type(failure).__name__}: {failure}", file=stream)
    raise failure


def end_of_run():
    """End the worker processes, and the timers Snakemake leaves (cancel_leftover_timers); spare
    Python its last garbage collections (skip_collections_at_exit)."""
    workers.shutdown()
    cancel_leftover_timers()
    skip_collections_at_exit()


def skip_collections_at_exit():
    """At exit, Python collects garbage over every object still alive: after a build of 10,000
    runs, those of the DAG and the jobs, about 0.4 s of one processor (measured), after the work
    is done. gc.freeze() at exit, before the other exit handlers (atexit runs the last registered
    first), leaves them out of those collections; the exit handlers (Snakemake's log files,
    multiprocessing's) still run, and this workflow's files are closed by then."""
    atexit.register(gc.freeze)


class RecordFailed(Exception):
    """`replaylab record` failed: its message is the command's own error line and the log's name."""


def record_job(log, lesson, variant, out, *, provider, model, seed, group):
    """Record one variant of a new run with scripts/record.py, in a process of its own, started with
    an argument list (no shell: a configuration value is never part of a command). What it prints
    goes to the log and to Snakemake's output; a failure is its last line (the one-line error).
    """
    command = [PYTHON, str(SCRIPTS / "record.py"), lesson, "--variant", variant]
    command += ["--provider", provider, f"--model={model}", "--seed", str(seed)]
    command += ["--group", group, "--out", out]
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as stream:
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
        )
        last = ""
        for line in process.stdout:
            stream.write(line)
            stream.flush()
            print(line, end="", flush=True)
            last = line.strip() or last
    if process.wait() != 0:
        raise RecordFailed(f"{last} (the log: {log})")


def record_campaign_run(unrecorded, out, log):
    """Record one run of the campaign ("<lesson>/<run>", campaign.record); meanwhile, what the
    render and comparison jobs import is loaded in this process (the runs mostly wait for the
    provider), not after the last run. CAMPAIGN comes from campaign.smk."""
    workers.import_soon([*RENDER_IMPORTS, "replaylab.comparison"])
    lesson, name = unrecorded.split("/")
    campaign.record(CAMPAIGN, lesson, name, out, log)


def cancel_leftover_timers():
    """End the threading.Timer threads that Snakemake's scheduler leaves behind.

    Its job-rate limiter (100 jobs per second by default) starts a one-second Timer at each turn
    of the scheduler, and Python waits for the last one before it exits: up to 1 s more at the end
    of every run with jobs (measured). The run is over when the onsuccess and onerror hooks call
    this.
    """
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()
