"""The comparison of a campaign's models: a page, a scorecard (CSV and JSON) and a figure.

Every number comes from the per-run tables that the render jobs of the campaign's lessons wrote
(one row per judged run, right or wrong as decided from recomputed numbers). The scorecard is a
group-by of their concatenation by lesson, task and model (`lessons.scorecard.scorecard`, as a
lesson's scorecard is by model and task). Whether two models' shares of right runs differ beyond
chance is Fisher's exact test, two-sided, computed exactly here from binomial coefficients.
"""

import math
import zlib
from fractions import Fraction
from itertools import combinations
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from replaylab import pipeline, render
from replaylab.agents import clients
from replaylab.agents.recording import LABELS, printable
from replaylab.inputs import DamagedResult, made_by
from replaylab.lessons import counted
from replaylab.lessons.markdown import Md, cell, code, interval, name, table, text
from replaylab.lessons.scorecard import read_runs_table, scorecard, wilson

SIGNIFICANCE = 0.05  # the level at which a difference counts as beyond chance
MEANS = ("calls", "budget_used", "tokens", "input_tokens", "output_tokens", "cost_usd")
RUNS_LISTED = 200  # per lesson; the per-run tables hold every run


# ---------------------------------------------------------------------------------------------
# Fisher's exact test


def fisher_exact(right_a, runs_a, right_b, runs_b):
    """Two-sided p-value of Fisher's exact test of right_a/runs_a against right_b/runs_b: the
    chance, with the margins fixed, of a split at most as likely as the one observed."""
    right = right_a + right_b

    def weight(x):  # tables with x right runs in a: proportional to their probability
        return math.comb(runs_a, x) * math.comb(runs_b, right - x)

    observed = weight(right_a)
    possible = range(max(0, right - runs_b), min(runs_a, right) + 1)
    extreme = sum(w for w in map(weight, possible) if w <= observed)
    return float(Fraction(extreme, math.comb(runs_a + runs_b, right)))


def smallest_p(runs_a, runs_b):
    """The smallest p-value any outcome could give with these numbers of runs: all of one model's
    runs right and none of the other's."""
    return min(fisher_exact(runs_a, runs_a, 0, runs_b), fisher_exact(0, runs_a, runs_b, runs_b))


def compare_pair(a, b):
    """What the build can say about two scorecard rows of one task."""
    p = fisher_exact(a["right"], a["runs"], b["right"], b["runs"])
    if smallest_p(a["runs"], b["runs"]) >= SIGNIFICANCE:
        verdict = "too few runs"
    elif p < SIGNIFICANCE:
        verdict = "differ beyond chance"
    else:
        verdict = "no difference beyond chance"
    return {
        "lesson": a["lesson"],
        "task": a["task"],
        "models": [a["model"], b["model"]],
        "right": [a["right"], b["right"]],
        "runs": [a["runs"], b["runs"]],
        "p_value": p,
        "smallest_possible_p_value": smallest_p(a["runs"], b["runs"]),
        "verdict": verdict,
    }


# ---------------------------------------------------------------------------------------------
# The table of runs and its group-by


def runs_of(lessons, tables, prices):
    """The campaign's per-run table: the lessons' tables one after the other, with each run's
    tokens and cost (where the configuration prices its model)."""
    frames = [runs_table(path).assign(lesson=lesson) for lesson, path in zip(lessons, tables)]
    runs = pd.concat(frames, ignore_index=True)
    runs["tokens"] = runs["input_tokens"] + runs["output_tokens"]
    price_in = runs["model"].map(lambda m: prices.get(m, {}).get("input", math.nan)).astype(float)
    price_out = runs["model"].map(lambda m: prices.get(m, {}).get("output", math.nan)).astype(float)
    runs["cost_usd"] = (runs["input_tokens"].astype(float) * price_in + runs["output_tokens"].astype(float) * price_out) / 1e6
    return runs


