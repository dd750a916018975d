"""`replaylab verify`: every result built again in a temporary folder, and each file that differs listed."""

import sys
from pathlib import Path

from replaylab.agents import recording as recording_io
from replaylab.cli.common import OK, UNEXPECTED, add_verb, in_project, print_json


def add_parser(subparsers):
    sub = add_verb(subparsers, "verify", cmd_verify, "build every result again in a temporary folder, with the settings it was built with, "
                   "and list each file of RESULTS that differs")
    sub.add_argument("campaigns", nargs="*", metavar="CAMPAIGN",
                     help="the campaigns of RESULTS/campaigns/ to rebuild too (default: every one found)")
    sub.add_argument("--results", metavar="RESULTS", help="the folder of results (default: the project's results/)")
    sub.add_argument("--cores", default="all", help="for Snakemake's rebuild (default all)")
    sub.add_argument("--keep", action="store_true", help="keep the rebuild's folder, and say where")


def cmd_verify(args):
    from replaylab.verify import verify

    root = in_project(args, chdir=False)
    names = args.campaigns
    if len(names) == 1 and not args.results and ("/" in names[0] or names[0] in (".", "..") or (
            Path(names[0]).is_dir() and not (root / "results" / "campaigns" / names[0]).is_dir())):
        args.results, names = names[0], []  # the earlier form, `verify RESULTS`
    differences, compared = verify(root, args.results, names, args.cores, args.keep,
                                   note=lambda text: print(recording_io.printable(text), file=sys.stderr))
    args.results = args.results or "results"  # the project's, as its lines name it
    if args.json:
        print_json({"results": args.results, "compared": compared, "differences": differences})
    else:
        for line in differences:
            print(recording_io.printable(line))
        same = "every file is the same" if not differences else f"{len(differences)} differ"
        print(f"replaylab verify: {compared} files of {args.results} rebuilt and compared: {same}", file=sys.stderr)
    return OK if not differences else UNEXPECTED
