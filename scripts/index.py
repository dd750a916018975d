"""Rule `index`: results/index.md, the summary of every lesson, from their results.json files."""

from replaylab import pipeline


def main(results, out):
    pipeline.write_index(results, out)