def runs_table(path):
    """A lesson's per-run table as the build wrote it, or `DamagedResult` (one line naming it) when
    it was emptied, cut or changed by hand."""
    try:
        return read_runs_table(path)
    except (OSError, EOFError, ValueError, zlib.error) as error:  # pandas' parser errors are ValueErrors
        raise DamagedResult(
            f"{printable(str(path))}: not the table the build wrote ({printable(str(error))}): "
            f"delete it, or run with --forcerun {made_by(path)}"
        ) from None


def compare(runs, models):
    """(scorecard rows per lesson, task and model, in the order of `models`; the comparisons of
    every pair of models on each task)."""
    rows = scorecard(runs, keys=("lesson", "task", "model"), means=MEANS[2:])
    order = {model: i for i, model in enumerate(models)}
    lessons = list(dict.fromkeys(runs["lesson"]))
    rows.sort(key=lambda r: (lessons.index(r["lesson"]), r["task"], order.get(r["model"], len(order)), r["model"]))
    pairs = []
    for lesson, task in dict.fromkeys((r["lesson"], r["task"]) for r in rows):
        of_task = [r for r in rows if (r["lesson"], r["task"]) == (lesson, task)]
        pairs += [compare_pair(a, b) for a, b in combinations(of_task, 2)]
    return rows, pairs


def overall(runs, models):
    """Per model, every task together: runs, right and the interval."""
    found = []
    for model in models:
        mine = runs[runs["model"] == model]
        right, count = int(mine["right"].sum()), len(mine)
        low, high = wilson(right, count)
        found.append({"model": model, "runs": count, "right": right, "rate": right / count if count else None,
                      "low": low, "high": high})
    return found


# ---------------------------------------------------------------------------------------------
# The page


def percent(value):
    return "n/a" if value is None else f"{100 * value:.0f} %"


def share(row):
    return f"{row['right']} of {row['runs']} ({percent(row['rate'])}; 95 % interval {interval(row)})"


def p_text(p):
    return f"p = {p:.2g}" if p >= 0.001 else "p < 0.001"


def pair_sentence(pair, rows_by_model):
    a, b = (rows_by_model[m] for m in pair["models"])
    if a["rate"] == b["rate"]:
        lead = f"{text(a['model'])} and {text(b['model'])} were right equally often ({a['right']} of {a['runs']}, {b['right']} of {b['runs']})"
    else:
        better, worse = (a, b) if a["rate"] > b["rate"] else (b, a)
        lead = (f"**{text(better['model'])}** was right more often than {text(worse['model'])} "
                f"({better['right']} of {better['runs']} against {worse['right']} of {worse['runs']})")
    if pair["verdict"] == "too few runs":
        return (f"{lead}; **too few runs to tell them apart**: with {a['runs']} and {b['runs']} runs even the most "
                f"lopsided outcome gives p = {pair['smallest_possible_p_value']:.2g} or more (Fisher's exact test).")
    if pair["verdict"] == "differ beyond chance":
        return f"{lead}; **the difference is beyond chance** (Fisher's exact test, two-sided, {p_text(pair['p_value'])})."
    return (f"{lead}; the difference is **not beyond chance** (Fisher's exact test, two-sided, {p_text(pair['p_value'])}): "
            "more runs would be needed to tell them apart, if they differ at all.")


