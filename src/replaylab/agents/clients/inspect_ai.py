"""The `inspect_ai` provider: runs recorded by Inspect AI (`inspect eval replaylab/LESSON`, the
tasks of replaylab.inspect_tasks) and imported with `replaylab import-inspect`. No client of
replaylab makes these runs, and this module imports nothing of Inspect: it only tells the rest of
replaylab how they are labelled and recorded again. What Inspect knows of a run (its provider,
its model as given and as the provider reported it, the eval and the sample) is in the
recording's provenance under `inspect`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from replaylab.agents.clients import Provider, command, register

if TYPE_CHECKING:
    from replaylab.agents.recording import Recording

SCRIPTED = ("mockllm", "replaylab")  # Inspect's providers whose messages no language model wrote


def kind_of(model: str) -> str:
    """The provenance kind of a run of an Inspect model (`provider/model`): scripted for mockllm and
    replaylab's own programs, a provider's run for every other."""
    return "scripted" if model.partition("/")[0] in SCRIPTED else "provider-api"


def rerecord(recording: Recording) -> str:
    """`inspect eval` of the run's lesson and variant with the model Inspect was given."""
    inspect = recording.provenance.get("inspect", {})
    model = inspect.get("model") or recording.provenance["model"]
    return command("inspect", "eval", f"replaylab/{recording.lesson}", "-T", f"variant={recording.variant}", "--model", model)


register(Provider("inspect_ai", "provider-api", None, None, rerecord, group="inspect", imported=True, kind_of=kind_of))
