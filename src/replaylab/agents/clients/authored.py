"""The `authored` provider: messages and tool calls written by a person (--from FILE), run
through the real loop.

The results in the new recording are computed by the current code, never typed by the author.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from replaylab.agents.clients import Options, Provider, command, register
from replaylab.agents.clients.recorded import RecordedMessagesClient

if TYPE_CHECKING:
    from replaylab.agents.messages import ModelMessage
    from replaylab.agents.recording import Recording

MODEL = "written by a person (no language model)"
HOW = (
    "Authored example: a person wrote the messages and tool calls, and replaylab's authored client "
    "ran them through the allowlist and the simulation, which computed every result."
)


def client(messages: Iterable[ModelMessage]) -> RecordedMessagesClient:
    """A client that plays these messages, in order."""
    return RecordedMessagesClient(messages, MODEL)


def make_client(options: Options) -> RecordedMessagesClient:
    return client(options.messages)


def rerecord(recording: Recording) -> str:
    """Record it again from its own messages into results/live/; for a file of a folder of runs
    (<folder>/<lesson>/<run>.json), promote it back there, which shows what changed before it
    replaces the recording."""
    lesson, run = recording.lesson, recording.run
    source = recording.source or f"recordings/{lesson}/{run}.json"
    again = command("replaylab", "record", lesson, "--provider", "authored", "--from", source, "--run", run)
    parts = source.replace("\\", "/").rsplit("/", 2)
    if len(parts) != 3 or parts[1:] != [lesson, f"{run}.json"]:
        return again
    into = [] if parts[0] == "recordings" else ["--recordings", parts[0]]
    return again + " && " + command("replaylab", "promote", f"results/live/{lesson}/{run}.json", *into)


register(Provider("authored", "authored", make_client, lambda options: HOW, rerecord, group="reference", takes_file=True))
