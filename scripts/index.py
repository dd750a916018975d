"""Rule `index`: results/index.md and index.html, the summary of every lesson, from their results.json files."""

from replaylab.index_page import Index, write_index


def main(wildcards, input, output, params):
    seconds = write_index(Index(results=list(input.results), index=output.index))
    return f"HTML page: {seconds:.3f} s"
