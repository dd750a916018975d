"""The compiled schema check of recordings (fastjsonschema) against jsonschema's validator.

Loading a recording checks it with the schema compiled by fastjsonschema first, and asks
jsonschema's validator only for the message of one that fails (recording.schema_errors): so the
compiled check must accept exactly what jsonschema accepts. Hypothesis changes one value of real
recordings at a time (any JSON value in its place, a key removed or added) and compares both.
"""

import copy
import json

import fastjsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import ROOT
from replaylab.agents import recording

RECORDINGS = sorted((ROOT / "recordings").glob("*/*.json"))
DATA = [json.loads(path.read_text(encoding="utf-8")) for path in RECORDINGS]

values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=6,
)


def places(data, path=()):
    """Every (path, value) inside the data."""
    yield path, data
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else []
    for key, item in items:
        yield from places(item, path + (key,))


def changed(data, path, how, value):
    data = copy.deepcopy(data)
    if not path:
        return value
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    if how == "remove" and isinstance(parent, dict):
        del parent[path[-1]]
    elif how == "add" and isinstance(parent[path[-1]], dict):
        parent[path[-1]]["extra"] = value
    else:
        parent[path[-1]] = value
    return data


def both_agree(data):
    try:
        recording.compiled_schema()(data)
        compiled = True
    except fastjsonschema.JsonSchemaException:
        compiled = False
    reference = not list(recording._validator().iter_errors(data))
    assert compiled == reference, (compiled, reference, json.dumps(data)[:500])
    assert (recording.schema_errors(data) == []) == reference


def test_the_committed_recordings_pass_both():
    for data in DATA:
        both_agree(data)
        assert recording.schema_errors(data) == []


@settings(max_examples=600, deadline=None, derandomize=True)
@given(st.data(), st.sampled_from(["replace", "remove", "add"]), values)
def test_the_compiled_check_accepts_exactly_what_jsonschema_accepts(data, how, value):
    original = data.draw(st.sampled_from(DATA))
    path, _ = data.draw(st.sampled_from(list(places(original))))
    both_agree(changed(original, path, how, value))
