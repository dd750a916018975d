"""`replaylab mcp`: one lesson's variant as an MCP server over stdio, any MCP client its agent.

A low-level server (`mcp.server.Server`) publishes the allowlist's own schemas (`Tool.spec()`:
types, minimum/maximum, enums, required, no extra properties) and routes every call through
`Allowlist.dispatch`: the SDK's own argument parsing (pydantic, lax) would turn "25" into 25 and
drop unknown arguments, which the allowlist refuses. Nothing else is exposed: no resources, no
other tool. The lesson's `answer` tool, in the allowlist like every tool, ends the run once it is
accepted. The run is a recording, claimed when the server starts and written after every call
(agents/live.py): calls in arrival order, up to 4 to a step; a server that ends with no call
removes the empty recording it claimed. Its stdio transport is mcp_stdio.py: every request gets
an answer. SIGINT and SIGTERM end it at once, the recording saying so.
"""

import datetime
import json
import os
import select
import signal
import time

import anyio
import mcp_types as types
from mcp import MCPError
from mcp.server import Server

from replaylab import __version__, ownership, session
from replaylab.agents.clients.interactive import data_problem
from replaylab.agents.live import CLIENT_CLOSED, Unrecordable, client_instructions, stopped
from replaylab.agents.messages import ToolCall, stored
from replaylab.agents.tools import ACCEPTED_KEY, ANSWER
from replaylab.agents.recording import short
from replaylab.mcp_stdio import LineSplitter, error_line, read_message, stdio_lines, write_until

UNDECLARED = "unknown (not declared)"
HOW = (
    "Recorded through MCP: an MCP client called the lesson's tools through `replaylab mcp`; every call went "
    "through the allowlist and its budget, and the harness computed every result. The calls are recorded in "
    f"the order they came, up to 4 to a message, and the run ends with the accepted call of {ANSWER}. The "
    "server sees no text of the model but the answer's explanation."
)
CLIENT_TEXT_MAX = 200


def instructions(live):
    """What the client is given before its first call (agents/live.py says it in the same words for the pages)."""
    return client_instructions(live.system, live.variant.task)


MAX_NAME_TRIES = 1000


def default_run_names():
    """The names a server tries, in turn, until it claims one: mcp-YYYYMMDD-HHMMSS, then -2, -3..."""
    base = "mcp-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    yield base
    for n in range(2, MAX_NAME_TRIES + 1):
        yield f"{base}-{n}"


def _client_text(value):
    text = "".join(c if c.isprintable() else "?" for c in str(value or ""))
    return text[:CLIENT_TEXT_MAX] or "not reported"


def _status(live):
    """What is left, as the agent reads it after each call."""
    budget = live.budget_left()
    left = {"budget_left": budget, "calls_left": live.calls_left()}
    if live.ended:
        return left, f"The run has ended: {live.ended}. Nothing more is recorded."
    budget_text = f"Budget left: {budget} of {live.variant.budget} experiments." if budget is not None else "No budget of experiments."
    if left["calls_left"] == 1:
        return left, f"{budget_text} One call is left: call {ANSWER} now, or the run ends with no answer."
    return left, f"{budget_text} Calls left, the {ANSWER} included: {left['calls_left']}."


def _answer(live, result=None, error=None):
    left, sentence = _status(live)
    if error is not None:
        return types.CallToolResult(
            content=[types.TextContent(text=error), types.TextContent(text=sentence)],
            structured_content={"error": error, **left},
            is_error=True,
        )
    content = {k: stored(v) for k, v in result.items()}
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(content, allow_nan=False)), types.TextContent(text=sentence)],
        structured_content={"result": content, **left},
    )


def annotations(ends_run):
    """What a client may assume of a tool: none changes anything outside the run, but every call
    changes the run (an experiment uses its budget and calls; the answer ends it, and a second call
    is an error), so none is read-only or idempotent."""
    return types.ToolAnnotations(read_only_hint=False, destructive_hint=ends_run, idempotent_hint=False,
                                 open_world_hint=False)


