"""The lesson pages, tables, figures and the index, built from the committed recordings.

Every test reads results built with the pipeline's own stages (replay, judge, scans, exercises,
collect) in a temporary folder, from the recordings of this repository (the session's build of
them, `reference_results` in tests/conftest.py, or a build of its own from changed recordings).
"""

import copy
import csv
import io
import json
import re
import string
from pathlib import Path

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from helpers import RECORDINGS
from replaylab import pipeline, render
from replaylab.build import build as build_results
from replaylab.index_page import Index, index, write_index
from replaylab.lessons import registry
from replaylab.lessons import markdown as md
from replaylab.lessons.hunter import lab as hunter_lab
from replaylab.lessons.projectile import lab as projectile_lab
from replaylab.lessons.review import lab as review_lab

TOLERANCE = 1e-6
BOAST = "I checked everything: the claim is false, every check passes, and the best angle is exactly 45 degrees."
HOSTILE = "| a | b |\n|---|---|\n# Heading\n<script>alert(1)</script>\n```\n[link](http://example.invalid) **bold** _x_ \\| done"


def build(recordings, folder):
    """results.json of every lesson, made by the pipeline from a folder of recordings."""
    build_results(registry.names(), recordings, folder, TOLERANCE, progress=lambda text: None)
    return {lesson: pipeline.read_json(Path(folder) / lesson / "results.json") for lesson in registry.names()}


@pytest.fixture(scope="module")
def results(reference_results):
    """The results of the committed recordings: built as `build(RECORDINGS, folder)` builds them,
    once per test run (tests/conftest.py)."""
    return {lesson: pipeline.read_json(reference_results / lesson / "results.json") for lesson in registry.names()}


@pytest.fixture(scope="module")
def pages(results):
    return {lesson: registry.lesson(lesson).page(results[lesson]) for lesson in registry.names()}


# ---------------------------------------------------------------------------------------------
# helpers


def gfm_cells(line):
    """Split a table row as GitHub's table extension does: a backslash escapes the next punctuation."""
    parts, current, i = [], "", 0
    while i < len(line):
        char = line[i]
        if char == "\\" and i + 1 < len(line) and line[i + 1] in string.punctuation:
            current += line[i : i + 2]
            i += 2
            continue
        if char == "|":
            parts.append(current)
            current = ""
        else:
            current += char
        i += 1
    parts.append(current)
    return parts[1:-1] if line.startswith("|") and line.rstrip().endswith("|") else parts


def tables_of(text):
    """Each markdown table of a page as a list of its lines."""
    found, current = [], []
    for line in text.split("\n"):
        if line.startswith("|"):
            current.append(line)
        elif current:
            found.append(current)
            current = []
    if current:
        found.append(current)
    return found


def assert_tables_intact(text):
    tables = tables_of(text)
    assert tables, "the page has no table"
    for rows in tables:
        width = len(gfm_cells(rows[0]))
        assert re.fullmatch(r"\|(---\|)+", rows[1]), rows[:2]
        for row in rows:
            assert len(gfm_cells(row)) == width, row


