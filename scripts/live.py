"""Rule `live_page`: a new run's page (results/live/<lesson>/<run>/), replayed, judged and drawn
like the reference runs, with the lesson's scans and exercises from the main build."""

from _job import run
from replaylab import pipeline

run(
    snakemake,
    pipeline.build_lesson,
    snakemake.wildcards.lesson,
    list(snakemake.input.recordings),
    snakemake.output.page,
    snakemake.params.tolerance,
    snakemake.input.scans,
    snakemake.input.exercises,
    print,
)