class LessonServer:
    """The handlers of one MCP session: every call goes to the live run."""

    def __init__(self, live):
        self.live = live
        self.calls = 0
        specs = live.allowlist.specs()
        self.tools = [
            types.Tool(name=spec["name"], description=spec["description"], input_schema=spec["parameters"],
                       annotations=annotations(live.allowlist.ends_run(spec["name"])))
            for spec in specs
        ]

    def _note_client(self, ctx):
        params = getattr(ctx.session, "client_params", None)
        info = getattr(params, "client_info", None)
        if info is not None and "client" not in self.live.provenance:
            self.live.provenance["client"] = {"name": _client_text(info.name), "version": _client_text(info.version)}

    async def list_tools(self, ctx, params):
        self._note_client(ctx)
        return types.ListToolsResult(tools=self.tools)

    async def list_prompts(self, ctx, params):
        v = self.live.variant
        prompt = types.Prompt(name=self.prompt_name(), description=f"The system text and the task of {self.live.lesson} / {self.live.instance} / {v.name}")
        return types.ListPromptsResult(prompts=[prompt])

    async def get_prompt(self, ctx, params):
        if params.name != self.prompt_name():  # the client's mistake: Invalid params, not a server error with a traceback
            raise MCPError(types.INVALID_PARAMS, f"no prompt named {short(params.name)}; the prompt is {self.prompt_name()}")
        text = instructions(self.live)
        return types.GetPromptResult(
            description=f"The system text and the task of {self.live.lesson} / {self.live.instance} / {self.live.variant.name}",
            messages=[types.PromptMessage(role="user", content=types.TextContent(text=text))],
        )

    def prompt_name(self):
        return f"{self.live.lesson}-{self.live.variant.name}"

    async def call_tool(self, ctx, params):
        self._note_client(ctx)
        live = self.live
        if live.ended:
            return _answer(live, error=f"the run has ended ({live.ended}); nothing more is recorded")
        arguments = {} if params.arguments is None else params.arguments
        problem = data_problem({"name": params.name, "arguments": arguments})
        try:
            if problem:
                raise Unrecordable(problem)
            result = live.call(ToolCall(str(self.calls + 1), params.name, arguments))
        except Unrecordable as why:  # not a call the recording could hold: refused, not recorded, costs nothing
            return _answer(live, error=f"the call cannot be recorded, so it did not run and costs nothing: {why}")
        self.calls += 1
        if not result.ok:
            return _answer(live, error=result.content["error"])
        if live.finished:  # the answer was accepted: echoed in its own words
            accepted = result.content[ACCEPTED_KEY]
            return types.CallToolResult(
                content=[types.TextContent(text=f"Accepted: {accepted}. Recorded as {live.path}.")],
                structured_content={ACCEPTED_KEY: accepted, "ended": live.ended, "finished": live.finished,
                                    "recording": str(live.path)},
            )
        return _answer(live, result=result.content)


async def serve(live):
    """Serve until the client closes stdin, or SIGINT or SIGTERM: the signal, or None."""
    handlers = LessonServer(live)
    server = Server(
        f"replaylab-{live.lesson}",
        version=__version__,
        instructions=instructions(live),
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        on_list_prompts=handlers.list_prompts,
        on_get_prompt=handlers.get_prompt,
    )
    got = []
    async with anyio.create_task_group() as tasks:

        async def on_signal():
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for signum in signals:
                    got.append(signum)
                    tasks.cancel_scope.cancel()
                    return

        tasks.start_soon(on_signal)
        async with stdio_lines() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        tasks.cancel_scope.cancel()
    return got[0] if got else None


def run(live):
    """Serve the run, then end it: (exit code, the line that says what became of the recording).
    Its name is free for another writer (or `promote`) once it returns."""
    try:
        return _serve_and_end(live)
    finally:
        live.release()


def _serve_and_end(live):
    signum = anyio.run(serve, live)
    for number in (signal.SIGINT, signal.SIGTERM):  # the end is written whatever comes now
        signal.signal(number, signal.SIG_IGN)
    how = "" if signum is None else f"stopped by {signal.Signals(signum).name}; "
    code = 0 if signum is None else 128 + signum
    if not live.steps:  # its own file, claimed at the start, where nothing was recorded
        try:
            os.unlink(live.path)
        except FileNotFoundError:
            return code, f"{how}no call was made, and the empty recording it had claimed, {live.path}, is gone"
        return code, f"{how}no call was made: the empty recording it had claimed, {live.path}, was removed"
    live.input_ended(CLIENT_CLOSED if signum is None else stopped("server", signum))
    calls = sum(len(step.results) for step in live.steps)
    return code, f"{how}wrote {live.path} ({calls} call{'' if calls == 1 else 's'}; {live.ended})"


def start(lesson, v, group, provenance, path=None, folder=None, instance=None):
    """The live run of an MCP session (of `instance`, an id of the lesson's family), its recording
    claimed now: at `path`, or under the first default name free in `folder` (two servers started in
    the same second claim two names); its name owned until `live.release()` (session.start).
    FileExistsError when `path` is taken, `ownership.Busy` when another writer owns it."""
    if path is not None:
        return session.start(lesson, path.stem, v, group, provenance, path, instance)
    for name in default_run_names():
        try:
            return session.start(lesson, name, v, group, provenance, folder / f"{name}.json", instance)
        except (FileExistsError, ownership.Busy):
            continue
    raise FileExistsError(f"{folder}: {MAX_NAME_TRIES} runs were started this second; give --run")


def refuse(problem, wait=10.0, stdin_fd=0, stdout_fd=1):
    """A server that cannot serve (its recording is taken, its folder not writable) answers the
    client's first request with `problem` as its JSON-RPC error, so that the client shows why,
    instead of only "connection closed". Waits at most `wait` seconds, never for a terminal: the
    input is cut into lines as it comes (linear, each line bounded as when serving), and an answer
    the client does not read is given up at the deadline."""
    if os.isatty(stdin_fd):
        return
    deadline, splitter = time.monotonic() + wait, LineSplitter()
    while (left := deadline - time.monotonic()) > 0 and select.select([stdin_fd], [], [], left)[0]:
        try:
            chunk = os.read(stdin_fd, 1 << 16)
        except OSError:
            return
        for line in splitter.feed(chunk) if chunk else splitter.end():
            message, error = read_message(line)
            if isinstance(message, types.JSONRPCRequest):
                write_until(stdout_fd, error_line(message.id, SERVER_ERROR, problem), deadline)
                return
            if error is not None and not write_until(stdout_fd, error, deadline):
                return
        if not chunk:
            return


SERVER_ERROR = -32000