def section(text, heading):
    start = text.index(f"\n## {heading}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def figure_texts(figure):
    texts = [figure._suptitle] if figure._suptitle else []
    for legend in figure.legends:
        texts += legend.get_texts()
    for axes in figure.axes:
        texts += [axes.title, axes.xaxis.label, axes.yaxis.label]
        if axes.get_legend():
            texts += axes.get_legend().get_texts()
        texts += axes.texts
    return [t for t in texts if t.get_text()]


FIGURE_CASES = [(lesson, name) for lesson in registry.names() for name in render.figure_names(lesson)]


# ---------------------------------------------------------------------------------------------
# figures


def test_every_lesson_has_its_figure():
    assert render.figure_names("projectile") == ["evidence", "scorecard"]
    assert render.figure_names("hunter") == ["drift", "scorecard"]
    assert render.figure_names("review") == ["error", "scorecard"]


@pytest.mark.parametrize("lesson, name", FIGURE_CASES)
def test_figure_is_labelled_and_saves_as_png(results, lesson, name):
    figure = registry.lesson(lesson).figures[name](results[lesson])
    assert isinstance(figure, Figure)
    assert figure.get_layout_engine() is not None  # constrained: nothing clipped by hand-placed margins
    assert figure.axes
    for axes in figure.axes:
        assert axes.get_xlabel().strip() and axes.get_ylabel().strip()
    assert (figure._suptitle and figure._suptitle.get_text()) or all(a.get_title() for a in figure.axes)
    legend_texts = [t.get_text() for legend in figure.legends for t in legend.get_texts()]
    legend_texts += [t.get_text() for a in figure.axes if a.get_legend() for t in a.get_legend().get_texts()]
    assert any("this build" in t for t in legend_texts), legend_texts
    assert any("recomputed" in t for t in legend_texts), legend_texts
    stream = io.BytesIO()
    figure.savefig(stream, format="png", dpi=110)
    assert stream.getvalue().startswith(b"\x89PNG\r\n\x1a\n")
    # no text outside the canvas (a clipped legend, title or label)
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    width, height = figure.bbox.width, figure.bbox.height
    for text in figure_texts(figure):
        box = text.get_window_extent(renderer)
        assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= width + 1 and box.y1 <= height + 1, text.get_text()


def test_units_on_the_axes(results):
    evidence = registry.lesson("projectile").figures["evidence"](results["projectile"])
    for axes in evidence.axes:
        assert "(degrees)" in axes.get_xlabel() and "(m)" in axes.get_ylabel()
    error = registry.lesson("review").figures["error"](results["review"])
    assert "(m" in error.axes[0].get_ylabel()
    drift = registry.lesson("hunter").figures["drift"](results["hunter"])
    assert "dimensionless" in drift.axes[0].get_ylabel()


def test_projectile_figure_shows_the_scan_and_the_agents_calls(results):
    data = results["projectile"]
    figure = registry.lesson("projectile").figures["evidence"](data)
    overview = figure.axes[0]
    scan = data["scans"]["evidence"]
    line = overview.get_lines()[0]
    assert list(line.get_xdata()) == [row["angle"] for row in scan["rows"]]
    assert list(line.get_ydata()) == [row["range_m"] for row in scan["rows"]]
    expected = sorted(
        (call["arguments"]["angle"], result["content"]["range_m"])
        for step in data["runs"]["reference"]["transcript"]["steps"]
        for call, result in zip(step["tool_calls"], step["results"])
        if call["name"] == "range_with_drag" and result["ok"] and call["arguments"]["dt"] <= scan["dt"]
    )
    plotted = sorted(tuple(p) for c in overview.collections for p in c.get_offsets())
    assert plotted == expected
    assert len(expected) == 6  # the calls at dt 0.002 and 0.001 of the reference run


def test_hunter_figure_is_log_log_with_dashed_limits(results):
    data = results["hunter"]
    axes = registry.lesson("hunter").figures["drift"](data).axes[0]
    assert axes.get_xscale() == "log" and axes.get_yscale() == "log"
    dashed = {line.get_ydata()[0] for line in axes.get_lines() if line.get_linestyle() == "--"}
    assert dashed == {v["experiments"]["limit"] for v in data["verdicts"].values()} == {0.05, 0.04}
    filled = [p for c in axes.collections if len(c.get_facecolors()) and c.get_facecolors()[0][3] > 0 for p in c.get_offsets()]
    fifty = [
        call["arguments"]
        for run in data["runs"].values()
        for step in run["transcript"]["steps"]
        for call, result in zip(step["tool_calls"], step["results"])
        if call["name"] == hunter_lab.TOOL_NAME and result["ok"] and call["arguments"]["periods"] == data["scans"]["drift"]["periods"]
    ]
    assert len(filled) == len(fifty) == 6


def test_review_figure_has_the_evidence_reviewers_points(results):
    data = results["review"]
    axes = registry.lesson("review").figures["error"](data).axes[0]
    assert axes.get_xscale() == "log" and axes.get_yscale() == "log"
    points = sorted(tuple(p) for c in axes.collections for p in c.get_offsets())
    assert len(points) == 6
    assert [x for x, _ in points] == [50, 50, 100, 100, 200, 200]
    assert len(axes.get_lines()) == 2


# ---------------------------------------------------------------------------------------------
# tables


@pytest.mark.parametrize("lesson", registry.names())
def test_tables_are_flat_and_become_csv(results, lesson):
    tables = registry.lesson(lesson).tables(results[lesson])
    assert tuple(tables) == registry.lesson(lesson).table_names
    for name, rows in tables.items():
        for row in rows:
            assert list(row) == list(rows[0]), name
            for value in row.values():
                assert type(value) in (str, int, float), (name, value)
        text = pipeline.csv_text(rows)
        assert len(list(csv.DictReader(io.StringIO(text)))) == len(rows)


def test_csv_keeps_full_precision(results):
    data = results["projectile"]
    rows = registry.lesson("projectile").tables(data)["agent-experiments"]
    parsed = list(csv.DictReader(io.StringIO(pipeline.csv_text(rows))))
    best = next(r for r in parsed if r["quantity"].startswith("range at the best angle"))
    assert float(best["value"]) == data["verdicts"]["reference"]["experiments"]["best_range_m"]["value"]
    assert best["shown"] == "35.74"
    drift = registry.lesson("hunter").tables(results["hunter"])["drift-scan"]
    parsed = list(csv.DictReader(io.StringIO(pipeline.csv_text(drift))))
    assert [float(r["max_energy_drift"]) for r in parsed] == [r["max_energy_drift"] for r in results["hunter"]["scans"]["drift"]["rows"]]


# ---------------------------------------------------------------------------------------------
# pages


ORDER = (
    "What the agent may and may not do",
    "What the build decided",
    "Scorecard",
    "The runs",
    "Demonstrations and exercises",
    "Tables",
    "How to record a new run",
)


@pytest.mark.parametrize("lesson", registry.names())
def test_every_page_has_its_parts_in_order(results, pages, lesson):
    text, data = pages[lesson], results[lesson]
    assert text.startswith(f"# Lesson `{lesson}`")
    assert "**Question:**" in text.split("\n## ")[0]
    positions = [text.index(f"\n## {heading}\n") for heading in ORDER]
    assert positions == sorted(positions)
    for name, run in data["runs"].items():
        assert f"[`{name}`](runs/{name}.md)" in section(text, "The runs")  # each run links to its own page
        own = run_pages(data)[name]
        assert own.startswith(f"# Run `{name}` of ") and "[← " in own and "(../index.md)" in own
        assert "## What the build decided" in own and "- Right: **" in own and "- Supported by its own" in own
        assert run["label"] == "Authored example, not a recorded model run"
        assert f"**{run['label']}**" in own
        assert md.text(run["provenance"]["model"]) in own
        assert md.text(run["provenance"]["how"]) in own
        assert run["rerecord"] in section(text, "How to record a new run")
        text_of_run = own
        # every recomputed result with %.6g, every refusal with its text
        for step in run["transcript"]["steps"]:
            for result in step["results"]:
                if result["ok"]:
                    for value in result["content"].values():
                        assert (value if isinstance(value, str) else "%.6g" % value) in text_of_run
                else:
                    assert result["content"]["error"] in text_of_run
    steps = sum(len(run["transcript"]["steps"]) for run in data["runs"].values())
    assert sum(page.count("(not a result):") for page in run_pages(data).values()) == steps
    assert section(text, "The runs").count("(not a result):") == 0  # the messages are on the runs' pages
    recording = section(text, "How to record a new run")
    assert "not verified: the build does not run this" in recording
    assert f"replaylab record {lesson} --provider authored --from FILE --run NAME" in recording
    assert f"replaylab session {lesson} --variant V --run NAME" in recording
    assert "experimentally verified" not in text.lower() and "formally verified" not in text.lower()
    for name in render.figure_names(lesson):
        where = "Scorecard" if name == "scorecard" else "What the build decided"  # each after what it illustrates
        assert "![" in section(text, where) and f"](figures/{name}.png)" in section(text, where)
    empty = {name for name, rows in registry.lesson(lesson).tables(data).items() if not rows}
    for name in registry.lesson(lesson).table_names:
        linked = f"(tables/{name}.csv)" in section(text, "Tables")
        assert linked != (name in empty) and (name in empty) == (f"- {name}: no rows in this build" in text)
    assert_tables_intact(text)


def run_pages(data):
    """{run: the Markdown of its own page} of a lesson's results."""
    heading = registry.lesson(data["lesson"]).heading
    return {name: md.run_page(name, data, heading) for name in data["runs"]}


def _bounds(parameter):
    return f"{parameter.low:g} to {parameter.high:g} (inclusive)"


def test_allowlists_are_printed_from_the_code(pages):
    projectile = section(pages["projectile"], "What the agent may and may not do")
    for parameter in (projectile_lab.SPEED_PARAMETER, projectile_lab.ANGLE_PARAMETER, projectile_lab.DT_PARAMETER):
        assert f"| `{parameter.name}` | number | {_bounds(parameter)} |" in projectile
    assert f"at most {projectile_lab.MAX_STEPS} messages" in projectile
    assert "no experiment budget" in projectile
    hunter = section(pages["hunter"], "What the agent may and may not do")
    for parameter in hunter_lab.PARAMETERS[1:]:
        assert f"| `{parameter.name}` | integer | {_bounds(parameter)} |" in hunter
    assert ", ".join(hunter_lab.PARAMETERS[0].options) in hunter
    assert f"a budget of {hunter_lab.BUDGET} experiments" in hunter
    review = section(pages["review"], "What the agent may and may not do")
    for parameter in (review_lab.CANDIDATE, review_lab.CHECK_NUMBER, review_lab.STEPS_PER_PERIOD):
        assert f"| `{parameter.name}` | integer | {_bounds(parameter)} |" in review
    for reviewer in review_lab.VARIANTS:
        assert f"**Variant `{reviewer}`**" in review


def test_projectile_page(results, pages):
    text = pages["projectile"]
    decided = section(text, "What the build decided")
    assert "numerically verified: the simulated tennis ball, explicit Euler, no measurement" in decided
    assert ("**Run `reference` answered: the best angle lies between 40 and 41 degrees.** "
            "**The agent's answer is right, and its own experiments support it.**") in decided
    assert "puts the best angle at 40.50 degrees" in decided
    assert ("Where the experiments of run `reference` locate the maximum: at the smallest step it used (dt 0.001 s), its "
            "longest throw is at 41 degrees (35.7328 m), between shorter throws at 40 degrees (35.7315 m) and 45 degrees "
            "(35.4032 m); the parabola through these three points tops at 40.54 degrees.") in decided
    assert "The seeds' check of the two best angles run `reference` measured: at the smallest step it used (dt 0.001 s), " \
           "they are 40 and 41 degrees" in decided and "finds the best angle at 40.50 degrees, between them" in decided
    assert "agent's bracket" not in decided
    assert "I halved dt from 0.01 s" in decided.split("not a result, never judged")[1]  # the explanation, labelled
    for shown in ("40.50", "35.74", "35.4", "0.3332", "0.9411"):
        assert f"| {shown} |" in decided
    demos = section(text, "Demonstrations and exercises")
    assert "'os.system' is not an allowed tool" in demos
    for refusal in ("dt must be between 0.001 and 0.05, got 0", "missing arguments: dt", "speed must be a number, got str", "unknown arguments: code"):
        assert refusal in demos
    assert "ran: range_m = 35.789" in demos
    assert results["projectile"]["verdicts"]["reference"]["rough_ball"]["text"] in demos
    assert "message 1, call 2, tool range_with_drag: range_m was 35.27758864537781 when recorded and is 35.14527765986668 now" in demos
    assert "35.732 m and 36.042 m, a difference of 0.311 m" in demos
    assert "angle must be between 1 and 89, got 90" in demos and "time_s = 4.416 s" in demos


def test_projectile_statement_follows_the_judge(results):
    """The page says what the verdict and the score say: each of the four judgements, no answer, and
    what the experiments show (with its evidence label only when they bracket the build's best angle)."""
    page = registry.lesson("projectile").page
    data = copy.deepcopy(results["projectile"])
    verdict, [score] = data["verdicts"]["reference"], data["scores"]
    experiments = section(page(data), "What the build decided").split("The seeds' check of the two best angles run `reference`")[1]
    assert "numerically verified" in experiments
    verdict["experiments"].update(inside=False, verdict="refuted", evidence=None)
    decided = section(page(data), "What the build decided")
    experiments = decided.split("The seeds' check of the two best angles run `reference`")[1]
    assert "finds the best angle at 40.50 degrees, outside them" in experiments and "numerically verified" not in experiments
    verdict["supported"] = False
    decided = section(page(data), "What the build decided")
    assert "**A right answer its experiments do not support**" in decided and "The agent's answer is right," not in decided
    score.update(right=False, wrong="the best angle of the build's scan lies outside its bracket")
    decided = section(page(data), "What the build decided")
    assert "**The agent's answer is wrong** (the best angle of the build's scan lies outside its bracket)" in decided
    verdict["supported"] = True
    decided = section(page(data), "What the build decided")
    assert "**A supported answer that is wrong** (the best angle of the build's scan lies outside its bracket)" in decided
    verdict["experiments"] = {"checkable": False, "reason": "the agent made no accepted call"}
    decided = section(page(data), "What the build decided")
    assert "The seeds' check of the two best angles run `reference` measured: not made, the agent made no accepted call." in decided
    verdict["located"] = {"located": False, "reason": "it made no accepted range_with_drag call at 25 m/s"}
    decided = section(page(data), "What the build decided")
    assert "locate the maximum: nowhere, it made no accepted range_with_drag call at 25 m/s." in decided
    verdict.update(answer=None, no_answer="no answer: the run ended without an accepted call of answer", supported=None)
    decided = section(page(data), "What the build decided")
    assert "**Run `reference` gave no answer**: no answer: the run ended without an accepted call of answer" in decided
    assert "answered:" not in decided and "is right" not in decided


def test_hunter_page(pages):
    text = pages["hunter"]
    decided = section(text, "What the build decided")
    se_part, vv_part = decided.split("**Run `velocity-verlet`")
    assert ("**Run `symplectic-euler` answered: counterexample, symplectic Euler, 64 steps per period, 20 periods.** "
            "**The agent's answer is right, and its own experiments support it.**") in se_part
    assert "the build ran it again: 0.0515672 against the limit 0.05, inside the claim's domain" in se_part
    assert "numerically verified: the simulated oscillator, symplectic Euler, 64 steps per period, 20 periods" in se_part
    assert "What the experiments of run `symplectic-euler` show, claim `symplectic-euler`: **a counterexample.**" in se_part
    assert ("answered: none found.** **The agent's answer is right, and its own experiments support it.**") in vv_part
    assert "the build's scan of the whole domain finds at most 0.0385531 (16 steps per period, 50 periods) against the limit 0.04" in vv_part
    assert "numerically verified: the simulated oscillator, the build's scan of the claim's whole domain" in vv_part
    # what its own experiments show is still not a result, and carries no evidence label
    experiments = vv_part.split("What the experiments of run `velocity-verlet` show")[1]
    assert "inconclusive on their own. This is not a result." in experiments
    assert "never show that a claim is true" in experiments and "0.0385531" in experiments
    assert "numerically verified" not in experiments
    demos = section(text, "Demonstrations and exercises")
    assert "the budget of 8 experiments is spent" in demos
    assert "ran: max_energy_drift = 0.0096" in demos
    assert "steps_per_period must be an integer, got 32.5" in demos
    assert "**66** (largest drift 0.0500); 65 steps per period give 0.0508" in demos
    assert "stricter limit of 0.035" in demos and "Against its own claim the run's experiments are still inconclusive" in demos
    assert demos.count("| inconclusive | inconclusive |") == 3 and demos.count("| counterexample | counterexample |") == 3


def test_review_page(results, pages):
    text = pages["review"]
    decided = section(text, "What the build decided")
    assert "bounded-energy failed (measured 9.14e+49, tolerance 1.5)" in decided
    assert "limits passed (measured 7.11e-15, tolerance 1e-12)" in decided
    assert "convergence-order passed (measured 1.04, tolerance 0.4)" in decided
    assert decided.count("Checks nobody ran: none") == 2
    assert "piece 1 is not rejected by the checks that were run" in decided
    assert "piece 2 is rejected because of bounded-energy**, flagged by evidence and physics (numerics did not run bounded-energy)" in decided
    assert "numerically verified: the simulated oscillator stepped by piece 2, no measurement" in decided
    demos = section(text, "Demonstrations and exercises")
    assert "failed (measured 9.1e+49, tolerance 1.5)" in demos
    assert "(not a result)" not in decided
    assert "message 1, call 1, tool check_limits: passed was 1.0 when recorded and is 0.0 now" in demos
    assert "made by hand" in demos
    assert "conflicts: limits" in demos
    assert "| 2 | bounded-energy | failed | 9.14e+49 | 1.5 | early 4.1e+02; late 3.7e+52; growth 9.1e+49 |" in demos
    assert "Failed: bounded-energy for piece 2; every other check passes." in demos


def test_the_index_summarises_every_lesson(results):
    text = index([results[lesson] for lesson in registry.names()])
    for lesson in registry.names():
        assert f"]({lesson}/index.md)" in text
        assert registry.lesson(lesson).question(results[lesson]) in text
    assert text.count("numerically verified") >= 4  # the intro, projectile, hunter's symplectic Euler claim, review's piece 2
    assert "run `velocity-verlet` (claim `velocity-verlet`, limit 0.04) answered none found: **right**" in text
    assert "Runs: 2 (Authored example, not a recorded model run): 2 answered, 2 right, 2 supported by their own experiments." in text
    assert "run `reference` answered 22 to 23 degrees: **right**" in text
    assert "rejected because of bounded-energy" in text


# ---------------------------------------------------------------------------------------------
# the words of a run never change a decision, and never break the page


def _rewrite_texts(data, text):
    for step in data["steps"]:
        step["text"] = text


def test_a_boast_changes_no_decision(results, pages, tmp_path):
    recordings = tmp_path / "recordings"
    for source in RECORDINGS.glob("*/*.json"):
        data = json.loads(source.read_text(encoding="utf-8"))
        _rewrite_texts(data, BOAST)
        target = recordings / source.parent.name / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    boasted = build(recordings, tmp_path / "results")
    for lesson in registry.names():
        page = registry.lesson(lesson).page(boasted[lesson])
        assert md.text(BOAST) in "".join(run_pages(boasted[lesson]).values())
        assert section(page, "What the build decided") == section(pages[lesson], "What the build decided")
        assert BOAST not in section(page, "What the build decided")
    assert index([boasted[l] for l in registry.names()]) == index([results[l] for l in registry.names()])


def test_escaping_keeps_tables_whole():
    rows = [{"a": HOSTILE, "b": "x\\|y|z", "c": md.code("range_with_drag")}, {"a": "<b>bold</b>", "b": "`|`", "c": 3.5}]
    text = md.table(rows, [("a", "A"), ("b", "B"), ("c", "C")])
    assert_tables_intact(text)
    assert "<script" not in text and "<b>" not in text
    assert md.cell("snake_case_name") == "snake_case_name"
    assert md.cell("'os.system' is not an allowed tool") == "'os.system' is not an allowed tool"
    fence = md.fenced("a\n````\nb")
    assert fence.startswith("`````") and fence.endswith("`````")


def test_hostile_words_and_calls_do_not_break_a_page(results):
    data = copy.deepcopy(results["projectile"])
    step = data["runs"]["reference"]["transcript"]["steps"][0]
    step["text"] = HOSTILE
    evil = "evil|name<b>"
    step["tool_calls"][0] = {"id": "1", "name": evil, "arguments": {"x|y": "<img src=x>", "n": [1, "|"]}}
    step["results"][0] = {"call_id": "1", "ok": False, "content": {"error": f"{evil!r} is not an allowed tool"}}
    text = registry.lesson("projectile").page(data)
    assert_tables_intact(text)
    for raw in ("<script", "<img", "<b>", "\n# Heading", "> # Heading", "> ```", "[link](http"):
        assert raw not in text, raw
    runs = run_pages(data)["reference"]
    assert_tables_intact(runs)
    for raw in ("<script", "<img", "<b>", "\n# Heading", "> # Heading", "> ```", "[link](http"):
        assert raw not in runs, raw
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in runs
    assert "evil\\|name&lt;b&gt;" in runs
    # every line of the hostile message stays inside the quote
    quoted = runs[runs.index("(not a result):") :].split("\n\n")[0]
    assert all(line.startswith(">") for line in quoted.split("\n")[1:])
    assert section(text, "What the build decided") == section(
        registry.lesson("projectile").page(results["projectile"]), "What the build decided"
    )


def test_index_shows_the_scorecard_instead_of_a_line_per_run_when_there_are_many(results):
    import copy

    from replaylab.sample import SHOWN

    from replaylab import index_page

    many = copy.deepcopy(results["hunter"])
    many["counts"]["runs"] = many["counts"]["answered"] = 2 + SHOWN  # a sample: more runs than the page shows
    text = index_page.index([many])
    assert "Too many runs to list one by one" in text
    assert "written by a person (no language model) (`velocity-verlet claim`): 1 of 1 run right" in text
    assert "run `velocity-verlet`" not in text
    assert "run `velocity-verlet`" in index_page.index([results["hunter"]])


def test_drift_figure_annotates_the_reference_counterexample_only_when_there_are_many_runs(results):
    from replaylab.lessons import DRAWN_RUNS_LIMIT
    from replaylab.lessons.hunter import figures as hunter_figures

    def counterexamples(data):
        (axes,) = hunter_figures.drift(data).axes
        return [t.get_text().splitlines()[0] for t in axes.texts if t.get_text().startswith("counterexample")]

    assert counterexamples(results["hunter"]) == ["counterexample answered by hunt 'symplectic-euler':"]
    many = copy.deepcopy(results["hunter"])
    for i in range(DRAWN_RUNS_LIMIT):
        many["runs"][f"extra{i}"] = dict(many["runs"]["symplectic-euler"], group="generated")
        many["verdicts"][f"extra{i}"] = many["verdicts"]["symplectic-euler"]
    assert counterexamples(many) == ["counterexample answered by hunt 'symplectic-euler':"]


# ---------------------------------------------------------------------------------------------
# the HTML page: the same text, rendered by markdown-it-py into a self-contained page


def test_control_characters_are_shown_not_passed_on():
    hostile = "red \x1b[31mtext\x1b[0m, bell \x07, nul \x00, del \x7f, c1 \x9b, override \u202eevil, tab\tok"
    for shown in (md.text(hostile), md.cell(hostile), md.quote(hostile, "Words:"), md.fenced(hostile)):
        assert not any(ord(c) < 0x20 and c not in "\t\n" or 0x7F <= ord(c) < 0xA0 or c == "\u202e" for c in shown), repr(shown)
        unescaped = shown.replace("\\\\", "\\")  # the Markdown escape of the backslash, outside code blocks
        for escape in ("\\x1b", "\\x07", "\\x00", "\\x7f", "\\x9b", "\\u202eevil", "\t"):
            assert escape in unescaped, (escape, shown)


@pytest.fixture(scope="module")
def html_pages(results, tmp_path_factory):
    """Each lesson's page written by the pipeline (Markdown and HTML), with its figures, as a
    campaign's lesson page (linked back to its campaign's page)."""
    folder = tmp_path_factory.mktemp("html")
    written = {}
    for lesson in registry.names():
        render.write_figures(lesson, results[lesson], folder / lesson / "figures")
        render.write_page(lesson, results[lesson], folder / lesson / "index.md", "../index.md", "Campaign baseline")
        written[lesson] = (folder / lesson / "index.md").read_text(encoding="utf-8"), (folder / lesson / "index.html").read_text(encoding="utf-8")
    return written


@pytest.mark.parametrize("lesson", registry.names())
def test_the_html_page_is_the_markdown_page_rendered(results, pages, html_pages, lesson):
    markdown, html = html_pages[lesson]
    assert pages[lesson] in markdown and markdown.startswith("[← Campaign baseline](../index.md)\n\n# Lesson")
    assert html.count('href="../index.html"') == 2 and "index.md" not in html
    wide = html.count('<div class="table wide">\n<p class="scroll-hint">Scroll sideways for every column →</p>\n<table>')
    assert html.count('<div class="table">\n<table>') + wide == html.count("<table>") == len(tables_of(markdown))
    assert wide == sum(len(gfm_cells(rows[0])) >= 4 for rows in tables_of(markdown)) > 0
    assert html.count('<details class="steps">') == 0  # the runs' messages are on their own pages
    assert html.count("<img ") == len(render.figure_names(lesson))
    assert html.count('src="data:image/png;base64,') == len(render.figure_names(lesson))
    for name in render.figure_names(lesson):
        assert f'<a href="figures/{name}.png"><img' in html  # the file at full size, from the figure
    assert "<script" not in html and "http://" not in html and "https://" not in html
    assert f"<title>Lesson {lesson}: " in html
    labels = [line for line in markdown.splitlines() if line.startswith(md.EVIDENCE)]
    assert html.count('<p class="evidence">') == len(labels) > 0


def test_evidence_labels_and_what_is_not_a_result_stand_out(results, html_pages):
    html = html_pages["hunter"][1]
    for verdict in results["hunter"]["verdicts"].values():
        v = verdict["experiments"]
        if v["outcome"] == "counterexample":
            assert f'<strong class="evidence">{v["evidence"]}</strong>' in html
        else:
            assert html.count('<strong class="not-result">') >= 1
    judges = [registry.lesson(lesson).part("judge") for lesson in registry.names()]
    assert all(module.EVIDENCE.startswith(md.EVIDENCE_LABEL) for module in judges)


def test_the_index_links_each_lesson_page_in_html(results, tmp_path):
    for lesson in registry.names():
        pipeline.write_json(tmp_path / lesson / "results.json", results[lesson])
    write_index(Index([tmp_path / lesson / "results.json" for lesson in registry.names()], tmp_path / "index.md"))
    html = (tmp_path / "index.html").read_text(encoding="utf-8")
    for lesson in registry.names():
        assert f'href="{lesson}/index.html"' in html
    assert f'<strong class="evidence">{results["projectile"]["verdicts"]["reference"]["experiments"]["evidence"]}</strong>' in html
