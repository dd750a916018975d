"""`replaylab generate`: N scripted runs of a lesson, varied by seed (for tests and benchmarks)."""

from pathlib import Path

from replaylab import selection
from replaylab.cli.common import OK, add_verb, count, print_json
from replaylab.lessons import registry


def add_parser(subparsers):
    sub = add_verb(subparsers, "generate", cmd_generate, "write N scripted runs of a lesson, varied by seed (for tests and benchmarks)")
    sub.add_argument("lesson", metavar="LESSON")
    sub.add_argument("--count", type=count, required=True, help="how many runs (or groups of runs, one per variant, for a lesson judged per group), at most 1000000")
    sub.add_argument("--out", required=True, help="folder: the runs go to OUT/LESSON/<run>.json")
    sub.add_argument("--first-seed", type=int, default=0)
    sub.add_argument("--instances", type=selection.option, default="seeds", metavar="SELECTION",
                     help="the instances the runs take in turn: seeds (the seeds' own questions, the default), all, or "
                     "a number drawn by seed 0")


def cmd_generate(args):
    from replaylab.generate import generate

    chosen = None if args.instances == selection.SEEDS else selection.select(registry.lesson(args.lesson), args.instances, "--instances")
    written = generate(args.lesson, args.count, args.out, args.first_seed, chosen)
    if args.json:
        print_json({"written": [str(p) for p in written]})
    else:
        print(f"wrote {len(written)} scripted runs of {args.lesson} into {Path(args.out) / args.lesson}")
    return OK
