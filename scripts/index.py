"""Rule `index`: results/index.md, the summary of every lesson, from their results.json files."""

from _job import arguments, run
from replaylab import pipeline

args = arguments(__doc__, (["--out"], {"required": True}), (["results"], {"nargs": "+"}))
run(args.log, pipeline.write_index, args.results, args.out)
