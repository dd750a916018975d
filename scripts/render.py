"""Rule `render`: everything a lesson shows, from its batches' verdicts, scans and the transcripts
of the runs it shows: the per-run table, the scorecard, results.json, the CSV tables, the figures
and the page (Markdown and HTML). One job, because each of these is too small to be worth a job of
its own."""

from replaylab.jobs import run, settings
from replaylab.render import Render, render_lesson


def back_to_campaign(wildcards):
    """A campaign's lesson page links back to its campaign's page, which the campaign target always
    makes with it; a plain lesson's page links nowhere up (`snakemake LESSON` makes no summary)."""
    if "campaign" not in wildcards.keys():
        return {}
    return {"index": "../index.md", "index_label": f"Campaign {wildcards.campaign}"}


def main(job, log):
    seconds = render_lesson(
        Render(
            lesson=job.wildcards.lesson,
            transcripts=list(job.input.transcripts),
            judged=list(job.input.judged),
            answers=job.input.answers,
            baselines=job.input.baselines,
            scans=job.input.scans,
            exercises=job.input.exercises,
            tolerance=settings(job)["tolerance"],
            results=job.output.results,
            scorecard_csv=job.output.scorecard_csv,
            scorecard_json=job.output.scorecard_json,
            runs_table=job.output.runs_table,
            tables=job.output.tables,
            figures=job.output.figures,
            page=job.output.page,
            **back_to_campaign(job.wildcards),
        )
    )
    return f"HTML page: {seconds:.3f} s"


run(snakemake, main)  # noqa: F821 (Snakemake defines `snakemake` before this script runs)
