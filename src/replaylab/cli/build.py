"""`replaylab build`: every result of the lessons computed in one process, without Snakemake."""

from pathlib import Path

from replaylab.agents import recording as recording_io
from replaylab.agents.replay import DEFAULT_TOLERANCE
from replaylab.cli.common import OK, add_verb, print_json, tolerance
from replaylab.errors import InvalidInput
from replaylab.lessons import registry


def add_parser(subparsers):
    sub = add_verb(subparsers, "build", cmd_build, "compute every result of the lessons in one process, without Snakemake")
    sub.add_argument("lessons", nargs="*", metavar="LESSON")
    sub.add_argument("--recordings", default="recordings")
    sub.add_argument("--results", default="results")
    sub.add_argument("--tolerance", type=tolerance, default=DEFAULT_TOLERANCE)


def cmd_build(args):
    from replaylab.build import build

    lessons = args.lessons or list(registry.names())
    for lesson in lessons:
        registry.lesson(lesson)
    if not Path(args.recordings).is_dir():
        raise InvalidInput(f"--recordings {recording_io.printable(args.recordings)}: not a folder")
    build(lessons, args.recordings, args.results, args.tolerance, progress=(lambda text: None) if args.json else print)
    if args.json:
        print_json({"results": args.results, "lessons": lessons})
    return OK
