"""`replaylab mcp`: one lesson's variant as an MCP server over stdio, any MCP client its agent.

A low-level server (`mcp.server.Server`) publishes the allowlist's own schemas (`Tool.spec()`:
types, minimum/maximum, enums, required, no extra properties) and routes every call through
`Allowlist.dispatch`: the SDK's own argument parsing (pydantic, lax) would turn "25" into 25 and
drop unknown arguments, which the allowlist refuses. Nothing else is exposed: no resources, no
other tool. The lesson's `answer` tool, in the allowlist like every tool, ends the run once it is
accepted. The run is a recording, written after every call (agents/live.py): calls in arrival
order, up to 4 to a step.
"""

import datetime
import json
import os

import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

from replaylab import __version__
from replaylab.agents.clients.interactive import data_problem
from replaylab.agents.live import CLIENT_CLOSED, LiveRun
from replaylab.agents.messages import ToolCall, stored
from replaylab.agents.tools import ANSWER

UNDECLARED = "unknown (not declared)"
HOW = (
    "Recorded through MCP: an MCP client called the lesson's tools through `replaylab mcp`; every call went "
    "through the allowlist and its budget, and the harness computed every result. The calls are recorded in "
    f"the order they came, up to 4 to a message, and the run ends with the accepted call of {ANSWER}. The "
    "server sees no text of the model but the answer's explanation."
)
CLIENT_TEXT_MAX = 200


def instructions(live):
    v, limits = live.variant, live.limits()
    calls = v.max_steps * limits["calls_per_message"]
    return (
        f"{v.system}\n\nThe task: {v.task}\n\n"
        f"How this session maps onto that: each tool call you make is a call of the run; the calls are recorded "
        f"in the order they come, {limits['calls_per_message']} to a message, so the run holds at most {calls} "
        f"calls in all, the {ANSWER} call included, and every call counts, a refused one too. Every call is "
        "checked against the bounds in its schema before it runs; a call that fails is refused with the reason. "
        f"Each result says what is left. The run ends when {ANSWER} is accepted; closing the session before "
        "that records the run as not finished, with no answer."
    )


def default_run_name(folder):
    """A new run name for each server start: mcp-YYYYMMDD-HHMMSS, with a counter when taken."""
    base = "mcp-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    name, n = base, 1
    while os.path.lexists(folder / f"{name}.json"):
        n += 1
        name = f"{base}-{n}"
    return name


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


class LessonServer:
    """The handlers of one MCP session: every call goes to the live run."""

    def __init__(self, live):
        self.live = live
        self.calls = 0
        specs = live.allowlist.specs()
        self.tools = [
            types.Tool(
                name=spec["name"],
                description=spec["description"],
                input_schema=spec["parameters"],
                annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
            )
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
        prompt = types.Prompt(name=self.prompt_name(), description=f"The system text and the task of {self.live.lesson} / {v.name}")
        return types.ListPromptsResult(prompts=[prompt])

    async def get_prompt(self, ctx, params):
        if params.name != self.prompt_name():
            raise ValueError(f"no prompt named {params.name!r}; the prompt is {self.prompt_name()}")
        text = instructions(self.live)
        return types.GetPromptResult(
            description=f"The system text and the task of {self.live.lesson} / {self.live.variant.name}",
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
        if problem:  # not a call the recording could hold: refused, not recorded, costs nothing
            return _answer(live, error=f"the call cannot be recorded: {problem}")
        self.calls += 1
        result = live.call(ToolCall(str(self.calls), params.name, arguments))
        if not result.ok:
            return _answer(live, error=result.content["error"])
        if live.finished:  # the answer was accepted
            return types.CallToolResult(
                content=[types.TextContent(text=f"The run has ended: {live.ended}. Recorded as {live.path}.")],
                structured_content={"ended": live.ended, "finished": live.finished, "recording": str(live.path)},
            )
        return _answer(live, result=result.content)


async def serve(live):
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
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        if live.steps or live.written:
            live.input_ended(CLIENT_CLOSED)


def run(live):
    import anyio

    anyio.run(serve, live)


def start(lesson, name, v, group, provenance, path):
    """The live run of an MCP session: the file appears with the first call."""
    return LiveRun(lesson, name, v, group, provenance, path, write_now=False)
