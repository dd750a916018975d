"""The solver of every replaylab task: replaylab's agent loop, with Inspect making the model calls.

Each model message's calls go through `replaylab.agents.loop.dispatch_message` (the allowlist,
the budget, at most four calls a message, the calls after an accepted answer refused). The run
ends on an accepted `answer` or on a message with no calls (finished), or after the variant's
`max_steps` messages (not finished), as replaylab's own loop ends it. Neither Inspect's tool
execution nor `react()` is used: they would check our bounds in their own words first, and add
messages that no replay reproduces.
"""

from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.util import LimitExceededError

from replaylab.agents.loop import dispatch_message
from replaylab.inspect_tasks.convert import FINISHED, LIMIT, call_of
from replaylab.inspect_tasks.tools import tool_defs, tool_message
from replaylab.lessons import registry


@solver
def allowlist_loop():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        variant = registry.lesson(state.metadata["lesson"]).variant(state.metadata["variant"], state.metadata.get("instance"))
        allowlist = variant.allowlist()  # a fresh budget for each sample
        state.tools = tool_defs(allowlist)
        finished = False
        try:
            for _ in range(variant.max_steps):
                state = await generate(state, tool_calls="none")  # one model message, appended, no tool run
                calls = [call_of(c) for c in (state.output.message.tool_calls or ())]
                # no await from here to the next message: an Inspect limit never cuts a step in half
                results, answered = dispatch_message(allowlist, calls)
                state.messages.extend(tool_message(r) for r in results)
                if answered or not calls:
                    finished = True
                    break
        except LimitExceededError as limit:  # Inspect records it as the sample's limit too
            state.store.set(LIMIT, {"type": limit.type, "limit": limit.limit, "value": limit.value})
            raise
        state.store.set(FINISHED, finished)
        return state

    return solve
