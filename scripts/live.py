"""Rule `live_page`: a new run's page (results/live/<lesson>/<run>/), replayed, judged and drawn
like the reference runs, with the lesson's scans and exercises from the main build."""

from replaylab import pipeline


def main(lesson, recordings, out, tolerance, scans, exercises):
    pipeline.build_lesson(lesson, recordings, out, tolerance, scans, exercises, progress=lambda text: None, index=None)
