"""`replaylab mcp`: one lesson's variant served to an MCP client over stdio, recorded as a run."""

import sys
from pathlib import Path

from replaylab.agents import recording as recording_io
from replaylab.cli.common import add_verb, live_provenance, live_target, start_live_run
from replaylab.errors import InvalidInput, ReplaylabError


def add_parser(subparsers):
    sub = add_verb(subparsers, "mcp", cmd_mcp, "serve one lesson's variant to an MCP client over stdio, recorded as a run "
                   "(results/live/LESSON/RUN.json); exit code 130 after Ctrl-C, 143 after SIGTERM")
    sub.add_argument("lesson", metavar="LESSON")
    sub.add_argument("--instance", metavar="ID", help="the instance of the lesson's family (default: the seeds' own "
                     "question); `replaylab tasks LESSON` lists them")
    sub.add_argument("--variant", help="the instance's variant (default: its first); see `replaylab tools LESSON`")
    sub.add_argument("--run", help="the run's name (default: mcp-DATE-TIME, claimed at each start, -2, -3... when "
                     "taken); a server with no call removes its empty recording")
    sub.add_argument("--group", default="live")
    sub.add_argument("--model", help="the model behind the client, as you declare it (recorded as declared, not verified)")
    sub.add_argument("--runs", metavar="FOLDER",
                     help="the folder of new runs: the run is FOLDER/LESSON/RUN.json (default results/live, from the "
                     "folder the client starts the server in; give an absolute path in a client's configuration)")
    sub.add_argument("--out", metavar="PATH/RUN.json",
                     help="the file to write, named after the run: it must end in RUN.json (RUN: --run, else this "
                     "name) and may not exist (default FOLDER/LESSON/RUN.json)")


def cmd_mcp(args):
    from replaylab import mcp_server

    try:
        if args.runs and args.out:
            raise InvalidInput("--runs and --out: give one of them (--out names the file, --runs the folder of runs)")
        folder = Path(args.out).parent if args.out else Path(args.runs or "results/live") / args.lesson
        v, name, path, instance = live_target(args, None)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise InvalidInput(f"{path or folder}: cannot write the recording: {error.strerror or error}") from None
        provenance = live_provenance(args, "mcp", mcp_server.UNDECLARED, mcp_server.HOW)
        live = start_live_run(path or folder, lambda: mcp_server.start(args.lesson, v, args.group, provenance, path, folder,
                                                                      instance))
    except ReplaylabError as error:
        # one line for the person, and the client's first request answered with it (it shows why)
        line = recording_io.printable(str(error))
        print(f"replaylab: {line}", file=sys.stderr)
        sys.stderr.flush()
        mcp_server.refuse(line)
        return error.exit_code  # 2 for input to fix, 1 for a run name another writer still owns
    # stdout carries the protocol: everything for a person goes to stderr
    print(f"replaylab mcp: serving {args.lesson} / {instance} / {v.name} over stdio; the calls are recorded in {live.path}",
          file=sys.stderr)
    code, line = mcp_server.run(live)
    print(f"replaylab mcp: {line}", file=sys.stderr)
    return code
