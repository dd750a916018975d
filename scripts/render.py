"""Rule `render`: everything a lesson shows, from its batches' verdicts, scans and the transcripts
of the runs it shows: the per-run table, the scorecard, results.json, the CSV tables, the figures
and the page (Markdown and HTML). One job, because each of these is too small to be worth a job of
its own."""

from replaylab.render import Render, render_lesson


def main(wildcards, input, output, params):
    seconds = render_lesson(
        Render(
            lesson=wildcards.lesson,
            transcripts=list(input.transcripts),
            judged=list(input.judged),
            scans=input.scans,
            exercises=input.exercises,
            tolerance=params.tolerance,
            results=output.results,
            scorecard_csv=output.scorecard_csv,
            scorecard_json=output.scorecard_json,
            runs_table=output.runs_table,
            tables=output.tables,
            figures=output.figures,
            page=output.page,
            runs=list(params.runs),
        )
    )
    return f"HTML page: {seconds:.3f} s"