def glance_section(rows, pairs, models, totals):
    out = ["## At a glance", ""]
    tasks = list(dict.fromkeys((r["lesson"], r["task"]) for r in rows))
    grid = []
    for lesson, task in tasks:
        entry = {"task": Md(f"[{text(lesson)}]({lesson}/index.md) {code(task)}")}
        mine = {r["model"]: r for r in rows if (r["lesson"], r["task"]) == (lesson, task)}
        best = max((r["rate"] for r in mine.values()), default=None)
        for model in models:
            r = mine.get(model)
            if r is None:
                entry[model] = "no runs"
                continue
            shown = f"{r['right']}/{r['runs']} ({percent(r['rate'])}, {interval(r)})"
            entry[model] = Md(f"**{shown}**" if r["rate"] == best and len(mine) > 1 else shown)
        grid.append(entry)
    columns = [("task", "lesson and task")] + [(m, text(m)) for m in models]
    out += ["Runs right, as the build decides from recomputed numbers, with the 95 % Wilson interval; "
            "the highest share of each task in bold.", "", table(grid, columns), ""]
    out += ["**Every task together:** " + "; ".join(f"{text(t['model'])} {share(t)}" for t in totals) + ".", ""]
    together = {t["model"]: t for t in totals}
    for a, b in combinations(totals, 2):
        pair = compare_pair({**a, "lesson": "", "task": ""}, {**b, "lesson": "", "task": ""})
        out.append(f"- Every task together (runs of all tasks pooled): {pair_sentence(pair, together)}")
    for lesson, task in tasks:
        mine = {r["model"]: r for r in rows if (r["lesson"], r["task"]) == (lesson, task)}
        for pair in (p for p in pairs if (p["lesson"], p["task"]) == (lesson, task)):
            out.append(f"- {text(lesson)} {code(task)}: {pair_sentence(pair, mine)}")
    if len(models) < 2:
        out.append("- One model only: nothing to compare it with.")
    out += ["", "![The share of right runs per task and model, with 95 % intervals](figures/comparison.png)", ""]
    return out


def scorecard_section(rows, priced):
    out = ["## Scorecard", "", "Per lesson task and model. Tokens are those the provider reported (means over the "
           "runs that reported them)" + (", and the cost follows from the configured prices." if priced else "."), ""]
    shown = []
    for r in rows:
        mistakes = "; ".join(f"{text(m['what'])} ({m['runs']})" for m in r["mistakes"]) or "none"
        shown.append({
            "lesson": Md(f"[{text(r['lesson'])}]({r['lesson']}/index.md)"),
            "task": code(r["task"]),
            "model": r["model"],
            "runs": r["runs"],
            "answered": r["answered"],
            "right": f"{r['right']} ({percent(r['rate'])})",
            "interval": interval(r),
            "supported": r["supported"],
            "right_unsupported": r["right_unsupported"],
            "supported_wrong": r["supported_wrong"],
            "calls": f"{r['mean_calls']:.3g}",
            "tokens": "not reported" if r["mean_tokens"] is None else f"{r['mean_tokens']:.4g}",
            "cost": "no price" if r["mean_cost_usd"] is None else f"{r['mean_cost_usd']:.4g}",
            "mistakes": mistakes,
        })
    columns = [("lesson", "lesson"), ("task", "task"), ("model", "model"), ("runs", "runs"), ("answered", "answered"),
               ("right", "right"), ("interval", "95 % interval"), ("supported", "supported by its own experiments"),
               ("right_unsupported", "right, not supported"), ("supported_wrong", "supported, wrong"),
               ("calls", "mean tool calls"), ("tokens", "mean tokens")]
    columns += [("cost", "mean cost (USD)")] if priced else []
    columns += [("mistakes", "what the wrong runs got wrong")]
    return out + [table(shown, columns), ""]


def method_section(settings):
    limits = [f"{code(k)} {settings[k]:g}" for k in ("max_tokens_per_run", "max_seconds_per_run") if settings.get(k)]
    return [
        "## How the build decides",
        "",
        "- Each run was recorded once, then replayed by this build: every tool call went again through the "
        "allowlist and the simulation, and every result was recomputed and compared with the recording.",
        "- Each run is judged on the answer it submitted with the tool `answer`, never on its words. **Right** is "
        "the lesson's own decision from recomputed numbers (its page says what is right); a run with no answer is "
        "not right. **Supported** says whether the run's own replayed experiments point at its answer: a right "
        "answer its experiments do not support was a lucky or unexplained one, and a supported answer that is "
        "wrong came from careful work answered carelessly, or from experiments that misled it.",
        "- The interval is the 95 % Wilson score interval of the share of right runs.",
        "- Two models differ **beyond chance** on a task when Fisher's exact test (two-sided, computed exactly) "
        f"gives p < {SIGNIFICANCE:g}; each pair is tested on its own, with no correction for testing several "
        "pairs. **Too few runs** means that even all runs of one model right and none of the other's could not "
        "reach that level.",
        "- Per-run limits: " + (", ".join(limits) + "; a run stopped by one is not right." if limits else "none."),
        "",
    ]


