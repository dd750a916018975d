"""Rule `campaign_compare`: the comparison of a campaign's models (results/campaigns/<name>/),
a group-by of the per-run tables of its lessons."""

from replaylab import comparison


def main(settings, lessons, tables, transcripts, folder):
    comparison.write(settings, lessons, tables, transcripts, folder)
