"""`replaylab promote`: what a new run changes, then the run moved into recordings/."""

from replaylab.agents.replay import DEFAULT_TOLERANCE
from replaylab.cli.common import OK, add_verb, print_json, tolerance


def add_parser(subparsers):
    sub = add_verb(subparsers, "promote", cmd_promote, "show what a new run changes, then move it into recordings/")
    sub.add_argument("run_file", metavar="RUN", help="a recording, e.g. results/live/LESSON/RUN.json")
    sub.add_argument("--recordings", default="recordings", help="the folder of committed recordings")
    sub.add_argument("--dry-run", action="store_true", help="only show what would change")
    sub.add_argument("--tolerance", type=tolerance, default=DEFAULT_TOLERANCE)


def cmd_promote(args):
    from replaylab.promote import promote

    lines = promote(args.run_file, args.recordings, args.dry_run, args.tolerance)
    if args.json:
        print_json({"changes": lines})
    else:
        print("\n".join(lines))
    return OK