def runs_section(runs, links):
    out = ["## The runs", "", "Each run links to its transcript as this build replayed it; every run is in "
           "`<lesson>/runs.csv.gz`.", ""]
    for lesson, mine in runs.groupby("lesson", sort=False):
        out += [f"### {text(lesson)} ({len(mine)} runs; [its page]({lesson}/index.md))", ""]
        listed = mine.sort_values("right", kind="stable").head(RUNS_LISTED)  # the wrong ones first
        shown = []
        for row in listed.to_dict("records"):
            n = str(row["recording"])
            shown.append({
                "run": Md(f"[{name(n)}]({links[(lesson, n)]})" if (lesson, n) in links else name(n)),
                "model": row["model"],
                "task": code(row["task"]),
                "right": "right" if row["right"] else Md("wrong: " + cell(row["wrong"])),
                "supported": "" if pd.isna(row["supported"]) else bool(row["supported"]),
                "calls": int(row["calls"]),
                "tokens": "" if pd.isna(row["tokens"]) else int(row["tokens"]),
            })
        out += [table(shown, [("run", "run"), ("model", "model"), ("task", "task"), ("right", "decided"),
                              ("supported", "supported"), ("calls", "tool calls"), ("tokens", "tokens")]), ""]
        if len(mine) > RUNS_LISTED:
            out += [f"{len(mine) - RUNS_LISTED} more runs of {text(lesson)} are in `{lesson}/runs.csv.gz`.", ""]
    return out


def page(settings, lessons, runs, rows, pairs, totals, links):
    models = list(settings["models"])
    priced = bool(settings.get("prices"))
    providers = {entry["name"]: entry["provider"] for entry in settings.get("entries", ())}
    labels = {m: LABELS[clients.load_provider(providers.get(m, settings["provider"])).kind_for(m)] for m in models}
    if len(set(labels.values())) == 1:
        who = f"{', '.join(text(m) for m in models)}, through the provider {code(settings['provider'])}: **{text(labels[models[0]])}**"
    else:  # providers, or a provider (inspect_ai), whose runs are a model's or a program's, by model
        who = (", ".join(f"{text(m)} (**{text(labels[m])}**)" for m in models)
               + f", through the provider {code(settings['provider'])}")
    out = [
        f"# Campaign {text(settings['name'])}: which model gets the lessons right more often",
        "",
        f"Models: {who}. {counted(settings['runs'], 'run', 'runs')} per model and variant of each lesson "
        f"({', '.join(text(lesson) for lesson in lessons)}).",
        "",
    ]
    out += glance_section(rows, pairs, models, totals)
    out += scorecard_section(rows, priced)
    out += method_section(settings)
    out += runs_section(runs, links)
    return "\n".join(out).rstrip() + "\n"


# ---------------------------------------------------------------------------------------------
# The figure


