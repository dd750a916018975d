"""`replaylab call`: one tool call through a fresh allowlist with all of a lesson's tools."""

from replaylab.agents import recording as recording_io
from replaylab.agents.messages import ToolCall
from replaylab.cli.common import OK, REFUSED, add_verb, print_json
from replaylab.lessons import registry


def add_parser(subparsers):
    sub = add_verb(subparsers, "call", cmd_call, "run one tool call through a fresh allowlist with all of a lesson's tools")
    sub.add_argument("lesson", metavar="LESSON")
    sub.add_argument("tool", metavar="TOOL")
    sub.add_argument("arguments", metavar="JSON-ARGUMENTS")


def cmd_call(args):
    # read as strictly as a recording: no key twice, no NaN, bounded nesting and integers
    arguments = recording_io.parse_json(args.arguments, "the arguments")
    result = registry.lesson(args.lesson).all_tools().dispatch(ToolCall("1", args.tool, arguments))
    print_json({"ok": result.ok, "content": result.content})
    return OK if result.ok else REFUSED
