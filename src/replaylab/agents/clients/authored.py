"""Messages and tool calls written by a person, run through the real loop.

The results in the new recording are computed by the current code, never typed by the author.
"""

from replaylab.agents.clients.recorded import RecordedMessagesClient

MODEL = "written by a person (no language model)"
HOW = (
    "Authored example: a person wrote the messages and tool calls, and replaylab's authored client "
    "ran them through the allowlist and the simulation, which computed every result."
)


def make_client(messages, model=MODEL):
    return RecordedMessagesClient(messages, model)
