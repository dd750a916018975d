"""results.json: the contract between computing (judge, scans, exercises) and presenting (pages,
tables, figures), checked against its JSON Schema when it is written and when it is read.

The schema is schemas/results.schema.json (versioned by its `format`); the parts that differ per
lesson (a verdict, the scans, the exercises) are described by the lesson's own
results.schema.json, in its package. The writers get the data as `Strict` objects: asking for a
key that is not there is an error that names the file, the JSON path and the key, never an empty
table.
"""

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, NoReturn, cast

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from replaylab.agents.recording import json_path
from replaylab.lessons import registry
from replaylab.errors import InvalidInput

FORMAT = "replaylab-results/5"


class ResultsError(InvalidInput):
    """results.json data that breaks its schema, or a key a writer asked for that is not there."""


def _resource(contents: Any) -> Resource[Any]:
    return Resource.from_contents(contents, default_specification=DRAFT202012)


@cache
def schema() -> Any:
    return json.loads(resources.files("replaylab").joinpath("schemas/results.schema.json").read_text("utf-8"))


@cache
def validator(lesson: str) -> Any:
    """A validator of one lesson's results: the common schema with the lesson's parts."""
    parts = json.loads(resources.files(registry.lesson(lesson).package).joinpath("results.schema.json").read_text("utf-8"))
    known = Registry().with_resources(
        [
            ("urn:replaylab:results", _resource(schema())),
            ("urn:replaylab:lesson", _resource(parts)),
        ]
    )
    return jsonschema.Draft202012Validator(schema(), registry=known)


def check(data: Any, source: str | Path) -> dict[str, Any]:
    """The data, if it is a lesson's results as the schema says; `ResultsError` naming `source`,
    the JSON path of the first wrong field and what is wrong otherwise."""
    if not isinstance(data, dict) or "lesson" not in data:
        raise ResultsError(f"{source}: $: not the results of a lesson (no lesson)")
    lesson = data["lesson"]
    try:
        registry.lesson(lesson)
    except ValueError as error:
        raise ResultsError(f"{source}: $.lesson: {error}") from None
    errors = sorted(validator(lesson).iter_errors(data), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        error = _deepest(errors[0])
        raise ResultsError(f"{source}: {json_path(error.absolute_path)}: {error.message}")
    return data


def _deepest(error: Any) -> Any:
    """Of an error of a oneOf or anyOf, the most precise cause."""
    while error.context:
        error = max(error.context, key=lambda e: len(e.absolute_path))
    return error


class Strict(dict[str, Any]):
    """A JSON object of results.json whose missing key is an error naming the file, the path and the key."""

    where: str

    def __missing__(self, key: str) -> NoReturn:
        raise ResultsError(f"{self.where}: no key {key!r}")


def strict(value: Any, source: str | Path, path: tuple[Any, ...] = ()) -> Any:
    """`value` with every object made `Strict`, each knowing its JSON path in `source`."""
    if isinstance(value, dict):
        made = Strict((key, strict(item, source, path + (key,))) for key, item in value.items())
        made.where = f"{source}: {json_path(path)}"
        return made
    if isinstance(value, list):
        return [strict(item, source, path + (index,)) for index, item in enumerate(value)]
    return value


def load(path: str | Path) -> Strict:
    """A lesson's results.json, read, checked and made `Strict`."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ResultsError(f"{path}: cannot be read as JSON: {error}") from None
    return cast(Strict, strict(check(data, path), path))
