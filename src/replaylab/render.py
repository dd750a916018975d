"""The render stage: what a lesson shows, from its batches' verdicts, scans and exercises: the
per-run table (every run), the scorecard (a group-by of it), results.json (the summaries and a
bounded sample of runs, checked against its schema), the CSV tables, the figures and the page
(Markdown and HTML). Only the jobs that write pages import this module.

However many runs a lesson has, this job reads every batch's verdicts and the transcripts of the
sampled runs only (`replaylab.sample`), so that what it writes and reads stays bounded.
"""

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from replaylab.agents import recording as recording_io
from replaylab.agents.replay import rerecord_command
from replaylab.lessons import DIFFICULTIES, registry
from replaylab.pipeline import (allowlists, csv_text, read_json, read_transcript, score_batches, verdicts_of, whole_folder,
                                without_cycle_collection, write_json)
from replaylab.results import FORMAT, Strict, check, strict
from replaylab.sample import choose

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from replaylab.lessons import Lesson

RUNS_TABLE = "runs.csv.gz"  # the per-run table of a lesson, next to its results.json


@dataclass(frozen=True)
class Render:
    """The render stage: everything a lesson shows, from its batches' verdicts, scans and exercises."""

    lesson: str
    transcripts: Sequence[str | Path]  # the batches' files of transcripts (transcripts/<batch>.jsonl)
    judged: Sequence[str | Path]  # the batches' verdicts (judged/<batch>.json)
    answers: str | Path  # the build's answer of each instance (answers.json)
    baselines: str | Path  # the careful and the trivial program on every instance (baselines.json)
    scans: str | Path
    exercises: str | Path
    tolerance: float
    results: str | Path  # outputs from here on
    scorecard_csv: str | Path
    scorecard_json: str | Path
    runs_table: str | Path  # the per-run table, gzipped CSV
    tables: str | Path  # a folder
    figures: str | Path  # a folder
    page: str | Path  # index.md, and index.html next to it
    index: str | None = None  # the page the lesson's page links back to (a campaign's lesson page: its campaign; None: no link)
    runs: Sequence[str] | None = None  # the names of every run of the lesson, each of which must have its transcript
    index_label: str = ""  # the words of the link to `index`

    @classmethod
    def in_folder(cls, lesson: str, folder: str | Path, tolerance: float, transcripts: Sequence[str | Path],
                  judged: Sequence[str | Path], scans: str | Path, exercises: str | Path, runs: Sequence[str] | None = None,
                  answers: str | Path | None = None, baselines: str | Path | None = None) -> "Render":
        """The stage that writes every output under `folder` (results/<lesson>), as the workflow names
        them (its answers and baselines there too, unless given)."""
        folder = Path(folder)
        return cls(
            lesson, transcripts, judged, answers or folder / "answers.json", baselines or folder / "baselines.json", scans,
            exercises, tolerance, folder / "results.json",
            folder / "scorecard.csv", folder / "scorecard.json", folder / RUNS_TABLE, folder / "tables", folder / "figures",
            folder / "index.md", runs=runs,
        )


def collect_results(stage: Render) -> Strict:
    """The lesson's numbers: the per-run table (gzipped CSV) and the scorecard (JSON and CSV) of
    every run, and results.json, checked against its schema: the counts, the scorecard, and the
    runs worth reading (`sample.choose`) with their verdicts and transcripts, full precision and
    the text as shown. Returns the data as the writers get it (`results.Strict`)."""
    return collected(stage)[0]


