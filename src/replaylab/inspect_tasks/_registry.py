"""The `inspect_ai` entry point (pyproject.toml): Inspect imports this module to find the tasks
`replaylab/<lesson>` and the model `replaylab/<program>` (the scripted baselines)."""

from replaylab.inspect_tasks import model, tasks  # noqa: F401  (importing them registers them)
