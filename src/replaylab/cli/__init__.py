"""The `replaylab` command. Exit codes: 0 ok, 1 unexpected error, 2 invalid input, 3 refused or
mismatched, 130 interrupted (Ctrl-C)."""

# This module keeps `main` (the console script's and `python -m replaylab`'s), the parser's
# assembly and the handling of errors; each verb is a module of this package (its add_parser and
# its handler), and common.py holds what they share. None of them imports this module.

import argparse
import functools
import json
import os
import signal
import sys

from replaylab import __version__
from replaylab.agents import recording as recording_io
from replaylab.cli import (
    build,
    call,
    campaign,
    doctor,
    generate,
    import_inspect,
    mcp,
    promote,
    record,
    replay,
    session,
    tasks,
    tools,
    verify,
)
from replaylab.cli.common import INVALID, OK, UNEXPECTED
from replaylab.errors import InvalidInput, ReplaylabError
from replaylab.lessons import registry

# the verbs, in the order `replaylab --help` lists them
VERBS = (tasks, tools, call, replay, session, mcp, record, generate, import_inspect, promote, doctor, verify, campaign, build)


class Parser(argparse.ArgumentParser):
    """argparse, with a wrong option or value said on one line (exit code 2), without the usage."""

    def error(self, message):
        print(f"{self.prog}: {recording_io.printable(message)} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(INVALID)


@functools.cache
def parser():
    """Built once per process: argparse's building costs about 10 ms (gettext looks each help text
    up), which a process that calls `main` many times (the fuzz test, a campaign's fork server)
    would pay every time; parsing leaves the parser as it was."""
    main = Parser(prog="replaylab", description=__doc__)
    main.add_argument("--version", action="version", version=f"replaylab {__version__}")
    verbs = main.add_subparsers(dest="verb", required=True, metavar="VERB")
    for verb in VERBS:
        verb.add_parser(verbs)
    return main


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        if hasattr(args, "lesson") and not (args.verb == "tasks" and args.lesson is None):  # tasks: every lesson
            registry.lesson(args.lesson)
        return args.function(args)
    except ReplaylabError as error:  # replaylab's own: one line, and its exit code (2 for input the user can fix)
        print(f"replaylab: {recording_io.printable(str(error))}", file=sys.stderr)
        if isinstance(error, InvalidInput) and args.verb == "session" and args.json:  # its stdout is the agent's
            print(json.dumps({"error": str(error)}, ensure_ascii=True), flush=True)
        return error.exit_code
    except BrokenPipeError:  # the reader (e.g. `head`) went away: not an error of ours
        sys.stderr.close()
        return OK
    except KeyboardInterrupt:
        print("replaylab: interrupted (SIGINT); nothing half-written was kept", file=sys.stderr)
        return 128 + signal.SIGINT
    except Exception as error:  # a bug: one line that says so, and the traceback only on request
        print(f"replaylab: unexpected error, a bug of replaylab (please report it, with the command; REPLAYLAB_DEBUG=1 "
              f"shows the traceback): {type(error).__name__}: {recording_io.printable(str(error))}", file=sys.stderr)
        if "REPLAYLAB_DEBUG" in os.environ:
            raise
        return UNEXPECTED