def collected(stage: Render) -> tuple[Strict, dict[str, str]]:
    """(`collect_results`, {run: the text of its transcript} of the runs shown and listed): the
    run pages' folder holds those transcripts, a file each (runs/<run>.json), which the pages
    link to, so that what a page links stays small however large the batches' files are."""
    from replaylab.lessons.scorecard import runs_table_bytes, scorecard_table, tabulate  # pandas: only where it tabulates

    lesson = stage.lesson
    answers = read_json(stage.answers)
    with without_cycle_collection():  # every run's facts held at once (100,000 runs: docs/performance.md)
        facts, files, found, where, groups = score_batches(lesson, stage.judged, stage.transcripts, answers, stage.runs)
        rows, table = tabulate(found, facts)
    shown, listed = choose(found, facts)
    here = Path(stage.results).parent
    texts = {run: read_transcript(files[run], run, facts[run].get("transcript")) for run in [*shown, *listed]}
    runs = {run: shown_run(texts[run][0], here) for run in shown}
    by_name = {score["run"]: score for score in found}
    verdicts = verdicts_of(shown, where)
    data = {
        "format": FORMAT,
        "lesson": lesson,
        "tolerance": stage.tolerance,
        "score_unit": list(registry.lesson(lesson).unit),
        "allowlists": allowlists(lesson),
        "counts": counts(facts, found),
        "runs": runs,
        "verdicts": verdicts,
        "groups": groups_of({facts[run]["group_key"] for run in shown if "group_key" in facts[run]}, groups),
        "right_answer": registry.lesson(lesson).right_answer,
        "scores": [by_name[entry] for entry in shown],
        "listed": [listed_entry(by_name[entry], facts, here) for entry in listed],
        "scorecard": rows,
        "answers": {entry["instance"]: answers[entry["instance"]] for entry in verdicts.values()},
        "family": family_summary(registry.lesson(lesson), found, read_json(stage.baselines)),
        "scans": read_json(stage.scans),
        "exercises": read_json(stage.exercises),
    }
    write_json(stage.results, check(data, stage.results))
    write_json(stage.scorecard_json, {"lesson": lesson, "counts": data["counts"], "scorecard": rows})
    recording_io.write_atomic(stage.scorecard_csv, csv_text(scorecard_table(rows)))
    recording_io.write_atomic(stage.runs_table, runs_table_bytes(table))
    return cast(Strict, strict(data, stage.results)), {run: text for run, (_, text) in texts.items()}


NEVER_RIGHT_SHOWN = 60  # instances listed by id that runs took and never got right (the rest are counted)


def family_summary(lesson: "Lesson", found: Sequence[dict[str, Any]], baselines: dict[str, Any]) -> dict[str, Any]:
    """The lesson's family as the page shows it: how many instances of each difficulty, the runs and
    right ones per difficulty, the instances the runs took and never got right, and the careful and
    the trivial program's results (baselines.json)."""
    instances = lesson.instances
    taken: dict[str, tuple[int, int]] = {}
    for score in found:
        runs, right = taken.get(score["instance"], (0, 0))
        taken[score["instance"]] = (runs + 1, right + score["right"])
    by_difficulty = []
    for level in DIFFICULTIES:
        ids = [i for i, instance in instances.items() if instance.difficulty == level]
        runs = [taken[i] for i in ids if i in taken]
        by_difficulty.append({"difficulty": level, "instances": len(ids), "taken": len(runs),
                              "runs": sum(r for r, _ in runs), "right": sum(k for _, k in runs)})
    never = [i for i in instances if i in taken and taken[i][1] == 0]
    programs = {name: {key: program[key] for key in ("strategy", "runs", "right", "by_difficulty")}
                for name, program in baselines["programs"].items()}
    return {"instances": len(instances), "seeds": [i for i, instance in instances.items() if instance.seed],
            "by_difficulty": by_difficulty, "never_right": never[:NEVER_RIGHT_SHOWN], "never_right_count": len(never),
            "not_taken": len(instances) - len(taken), "baselines": programs}


def link(path: str | Path, here: str | Path) -> str:
    """A file's path as a page in the folder `here` links to it."""
    return Path(os.path.relpath(path, here)).as_posix()


def transcript_file(run: str, here: str | Path) -> str:
    """The link, from the folder `here` (results/<lesson>), to the file of a run of the sample's
    transcript, which `write_run_pages` writes: runs/<run>.json."""
    return link(Path(here) / RUN_PAGES / f"{run}.json", here)


RUN_PAGES = "runs"  # the folder of the run pages, and of the sample's transcripts, beside the lesson's page


def shown_run(run: recording_io.Recording, here: str | Path) -> dict[str, Any]:
    """A run shown in full: who made it, the command that records it again, and its transcript as
    replayed (read and checked from its batch's file; a copy at `file`)."""
    return {
        "variant": run.variant,
        "group": run.group,
        "label": run.label,
        "provenance": run.provenance,
        "rerecord": rerecord_command(run),
        "file": transcript_file(run.run, here),
        "transcript": recording_io.to_data(run),
    }


