"""The workflow's configuration, checked when the workflow starts (a dry run too): its schema
(workflow/schemas/config.schema.yaml), with Snakemake's `validate`, then what a schema cannot say.
The first problem is one `InputError` line naming the configuration's files and the field.
`replaylab.settings` is how everything else reads and checks it: once, into one typed object."""

import math
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from replaylab import campaign_settings
from replaylab.agents.recording import RUN_NAME_MAX, describe, json_path
from replaylab.lessons import registry
from replaylab.errors import InvalidInput


class InputError(InvalidInput):
    """A configuration value that the workflow cannot use: one line, no traceback."""


MAX_VALUES = 100_000  # values of a configuration, each alias counted as often as it is used (a real one holds hundreds)


def check_size(config: Any, source: str) -> None:
    """Refuse a configuration of more than MAX_VALUES values, counted as a reader that expands
    YAML's aliases would (an alias used ten times counts ten times), before anything else looks at
    it: nine levels of ten aliases each are a billion values, which the schema's validator, and
    its message, would walk and print. Stops as soon as the count is passed."""
    todo: list[tuple[tuple[Any, ...], Any]]
    todo, count = [((), config)], 0
    while todo:
        path, value = todo.pop()
        count += 1
        if count > MAX_VALUES:
            raise InputError(
                f"{source}: {json_path(path[:2])}: the configuration holds more than {MAX_VALUES} values (YAML aliases "
                "counted each time they are used): a configuration holds a few hundred; write the values out"
            )
        if isinstance(value, dict):
            todo.extend((path + (str(key),), item) for key, item in value.items())
        elif isinstance(value, (list, tuple)):
            todo.extend((path + (index,), item) for index, item in enumerate(value))


_INTEGER = re.compile(r"[-+]?[0-9]{1,30}")
_NUMBER = re.compile(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?")
_WORDS = {"true": True, "false": False, "null": None, "~": None}


def _typed(value: Any, kinds: Sequence[str]) -> Any:
    """A text as the value of a schema's `kinds` it spells, or the text itself."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if "integer" in kinds and _INTEGER.fullmatch(text):
        return int(text)
    if "number" in kinds and len(text) <= 40 and _NUMBER.fullmatch(text):
        return float(text)
    word = _WORDS.get(text.lower(), value)
    if (word is None and "null" in kinds) or (isinstance(word, bool) and "boolean" in kinds):
        return word
    return value


def coerce(value: Any, schema: dict[str, Any]) -> Any:
    """The configuration with each text that spells a number, a boolean or null read as one
    where the schema wants one: Snakemake reads a nested --config value (`campaign={"runs": 12}`)
    as YAML's base loader does, every scalar a text. Everything else is left as it is, for the
    schema to judge."""
    kinds = schema.get("type", ())
    kinds = (kinds,) if isinstance(kinds, str) else tuple(kinds)
    for branch in schema.get("oneOf", ()):  # a value of one of several forms (campaign.instances: a name or a number)
        found = branch.get("type", ())
        kinds += (found,) if isinstance(found, str) else tuple(found)
    if isinstance(value, dict) and "object" in kinds:
        properties, extra = schema.get("properties", {}), schema.get("additionalProperties")
        return {key: coerce(item, properties.get(key, extra if isinstance(extra, dict) else {}))
                for key, item in value.items()}
    if isinstance(value, list) and "array" in kinds and isinstance(schema.get("items"), dict):
        return [coerce(item, schema["items"]) for item in value]
    return _typed(value, kinds)


def _as_written(config: dict[str, Any], path: list[Any]) -> list[Any]:
    """The path of a field as the configuration wrote it: a model of the short form (a name alone,
    checked as the entry `{name: NAME}`) is the name itself."""
    if path[:2] == ["campaign", "models"] and path[3:] == ["name"] and isinstance(config["campaign"]["models"][path[2]], str):
        return path[:3]
    return path


@cache
def _schema(path: str) -> Any:
    """The schema as data, read once per process (libyaml's parser where PyYAML has it)."""
    import yaml

    with open(path, encoding="utf-8") as stream:
        return yaml.load(stream, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def check(config: dict[str, Any], source: str, schema: str | Path) -> None:
    """The workflow's configuration, checked against its schema (`schema`, the path of
    workflow/schemas/config.schema.yaml) with Snakemake's `validate`, then for what a schema cannot
    say: lessons replaylab has, a tolerance that is a number (NaN passes every bound), the names a
    `record` run would be saved under, and the campaign section (`campaign_settings.check`). `source`
    names where the configuration came from (files, --config). The first problem is one
    `InputError` line naming `source` and the field."""
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    check_size(config, source)
    config.update(coerce(config, _schema(str(schema))))
    checked = {**config, "campaign": campaign_settings.normalized(config.get("campaign"))} if isinstance(config, dict) else config
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
    problem = campaign_settings.check_provider(config["provider"], source)
    problem = problem or campaign_settings.check(config["campaign"], config["lessons"], source)
    if problem:
        raise InputError(problem)
