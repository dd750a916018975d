"""The `inspect_ai` entry point (pyproject.toml): Inspect imports this module to find the tasks
`replaylab/<lesson>`."""

from replaylab.inspect_tasks import tasks  # noqa: F401  (registers the tasks)