def counts(facts: dict[str, dict[str, Any]], found: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """How many runs, answered, right and supported ones, and how many runs of each label."""
    labels: dict[str, int] = {}
    for fact in facts.values():
        labels[fact["label"]] = labels.get(fact["label"], 0) + 1
    return {
        "runs": len(facts),
        "answered": sum(score["answered"] for score in found),
        "right": sum(score["right"] for score in found),
        "supported": sum(bool(score["supported"]) for score in found),
        "labels": dict(sorted(labels.items())),
    }


def listed_entry(score: dict[str, Any], facts: dict[str, dict[str, Any]], here: str | Path) -> dict[str, Any]:
    """A run listed after those shown in full: its score, and a link to its transcript."""
    name = score["run"]
    fact = facts[name]
    return {**score, "variant": fact["variant"], "label": fact["label"], "messages": fact["messages"],
            "file": transcript_file(name, here)}


def groups_of(keys: Iterable[str], groups: dict[str, Any]) -> dict[str, Any]:
    """{group key: decision} of the groups of the runs shown (a lesson that decides per group)."""
    return {key: groups[key] for key in sorted(keys)}


def write_tables(lesson: str, results: dict[str, Any], folder: str | Path) -> None:
    """Every table of a lesson (from its results.json data) as CSV, into a folder that appears
    whole or not at all."""
    tables = registry.lesson(lesson).tables(results)
    with whole_folder(folder) as building:
        for name, rows in tables.items():
            (building / f"{name}.csv").write_text(csv_text(rows), encoding="utf-8")


def figure_names(lesson: str) -> list[str]:
    return list(registry.lesson(lesson).figures)


def write_figure(lesson: str, name: str, results: dict[str, Any], target: str | Path) -> None:
    """Draw one figure of a lesson to PNG."""
    save_figure(registry.lesson(lesson).figures[name](results), target)


def save_figure(figure: "Figure", target: str | Path) -> None:
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


def write_figures(lesson: str, results: dict[str, Any], folder: str | Path) -> None:
    """Every figure of a lesson, into a folder that appears whole or not at all."""
    with whole_folder(folder) as building:
        for name in figure_names(lesson):
            write_figure(lesson, name, results, building / f"{name}.png")


def write_markdown_and_html(target: str | Path, text: str) -> float:
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


def write_page(lesson: str, results: dict[str, Any], target: str | Path, index: str | None = None, label: str = "") -> float:
    """A lesson's page, as Markdown and HTML; `index`: the path from the page to the page that lists
    it, linked at the top and the bottom with the words `label` (None: no link). A plain lesson's
    page has none: `snakemake LESSON` builds it without the summary, and a page links only to files
    made whenever it is. Returns the seconds the HTML took."""
    text = registry.lesson(lesson).page(results)
    if index is not None:
        link = f"[← {label}]({index})"
        text = f"{link}\n\n{text}\n{link}\n"
    return write_markdown_and_html(target, text)


def render_lesson(stage: Render) -> float:
    """What a lesson shows, from its judged runs: results.json, the scorecard, tables, figures, page
    (Markdown and HTML; a campaign's, linked to its campaign `stage.index`). Returns the seconds the HTML took."""
    results, transcripts = collected(stage)  # the data as written, used by every writer below
    write_tables(stage.lesson, results, stage.tables)
    write_figures(stage.lesson, results, stage.figures)
    write_run_pages(stage.lesson, results, Path(stage.page).parent / RUN_PAGES, transcripts)
    return write_page(stage.lesson, results, stage.page, stage.index, stage.index_label)


def write_run_pages(lesson: str, results: dict[str, Any], folder: str | Path, transcripts: Mapping[str, str] | None = None) -> None:
    """A page of each run the lesson's page shows (runs/<run>.md and .html), and the transcript of
    each run it shows or lists (`transcripts`: {run: its text}, runs/<run>.json), into a folder
    that appears whole or not at all; the lesson's page links to each."""
    from replaylab.html_page import html_page
    from replaylab.lessons.markdown import run_page

    heading = registry.lesson(lesson).heading
    with whole_folder(folder) as building:
        for run_name, text in (transcripts or {}).items():
            (building / f"{run_name}.json").write_text(text, encoding="utf-8")
        for run_name in results["runs"]:
            page = run_page(run_name, results, heading)
            (building / f"{run_name}.md").write_text(page, encoding="utf-8")
            (building / f"{run_name}.html").write_text(html_page(page, building), encoding="utf-8")