def figure(rows, models):
    tasks = list(dict.fromkeys((r["lesson"], r["task"]) for r in rows))
    height = 2.5 + 0.45 * max(1, len(tasks) * len(models))
    drawing = Figure(figsize=(9, height), layout="constrained")
    axes = drawing.add_subplot()
    width = 0.8 / max(1, len(models))
    colors = [f"C{i}" for i in range(len(models))]
    for i, model in enumerate(models):
        mine = {(r["lesson"], r["task"]): r for r in rows if r["model"] == model}
        positions, rates, low, high, counts = [], [], [], [], []
        for t, key in enumerate(tasks):
            if key in mine:
                r = mine[key]
                positions.append(t + (i - (len(models) - 1) / 2) * width)
                rates.append(100 * r["rate"])
                low.append(max(0.0, 100 * (r["rate"] - r["low"])))
                high.append(max(0.0, 100 * (r["high"] - r["rate"])))
                counts.append(f"{r['right']}/{r['runs']}")
        axes.barh(positions, rates, height=width, color=colors[i], alpha=0.7, label=model)
        axes.errorbar(rates, positions, xerr=[low, high], fmt="none", ecolor="black", capsize=3)
        for position, count in zip(positions, counts):
            axes.text(1, position, count, va="center", fontsize=8)
    axes.set_yticks(range(len(tasks)), [f"{lesson}\n{task}" for lesson, task in tasks], fontsize=8)
    axes.invert_yaxis()
    axes.set_xlim(0, 100)
    axes.set_xlabel("runs right, judged from recomputed numbers (%), with the 95 % Wilson interval")
    axes.grid(axis="x", alpha=0.3)
    drawing.legend(loc="outside lower center", ncols=min(4, max(1, len(models))), fontsize=8)
    drawing.suptitle("Which model is right more often (decided by this build)")
    return drawing


# ---------------------------------------------------------------------------------------------
# The job


def transcript_links(lessons, folders, root):
    """{(lesson, run): the transcript's path relative to the campaign's folder}."""
    links = {}
    for folder in map(Path, folders):
        lesson = folder.parent.parent.name  # <root>/<lesson>/transcripts/<batch>
        for path in sorted(folder.glob("*.json")):
            links[(lesson, path.stem)] = path.relative_to(root).as_posix()
    return links


def scorecard_rows(rows):
    """The scorecard as flat rows for a CSV file."""
    return [
        {
            "lesson": r["lesson"], "task": r["task"], "model": r["model"], "runs": r["runs"], "answered": r["answered"],
            "right": r["right"], "rate": r["rate"], "wilson95_low": r["low"], "wilson95_high": r["high"],
            "conclusive": r["conclusive"], "supported": r["supported"], "right_unsupported": r["right_unsupported"],
            "supported_wrong": r["supported_wrong"],
            "mean_calls": r["mean_calls"], "mean_calls_that_ran": r["mean_budget_used"],
            "mean_input_tokens": "" if r["mean_input_tokens"] is None else r["mean_input_tokens"],
            "mean_output_tokens": "" if r["mean_output_tokens"] is None else r["mean_output_tokens"],
            "mean_cost_usd": "" if r["mean_cost_usd"] is None else r["mean_cost_usd"],
            "mistakes": "; ".join(f"{m['what']} ({m['runs']})" for m in r["mistakes"]),
        }
        for r in rows
    ]


def write(settings, lessons, tables, transcripts, folder):
    """The comparison of a campaign into `folder`: index.md (and index.html), scorecard.csv,
    scorecard.json and figures/comparison.png. Returns the seconds the HTML took."""
    folder = Path(folder)
    models = list(settings["models"])
    runs = runs_of(lessons, tables, settings.get("prices", {}))
    rows, pairs = compare(runs, models)
    totals = overall(runs, models)
    pipeline.write_json(folder / "scorecard.json", {"campaign": settings["name"], "settings": settings,
                                                    "scorecard": rows, "comparisons": pairs, "overall": totals})
    pipeline.recording_io.write_atomic(folder / "scorecard.csv", pipeline.csv_text(scorecard_rows(rows)))
    render.save_figure(figure(rows, models), folder / "figures" / "comparison.png")
    links = transcript_links(lessons, transcripts, folder)
    return render.write_markdown_and_html(folder / "index.md", page(settings, lessons, runs, rows, pairs, totals, links))
