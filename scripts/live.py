"""Rule `live_page`: a new run's page (results/live/<lesson>/<run>/), replayed, judged and drawn
like the reference runs, with the lesson's scans and exercises from the main build."""

from replaylab.build import build_lesson


def main(wildcards, input, output, params):
    build_lesson(
        wildcards.lesson,
        recordings=list(input.recordings),
        folder=output.page,
        tolerance=params.tolerance,
        scans=input.scans,
        exercises=input.exercises,
        progress=lambda text: None,
        index=None,  # no summary lists a new run's page
    )
