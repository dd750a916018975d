"""The render stage: what a lesson shows, from its judged runs, scans and exercises: results.json
(every number, checked against its schema), the scorecard, the CSV tables, the figures and the
page (Markdown and HTML). Only the jobs that write pages import this module.
"""

import os
import time
from dataclasses import dataclass
from pathlib import Path

from replaylab.agents import recording as recording_io
from replaylab.agents.replay import rerecord_command
from replaylab.lessons import registry
from replaylab.pipeline import allowlists, csv_text, load_transcripts, read_json, score_lesson, whole_folder, write_json
from replaylab.results import FORMAT, check, strict

RUNS_TABLE = "runs.csv.gz"  # the per-run table of a lesson, next to its results.json


@dataclass(frozen=True)
class Render:
    """The render stage: everything a lesson shows, from its judged runs, scans and exercises."""

    lesson: str
    transcripts: list
    verdicts: str
    scans: str
    exercises: str
    tolerance: float
    results: str  # outputs from here on
    scorecard_csv: str
    scorecard_json: str
    runs_table: str  # the per-run table, gzipped CSV
    tables: str  # a folder
    figures: str  # a folder
    page: str  # index.md, and index.html next to it
    index: str | None = "../index.md"  # the summary page, as the page links to it (None: no link)
    runs: list | None = None  # the names of every run of the lesson, each of which must have its transcript

    @classmethod
    def in_folder(cls, lesson, folder, tolerance, transcripts, verdicts, scans, exercises, index="../index.md", runs=None):
        """The stage that writes every output under `folder` (results/<lesson>), as the workflow names them."""
        folder = Path(folder)
        return cls(
            lesson, transcripts, verdicts, scans, exercises, tolerance, folder / "results.json",
            folder / "scorecard.csv", folder / "scorecard.json", folder / RUNS_TABLE, folder / "tables", folder / "figures",
            folder / "index.md", index, runs,
        )


def collect_results(stage):
    """Every number of the lesson in one file, checked against its schema: full precision and the
    text as shown; the scorecard also on its own, as JSON and CSV, and the per-run table as gzipped
    CSV. Returns the data as the writers get it (`results.Strict`)."""
    from replaylab.lessons.scorecard import runs_table_bytes, scorecard_table  # pandas: only where it tabulates

    lesson = stage.lesson
    runs = {}
    for run in load_transcripts(stage.transcripts, stage.runs):
        runs[run.run] = {
            "variant": run.variant,
            "group": run.group,
            "label": run.label,
            "provenance": run.provenance,
            "rerecord": rerecord_command(run),
            "transcript": recording_io.to_data(run),
        }
    verdicts, scans = read_json(stage.verdicts), read_json(stage.scans)
    found, rows, table = score_lesson(lesson, verdicts, scans, runs)
    data = {
        "format": FORMAT,
        "lesson": lesson,
        "tolerance": stage.tolerance,
        "score_unit": list(registry.lesson(lesson).unit),
        "allowlists": allowlists(lesson),
        "runs": runs,
        "verdicts": verdicts,
        "right_answer": registry.lesson(lesson).right_answer,
        "scores": found,
        "scorecard": rows,
        "scans": scans,
        "exercises": read_json(stage.exercises),
    }
    write_json(stage.results, check(data, stage.results))
    write_json(stage.scorecard_json, {"lesson": lesson, "scorecard": rows, "scores": found})
    recording_io.write_atomic(stage.scorecard_csv, csv_text(scorecard_table(rows)))
    recording_io.write_atomic(stage.runs_table, runs_table_bytes(table))
    return strict(data, stage.results)


def write_tables(lesson, results, folder):
    """Every table of a lesson (from its results.json data) as CSV, into a folder that appears
    whole or not at all."""
    tables = registry.lesson(lesson).tables(results)
    with whole_folder(folder) as building:
        for name, rows in tables.items():
            (building / f"{name}.csv").write_text(csv_text(rows), encoding="utf-8")


def figure_names(lesson):
    return list(registry.lesson(lesson).figures)


def write_figure(lesson, name, results, target):
    """Draw one figure of a lesson to PNG."""
    save_figure(registry.lesson(lesson).figures[name](results), target)


def save_figure(figure, target):
    """A figure as PNG (written to a temporary name, then renamed).

    The figures are `matplotlib.figure.Figure` objects, not pyplot's: no GUI backend, no pyplot
    import, nothing to close."""
    target = Path(target)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp.png")
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        figure.savefig(temporary, dpi=110, metadata={"Software": None})
        temporary.replace(target)
    finally:
        temporary.unlink(missing_ok=True)


def write_figures(lesson, results, folder):
    """Every figure of a lesson, into a folder that appears whole or not at all."""
    with whole_folder(folder) as building:
        for name in figure_names(lesson):
            write_figure(lesson, name, results, building / f"{name}.png")


def write_markdown_and_html(target, text):
    """A page of the build twice, from one text: the Markdown `target` (…/index.md) and, next to
    it, the same page rendered to self-contained HTML (…/index.html), figures embedded. Every page
    writer calls this. Returns the seconds the HTML took (for the job's log)."""
    start = time.perf_counter()  # with the first import of markdown-it-py
    from replaylab.html_page import html_page

    target = Path(target)
    html = html_page(text, target.parent)
    seconds = time.perf_counter() - start
    recording_io.write_atomic(target, text)
    recording_io.write_atomic(target.with_suffix(".html"), html)
    return seconds


def write_page(lesson, results, target, index=None):
    """A lesson's page, as Markdown and HTML; `index`: the path from the page to the summary of
    every lesson, linked at the top and the bottom (None: no link). Returns the seconds the HTML took."""
    text = registry.lesson(lesson).page(results)
    if index is not None:
        link = f"[← All lessons]({index})"
        text = f"{link}\n\n{text}\n{link}\n"
    return write_markdown_and_html(target, text)


def render_lesson(stage):
    """What a lesson shows, from its judged runs: results.json, the scorecard, tables, figures, page
    (Markdown and HTML, linked to the summary `stage.index`). Returns the seconds the HTML took."""
    results = collect_results(stage)  # the data as written, used by every writer below
    write_tables(stage.lesson, results, stage.tables)
    write_figures(stage.lesson, results, stage.figures)
    return write_page(stage.lesson, results, stage.page, stage.index)
