"""Rule `record_run`: one variant of a new run, recorded through replaylab's recorder (it may read a
key, and the provider's SDK is imported in this job only). The configuration's values are checked by
the recorder as the command line's are, and are never part of a command line. Each message goes to
the log as it happens; a value the recorder refuses, or a provider's failure, is the job's one line."""

from replaylab.display import print_step
from replaylab.jobs import run
from replaylab.recorder import prepare, record_new


def main(job, log):
    p = job.params
    request, path = prepare(p.lesson, p.provider, model=p.model, seed=p.seed, variant=p.variant, group=p.group,
                            out=job.output.recording)
    steps = []

    def on_step(step):
        steps.append(step)
        print_step(len(steps), step, log)

    transcript = record_new(request, path, on_step=on_step)
    print(f"wrote {path} ({len(transcript.steps)} messages, {'finished' if transcript.finished else 'not finished'})", file=log)


run(snakemake, main)  # noqa: F821 (Snakemake defines `snakemake` before this script runs)
