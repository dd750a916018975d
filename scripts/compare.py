"""Rule `campaign_compare`: the comparison of a campaign's models (results/campaigns/<name>/),
a group-by of the per-run tables of its lessons."""

import os

from replaylab import comparison


def main(wildcards, input, output, params):
    comparison.write(params.settings, params.lessons, list(input.tables), list(input.transcripts), os.path.dirname(output.page))
