"""Rule `index`: results/index.md and index.html, the summary of every lesson, from their results.json files."""

from replaylab import pipeline


def main(results, out):
    seconds = pipeline.write_index(results, out)
    return f"HTML page: {seconds:.3f} s"
