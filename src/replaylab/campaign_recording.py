"""A campaign's recording job: the runs of one block not on disk, recorded several at once on each
endpoint (threads, `connections` to each), each written whole or not at all (`recorder.record_new`),
an unfinished one continued from its partial file, with the job's progress in a file the
`replaylab campaign` command reads.
"""

import hashlib
import json
import logging
import os
import queue
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from replaylab import unfinished
from replaylab.agents import clients, loop
from replaylab.agents.recording import printable
from replaylab.batches import write_list
from replaylab.campaign_settings import model_options, models, unset_variables
from replaylab.inputs import check_recording
from replaylab.jobs import Failed
from replaylab.lessons import registry
from replaylab.recorder import Request, record_new

if TYPE_CHECKING:
    from replaylab.campaign import Campaign
    from replaylab.campaign_settings import Run


class RecordFailed(Failed):
    """Runs that could not be recorded: one line, with the provider's status and reason."""


PROGRESS = ".snakemake/replaylab/progress"  # {campaign}/{lesson}.{block}.json: what a recording job is doing


def progress_file(campaign: str, lesson: str, batch: str) -> Path:
    return Path(PROGRESS, campaign, f"{lesson}.{batch}.json")


class Progress:
    """What a recording job is doing, in a small file that `replaylab campaign` reads while it
    waits: runs to record, recorded, failed, running (each run has one request in flight at most)
    and the requests retried (the SDK's own retries, counted from its log). Rewritten whole at
    each change; never holds a key (numbers only)."""

    def __init__(self, path: str | Path | None, todo: int) -> None:
        self.path = Path(path) if path else None
        self.counts = {"todo": todo, "recorded": 0, "failed": 0, "running": 0, "retries": 0}
        self.lock = threading.Lock()
        self.write()

    def add(self, **changes: int) -> None:
        with self.lock:
            for key, change in changes.items():
                self.counts[key] += change
            self.write()

    def write(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        temporary.write_text(json.dumps(self.counts))
        os.replace(temporary, self.path)

    def count_retries(self) -> None:
        """Count the SDK's retries: it logs each at INFO on `openai._base_client`."""
        progress = self

        class Retries(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                if str(record.msg).startswith("Retrying request"):
                    progress.add(retries=1)

        logger = logging.getLogger("openai._base_client")
        logger.setLevel(min(logger.getEffectiveLevel(), logging.INFO))
        logger.propagate = False  # the job's own output stays as it was
        logger.addHandler(Retries())


def record_block(campaign: "Campaign", lesson: str, batch: str, listing: str | Path, connections: Mapping[str, int],
                 log: TextIO = sys.stdout, progress: str | Path | None = None) -> None:
    """Record the runs of one block that are not on disk, `connections[endpoint]` at a time for
    each endpoint (threads, each waiting on its provider), then write the block's list
    (`listing`). A run's file appears whole when the run is done (`recorder.record_new`), or not at all;
    a run on disk is never recorded again. What is recorded goes to `log`; a run that fails is one
    line there and on stderr; the others are recorded, and the job then fails with `RecordFailed`
    (its list is not written, so the next run records what is missing). `progress`: the file
    `Progress` keeps up to date.

    A run of a paid provider is kept after every answered message in its partial file
    (replaylab.unfinished), and the next job of its block continues it from there: no message
    answered is asked for again. The threads are daemon threads: when the job is interrupted
    (Ctrl-C, or its Snakemake gone, replaylab.jobs), the process ends at once and its requests
    with it; a run it was writing at that moment keeps its partial file, and leaves at most a
    hidden temporary file, which the next job of the block removes."""
    runs = campaign.batches[lesson][batch]
    paths = {name: Path(campaign.recording(lesson, name)) for name in runs}
    todo = [name for name, path in paths.items() if not os.path.lexists(path)]
    for name, path in paths.items():
        remove_leftovers(path, done=name not in todo)
    by_name = {model.name: model for model in campaign.models}
    by_endpoint: dict[str, list[tuple[Run, Path]]] = {}
    for name in todo:
        model = by_name[runs[name].model]
        by_endpoint.setdefault(model.endpoint, []).append((runs[name], paths[name]))
    for endpoint in by_endpoint:  # a server's variable that is not set: one line, before any request
        missing = unset_variables([m for m in campaign.models if m.endpoint == endpoint])
        if missing:
            raise RecordFailed(f"{lesson}/{batch}: {missing[0]}")
    at_once = sum(min(connections[endpoint], len(work)) for endpoint, work in by_endpoint.items())
    print(f"{lesson}/{batch}: {len(todo)} of {len(runs)} runs to record, {at_once} at a time", file=log, flush=True)
    tracker = Progress(progress, len(todo))
    tracker.count_retries()
    failures = _record_all(by_endpoint, campaign.settings, connections, log, tracker)
    if failures:
        raise RecordFailed(f"{len(failures)} of {len(todo)} runs of {lesson}/{batch} not recorded; the first: {failures[0]}")
    entries = []
    for path in paths.values():
        check_recording(path, lesson)
        entries.append([str(path), hashlib.sha256(path.read_bytes()).hexdigest()])
    write_list(listing, lesson, batch, entries)


def remove_leftovers(path: Path, done: bool) -> None:
    """Remove what a job that was killed may have left of the run of `path`: a temporary file of
    its own or of its partial file (written by a thread its process ended midway), and, when the
    run is on disk (`done`), its partial file, which the job was about to remove."""
    for leftover in [*path.parent.glob(f".{path.name}.*.tmp"), *path.parent.glob(f"..{path.name}.partial.*.tmp")]:
        leftover.unlink(missing_ok=True)
    if done:
        unfinished.remove(path)


def _record_all(by_endpoint: dict[str, list[tuple["Run", Path]]], settings: dict[str, Any], connections: Mapping[str, int],
                log: TextIO, progress: Progress) -> list[str]:
    """Record each (run, path) of `by_endpoint` ({endpoint: work}) in daemon threads,
    `connections[endpoint]` for each endpoint; the failures' lines."""
    failures: list[str]
    threads: list[threading.Thread]
    failures, lock, threads = [], threading.Lock(), []

    def worker(todo: "queue.Queue[tuple[Run, Path]]") -> None:
        while True:
            try:
                run, path = todo.get_nowait()
            except queue.Empty:
                return
            progress.add(running=1)
            try:
                record_new(recording_request(settings, run), path)
                with lock:
                    print(f"recorded {path}", file=log, flush=True)
                progress.add(running=-1, recorded=1)
            except Exception as error:  # a provider's failure, or a bug: this run's line, the others go on
                line = f"{path}: not recorded: {printable(str(error))}"
                with lock:
                    failures.append(line)
                    print(line, file=log, flush=True)
                    print(line, file=sys.stderr, flush=True)
                progress.add(running=-1, failed=1)

    for endpoint, work in by_endpoint.items():
        todo: queue.Queue[tuple[Run, Path]] = queue.Queue()
        for item in work:
            todo.put(item)
        threads += [threading.Thread(target=worker, args=(todo,), daemon=True, name=f"record-{len(threads) + i}")
                    for i in range(min(connections[endpoint], len(work)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(0.5)  # a join with a timeout: Ctrl-C reaches this thread at once
    return failures


def recording_request(settings: dict[str, Any], run: "Run") -> Request:
    """What `recorder.record_new` needs to record one run of the campaign."""
    model = next(m for m in models(settings) if m.name == run.model)
    lesson = registry.lesson(run.lesson)
    instance = lesson.instance_of(run)  # type: ignore[arg-type]  # a Run has what it reads of a recording: instance, variant
    options = clients.Options(run.lesson, run.variant, run.model, run.seed, (), lesson.part("agent"),
                              timeout=settings["request_timeout"], max_retries=settings["max_retries"],
                              instance=instance, **model_options(model))
    limits = loop.Limits(settings["max_tokens_per_run"], settings["max_seconds_per_run"])
    return Request(clients.load_provider(model.provider), options,
                   lesson.variant_of(run),  # type: ignore[arg-type]  # as instance_of
                   run.name, run.group, limits,
                   instance.id)
