"""Every result in one process, without Snakemake: the workflow's stages called in order.

`replaylab build`, the benchmark's floor and the tests use it; the workflow's jobs never import
it (each job imports only the stage it runs, see the `code=` inputs of the rules).
"""

import fcntl
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from replaylab import pipeline
from replaylab.agents.replay import DEFAULT_TOLERANCE
from replaylab.baselines import Baselines, run_baselines
from replaylab.index_page import Index, write_index
from replaylab.inputs import find_runs
from replaylab.lessons import registry
from replaylab.render import Render, render_lesson


def build_lesson(lesson: str, recordings: Sequence[str | Path], folder: str | Path, tolerance: float,
                 scans: str | Path | None = None, exercises: str | Path | None = None, answers: str | Path | None = None,
                 baselines: str | Path | None = None, progress: Callable[[str], object] = print) -> None:
    """Every result of one lesson from the given recordings, into `folder` as the workflow names
    them; `scans`, `exercises`, `answers` and `baselines` may be the files of an earlier build (they
    never depend on a run).
    The lesson's page links to no summary, as the workflow writes it."""
    folder = Path(folder)
    runs = [Path(recording).stem for recording in recordings]
    batch = "batch0of1"  # one batch, named as the workflow names the batch of a small lesson
    transcripts, judged = folder / "transcripts" / f"{batch}{pipeline.TRANSCRIPTS}", folder / "judged" / f"{batch}.json"
    pipeline.replay_batch(pipeline.Replay(lesson, recordings, transcripts, judged, tolerance))
    progress(f"{lesson}: replayed and judged {len(recordings)} runs")
    if scans is None or exercises is None:
        scans, exercises = folder / "scans.json", folder / "exercises.json"
        pipeline.scan_lesson(pipeline.Scan(lesson, scans, exercises))
    if answers is None or baselines is None:
        answers, baselines = folder / "answers.json", folder / "baselines.json"
        pipeline.answer_lesson(pipeline.Answers(lesson, answers, folder / "instances.csv"))
        run_baselines(Baselines(lesson, answers, baselines, tolerance))
    render_lesson(Render.in_folder(lesson, folder, tolerance, [transcripts], [judged], scans, exercises, runs, answers, baselines))
    progress(f"{lesson}: results in {folder}")


def build(lessons: Sequence[str] | None = None, recordings: str | Path = "recordings", results: str | Path = "results",
          tolerance: float = DEFAULT_TOLERANCE, progress: Callable[[str], object] = print,
          run_folders: Iterable[str | Path] = ()) -> None:
    """Every result of the lessons (all of the registry by default), and the index page."""
    lessons = registry.names() if lessons is None else lessons
    results = Path(results)
    with one_build_at_a_time(results):
        for lesson in lessons:
            sources = list(find_runs(lesson, [recordings, *run_folders]).values())
            build_lesson(lesson, sources, results / lesson, tolerance, progress=progress)
        write_index(Index([results / lesson / "results.json" for lesson in lessons], results / "index.md"))


@contextmanager
def one_build_at_a_time(results: Path) -> Iterator[None]:
    """Hold the lock of a results folder while a build writes it: a second `replaylab build` into
    the same folder waits for the first, since each stage reads what the one before wrote, and
    the other build's folder taking its place would pull it away mid-read. Released by the
    kernel when the process ends, however it ends."""
    results.mkdir(parents=True, exist_ok=True)
    with open(results / ".build.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
