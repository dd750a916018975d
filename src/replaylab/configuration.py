"""The workflow's configuration, checked when the workflow starts (a dry run too): its schema
(workflow/schemas/config.schema.yaml), with Snakemake's `validate`, then what a schema cannot say.
The first problem is one `InputError` line naming the configuration's files and the field."""

import math

import jsonschema

from replaylab import campaign
from replaylab.agents.recording import RUN_NAME_MAX, describe, json_path
from replaylab.lessons import registry


class InputError(ValueError):
    """A configuration value that the workflow cannot use: one line, no traceback."""


def _as_written(config, path):
    """The path of a field as the configuration wrote it: a model of the short form (a name alone,
    checked as the entry `{name: NAME}`) is the name itself."""
    if path[:2] == ["campaign", "models"] and path[3:] == ["name"] and isinstance(config["campaign"]["models"][path[2]], str):
        return path[:3]
    return path


def check(config, source, schema):
    """The workflow's configuration, checked against its schema (`schema`, the path of
    workflow/schemas/config.schema.yaml) with Snakemake's `validate`, then for what a schema cannot
    say: lessons replaylab has, a tolerance that is a number (NaN passes every bound), the names a
    `record` run would be saved under, and the campaign section (`campaign.check`). `source`
    names where the configuration came from (files, --config). The first problem is one
    `InputError` line naming `source` and the field."""
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    checked = {**config, "campaign": campaign.normalized(config.get("campaign"))} if isinstance(config, dict) else config
    try:
        validate(checked, str(schema), set_default=False)
    except WorkflowError as error:  # raised while handling the schema's ValidationError
        found = error.__context__
        if not isinstance(found, jsonschema.ValidationError):
            raise
        raise InputError(f"{source}: {json_path(_as_written(config, list(found.absolute_path)))}: {describe(found)}") from None
    for index, lesson in enumerate(config["lessons"]):
        if lesson not in registry.names():
            raise InputError(
                f"{source}: $.lessons[{index}]: {lesson!r} is not a lesson of replaylab; "
                f"the lessons are: {', '.join(registry.names())}"
            )
    if config["record_lesson"] not in config["lessons"]:
        raise InputError(
            f"{source}: $.record_lesson: {config['record_lesson']!r} is not one of the configured lessons "
            f"({', '.join(config['lessons'])})"
        )
    if math.isnan(config["tolerance"]):
        raise InputError(f"{source}: $.tolerance: nan is not a finite number")
    record_run = config["record_run"]
    longest = max(len(f"{record_run}-{name}") for name in registry.lesson(config["record_lesson"]).variants)
    if longest > RUN_NAME_MAX:
        raise InputError(
            f"{source}: $.record_run: {len(record_run)} characters is too long: the files are named "
            f"<record_run>-<variant>.json, and a run name has at most {RUN_NAME_MAX} characters"
        )
    problem = campaign.check_provider(config["provider"], source)
    problem = problem or campaign.check(config["campaign"], config["lessons"], source)
    if problem:
        raise InputError(problem)
