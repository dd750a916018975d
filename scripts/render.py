"""Rule `render`: everything a lesson shows, from its verdicts, scans and transcripts: results.json
(every number), the scorecard, the CSV tables, the figures and the page (Markdown and HTML). One job, because each of
these is too small to be worth a job of its own."""

from replaylab import pipeline


def main(lesson, transcripts, verdicts, scans, exercises, folder, tolerance):
    seconds = pipeline.render_lesson(lesson, transcripts, verdicts, scans, exercises, folder, tolerance)
    return f"HTML page: {seconds:.3f} s"
