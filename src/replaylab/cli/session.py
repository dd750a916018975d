"""`replaylab session`: a run typed as JSON lines on stdin, recorded as it happens."""

import argparse
import signal
import sys

from replaylab.cli.common import OK, add_verb, live_provenance, live_target, start_live_run


class SessionHelp(argparse.Action):
    """`session --help`: the help with its worked example, made (from the registry's first lesson)
    only when it is asked for, not at every start of the command."""

    def __init__(self, option_strings, dest, **options):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="show this help message and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from replaylab.session import help_text

        parser.epilog = help_text()
        parser.print_help()
        parser.exit()


def add_parser(subparsers):
    sub = add_verb(subparsers, "session", cmd_session, "record a run typed as JSON lines on stdin (results/live/LESSON/RUN.json); "
                   "exit code 130 after Ctrl-C, 143 after SIGTERM, the run recorded as not finished", add_help=False)
    sub.formatter_class = argparse.RawDescriptionHelpFormatter
    sub.add_argument("-h", "--help", action=SessionHelp)
    sub.add_argument("lesson", metavar="LESSON")
    sub.add_argument("--instance", metavar="ID", help="the instance of the lesson's family (default: the seeds' own "
                     "question); `replaylab tasks LESSON` lists them")
    sub.add_argument("--variant", help="the instance's variant (default: its first); see `replaylab tools LESSON`")
    sub.add_argument("--run", help="the run's name (default: session)")
    sub.add_argument("--group", default="live")
    sub.add_argument("--model", help="the model that types the messages, as you declare it (recorded as declared, not verified)")
    sub.add_argument("--out", metavar="PATH/RUN.json",
                     help="the file to write, named after the run: it must end in RUN.json (RUN: --run, else this "
                     "name) and may not exist (default results/live/LESSON/RUN.json)")


def cmd_session(args):
    from replaylab.agents.clients.interactive import HOW, MODEL
    from replaylab.session import run_session, start

    v, name, path, instance = live_target(args, "session")
    provenance = live_provenance(args, "interactive", MODEL, HOW)
    live = start_live_run(path, lambda: start(args.lesson, name, v, args.group, provenance, path, instance))
    signum = run_session(live)
    if signum is not None:
        print(f"replaylab: stopped by {signal.Signals(signum).name}; wrote {path} ({len(live.steps)} message(s); "
              f"{live.ended})", file=sys.stderr)
        return 128 + signum
    print(f"wrote {path} ({len(live.steps)} message(s); {live.ended})", file=sys.stderr)
    return OK
