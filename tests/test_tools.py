"""The allowlist: every validation and refusal text of harness.md, budgets, and hostile calls.

Each test runs the real `Parameter`, `Choice`, `Tool` and `Allowlist`; the only functions written
here are the tools' bodies, which count how often (and with what) they were really called.
"""

import json
import math

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from replaylab.agents.messages import ToolCall, ToolResult
from replaylab.agents.tools import Allowlist, Choice, Parameter, Refused, Tool

# ---------------------------------------------------------------------------------------------
# A counting tool: three parameters of the three kinds, and a record of every real call.


class Counter:
    def __init__(self):
        self.calls = []

    def __call__(self, speed, steps, method):
        self.calls.append({"speed": speed, "steps": steps, "method": method})
        return {"speed": speed, "steps": steps, "method_index": METHODS.index(method)}


METHODS = ("explicit Euler", "velocity Verlet")
SPEED = Parameter("speed", "launch speed, m/s", 1, 50)
STEPS = Parameter("steps", "steps per period", 4, 200, integer=True)
METHOD = Choice("method", "the integrator", METHODS)
VALID = {"speed": 25, "steps": 32, "method": "velocity Verlet"}


def counting_allowlist(budget=None):
    counter = Counter()
    tool = Tool("measure", "a measurement", (SPEED, STEPS, METHOD), counter)
    return Allowlist([tool], budget=budget), counter


_VALID = object()


def call(name="measure", arguments=_VALID, id="1"):
    return ToolCall(id, name, dict(VALID) if arguments is _VALID else arguments)


def refusal(parameter, value):
    with pytest.raises(Refused) as caught:
        parameter.validate(value)
    return str(caught.value)


# ---------------------------------------------------------------------------------------------
# Parameter: number, integer, finite, between (texts exact, in this order).


@pytest.mark.parametrize(
    "value, type_name",
    [("nan", "str"), ("inf", "str"), (True, "bool"), (False, "bool"), (None, "NoneType"), ([25], "list"),
     ({"v": 25}, "dict"), ("", "str"), ("25 m/s", "str"), ("9" * 31, "str")],
)
def test_not_a_number(value, type_name):
    assert refusal(SPEED, value) == f"speed must be a number, got {type_name}"
    assert refusal(STEPS, value) == f"steps must be a number, got {type_name}"


@pytest.mark.parametrize("value, shown", [("25", "25"), (" 3.5 ", "3.5"), ("1e3", "1e3"), ("-2", "-2")])
def test_a_number_sent_as_text_is_refused_with_how_to_send_it(value, shown):
    """The spec's text, then the fix: the agent sent the number in quotes."""
    assert refusal(SPEED, value) == f"speed must be a number, got str: send {shown} as a number, without quotes"


def test_the_example_texts_of_the_spec():
    assert refusal(SPEED, "25").startswith("speed must be a number, got str")
    steps_per_period = Parameter("steps_per_period", "", 4, 200, integer=True)
    assert refusal(steps_per_period, 32.5) == "steps_per_period must be an integer, got 32.5"


@pytest.mark.parametrize("value, shown", [(32.5, "32.5"), (4.000001, "4.000001"), (1e-300, "1e-300"), (-0.5, "-0.5")])
def test_an_integer_parameter_refuses_a_float_that_is_not_an_integer(value, shown):
    assert refusal(STEPS, value) == f"steps must be an integer, got {shown}"


@pytest.mark.parametrize("value", [16.0, 4.0, 200.0, 32.0])
def test_an_integer_valued_float_is_taken_as_the_int(value):
    """JSON Schema counts 16.0 as an integer, and JSON clients send it: the tool receives the int 16."""
    accepted = STEPS.validate(value)
    assert accepted == value and type(accepted) is int


@pytest.mark.parametrize("value, shown", [(3.0, "3"), (201.0, "201"), (1e300, "1e+300"), (-0.0, "-0"), (-1e300, "-1e+300")])
def test_an_integer_valued_float_out_of_bounds_is_shown_as_sent(value, shown):
    assert refusal(STEPS, value) == f"steps must be between 4 and 200, got {shown}"


def test_the_integer_check_comes_before_the_finite_check():
    assert refusal(STEPS, math.inf) == "steps must be an integer, got inf"
    assert refusal(STEPS, math.nan) == "steps must be an integer, got nan"


@pytest.mark.parametrize("value, shown", [(math.inf, "inf"), (-math.inf, "-inf"), (math.nan, "nan")])
def test_not_finite(value, shown):
    assert refusal(SPEED, value) == f"speed must be finite, got {shown}"


@pytest.mark.parametrize("literal, shown", [("NaN", "nan"), ("Infinity", "inf"), ("-Infinity", "-inf")])
def test_json_literals_nan_and_infinity_reach_validation_as_floats(literal, shown):
    value = json.loads(f'{{"speed": {literal}}}')["speed"]
    assert isinstance(value, float)
    assert refusal(SPEED, value) == f"speed must be finite, got {shown}"


@pytest.mark.parametrize(
    "parameter, value, shown",
    [
        (SPEED, 1000000, "1000000"),
        (SPEED, 0.0, "0"),
        (SPEED, 0, "0"),
        (SPEED, -3, "-3"),
        (SPEED, 50.0000001, "50.0000001"),
        (SPEED, 0.9999999, "0.9999999"),
        (SPEED, 51.5, "51.5"),
        (SPEED, 1e-300, "1e-300"),
        (SPEED, 1e300, "1e+300"),
        (SPEED, 10**400, str(10**400)),
        (SPEED, -(10**400), str(-(10**400))),
        (STEPS, 1000000, "1000000"),
        (STEPS, 3, "3"),
        (STEPS, 201, "201"),
        (STEPS, 10**400, str(10**400)),
    ],
)
def test_between_shows_the_value_faithfully(parameter, value, shown):
    low, high = ("1", "50") if parameter is SPEED else ("4", "200")
    assert refusal(parameter, value) == f"{parameter.name} must be between {low} and {high}, got {shown}"


def test_bounds_are_shown_with_percent_g():
    dt = Parameter("dt", "", 0.001, 0.05)
    assert refusal(dt, 0.0) == "dt must be between 0.001 and 0.05, got 0"
    assert refusal(dt, 1e-300) == "dt must be between 0.001 and 0.05, got 1e-300"
    wide = Parameter("x", "", -1e-7, 123456789.0)
    assert refusal(wide, 1e10) == "x must be between -1e-07 and 1.23457e+08, got 1e+10"


def test_a_huge_int_is_shown_as_its_number_of_digits():
    assert refusal(SPEED, 10**5000) == "speed must be between 1 and 50, got an integer of 5001 digits"
    # math.log10(10**32768) is a hair below 32768: the count is corrected up, not off by one
    assert refusal(SPEED, 10**32768) == "speed must be between 1 and 50, got an integer of 32769 digits"
    assert refusal(SPEED, -(10**5000)) == "speed must be between 1 and 50, got an integer of 5001 digits"
    assert refusal(SPEED, 10**4300) == "speed must be between 1 and 50, got an integer of 4301 digits"
    assert refusal(SPEED, 10**5000 - 1) == "speed must be between 1 and 50, got an integer of 5000 digits"
    assert refusal(SPEED, -(10**5000 - 1)) == "speed must be between 1 and 50, got an integer of 5000 digits"
    # 4300 digits still print as a plain number
    assert refusal(SPEED, 10**4300 - 1) == f"speed must be between 1 and 50, got {10**4300 - 1}"


def test_an_int_is_compared_as_an_int_never_converted():
    assert refusal(SPEED, 10**400).endswith("got " + str(10**400))  # float(10**400) would overflow
    # 2**53 + 1 as a float reads 2**53 and would pass; as an int it is above the bound
    tight = Parameter("n", "", 0, float(2**53), integer=True)
    assert refusal(tight, 2**53 + 1) == f"n must be between 0 and 9.0072e+15, got {2**53 + 1}"
    assert tight.validate(2**53) == 2**53


@pytest.mark.parametrize("value", [1, 50, 25, 1.0, 50.0, 12.5, 1.0000001])
def test_accepted_values_are_returned_unchanged(value):
    result = SPEED.validate(value)
    assert result == value and type(result) is type(value)


@pytest.mark.parametrize("value", [4, 200, 32, 10**0 * 7])
def test_accepted_ints_stay_ints(value):
    result = STEPS.validate(value)
    assert result == value and type(result) is int


# ---------------------------------------------------------------------------------------------
# Choice


@pytest.mark.parametrize(
    "value, shown",
    [
        ("os.system", "'os.system'"),
        ("velocity verlet", "'velocity verlet'"),
        ("velocity Verlet ", "'velocity Verlet '"),
        ("", "''"),
        (["velocity Verlet"], "a list"),
        (None, "null"),
        (3, "a number"),
        (True, "true"),
        ({"a": 1}, "an object"),
    ],
)
def test_choice_refusals(value, shown):
    assert refusal(METHOD, value) == f"method must be one of explicit Euler, velocity Verlet, got {shown}"


def test_choice_accepts_exactly_its_options():
    for option in METHODS:
        assert METHOD.validate(option) == option


# ---------------------------------------------------------------------------------------------
# Tool.validate: the arguments of a call, in order


def tool():
    return Tool("measure", "a measurement", (SPEED, STEPS, METHOD), Counter())


@pytest.mark.parametrize(
    "arguments, type_name",
    [("speed=25", "str"), (None, "NoneType"), ([25, 32, "explicit Euler"], "list"), (25, "int"), (True, "bool")],
)
def test_arguments_must_be_an_object(arguments, type_name):
    with pytest.raises(Refused, match="^the arguments must be an object, got " + type_name + "$"):
        tool().validate(arguments)


def refused_arguments(arguments):
    with pytest.raises(Refused) as caught:
        tool().validate(arguments)
    return str(caught.value)


def test_unknown_arguments_sorted_and_before_missing_ones():
    assert refused_arguments({**VALID, "zeta": 1, "alpha": 2}) == "unknown arguments: alpha, zeta"
    # unknown and missing at once: unknown wins
    assert refused_arguments({"code": "x", "speed": 25}) == "unknown arguments: code"


def test_missing_arguments_sorted():
    assert refused_arguments({"speed": 25}) == "missing arguments: method, steps"
    assert refused_arguments({}) == "missing arguments: method, speed, steps"
    assert refused_arguments({"steps": 32, "method": "explicit Euler"}) == "missing arguments: speed"


def test_parameters_checked_in_declaration_order():
    assert refused_arguments({"method": 1, "steps": 2.5, "speed": "x"}) == "speed must be a number, got str"
    assert refused_arguments({"method": 1, "steps": 2.5, "speed": 2}) == "steps must be an integer, got 2.5"
    assert refused_arguments({"method": 1, "steps": 5, "speed": 2}) == "method must be one of explicit Euler, velocity Verlet, got a number"


def test_validate_returns_the_declared_parameters_unchanged():
    arguments = {"method": "explicit Euler", "steps": 7, "speed": 2.5}
    validated = tool().validate(arguments)
    assert validated == arguments
    assert list(validated) == ["speed", "steps", "method"]
    assert type(validated["steps"]) is int and type(validated["speed"]) is float


# ---------------------------------------------------------------------------------------------
# Tool.spec(): what the model sees


def test_tool_spec_shape():
    spec = tool().spec()
    assert spec == {
        "name": "measure",
        "description": "a measurement",
        "parameters": {
            "type": "object",
            "properties": {
                "speed": {"type": "number", "description": "launch speed, m/s", "minimum": 1, "maximum": 50},
                "steps": {"type": "integer", "description": "steps per period", "minimum": 4, "maximum": 200},
                "method": {"type": "string", "description": "the integrator", "enum": list(METHODS)},
            },
            "required": ["speed", "steps", "method"],
            "additionalProperties": False,
        },
    }
    # required in declaration order, also when the names are not sorted
    reversed_tool = Tool("r", "", (METHOD, STEPS, SPEED), Counter())
    assert reversed_tool.spec()["parameters"]["required"] == ["method", "steps", "speed"]
    assert json.loads(json.dumps(spec, allow_nan=False)) == spec


def test_allowlist_specs_lists_every_tool():
    other = Tool("other", "", (SPEED,), Counter())
    allowlist = Allowlist([tool(), other])
    assert [s["name"] for s in allowlist.specs()] == ["measure", "other"]


# ---------------------------------------------------------------------------------------------
# Allowlist construction and dispatch


def test_duplicate_tool_names_are_a_value_error():
    with pytest.raises(ValueError, match=r"^duplicate tool name: measure$"):  # the lesson's author reads it
        Allowlist([tool(), tool()])


@pytest.mark.parametrize("budget", [0, -1, -100])
def test_a_budget_below_one_is_a_value_error(budget):
    with pytest.raises(ValueError, match=rf"^the budget must be at least 1, got {budget}$"):
        Allowlist([tool()], budget=budget)


def test_budget_of_one_is_allowed():
    allowlist, counter = counting_allowlist(budget=1)
    assert allowlist.dispatch(call()).ok
    assert len(counter.calls) == 1


@pytest.mark.parametrize(
    "name, shown",
    [
        ("os.system", "'os.system'"),
        ("__import__", "'__import__'"),
        ("eval", "'eval'"),
        ("exec", "'exec'"),
        ("open", "'open'"),
        ("subprocess.run", "'subprocess.run'"),
        ("measure ", "'measure '"),
        (" measure", "' measure'"),
        ("MEASURE", "'MEASURE'"),
        ("Measure", "'Measure'"),
        ("", "''"),
        (None, "None"),
        (["measure"], "['measure']"),
        ({"name": "measure"}, "{'name': 'measure'}"),
        (1, "1"),
        (True, "True"),
        (math.nan, "nan"),
    ],
)
def test_names_that_are_not_allowed(name, shown):
    allowlist, counter = counting_allowlist(budget=3)
    result = allowlist.dispatch(call(name))
    assert result.ok is False and result.call_id == "1" and result.name is name
    assert result.content == {"error": f"{shown} is not an allowed tool; the allowed tools are: measure"}
    assert counter.calls == []
    assert allowlist.used == 0


def test_the_spec_example_name_text_then_the_names_that_are_allowed():
    allowlist, _ = counting_allowlist()
    assert allowlist.dispatch(call("os.system")).content == {"error": "'os.system' is not an allowed tool; the allowed tools are: measure"}
    two = Allowlist([Tool("b", "", (), lambda: {}), Tool("a", "", (), lambda: {})])
    assert two.dispatch(call("c", {})).content == {"error": "'c' is not an allowed tool; the allowed tools are: b, a"}


def test_a_name_with_an_int_too_long_to_print_is_refused_not_raised():
    allowlist, counter = counting_allowlist()
    result = allowlist.dispatch(call(10**5000))
    assert not result.ok and result.content["error"].endswith("is not an allowed tool; the allowed tools are: measure")
    assert "5001 digits" in result.content["error"]
    result = allowlist.dispatch(call([10**5000]))
    assert not result.ok and result.content["error"].endswith("is not an allowed tool; the allowed tools are: measure")
    assert counter.calls == []


def test_the_name_is_only_a_key():
    # names of attributes and methods of the allowlist, its dict and Python's builtins
    allowlist, counter = counting_allowlist()
    for name in ("tools", "dispatch", "check", "__class__", "__init__", "keys", "items", "get", "print", "specs"):
        result = allowlist.dispatch(call(name))
        assert result.content == {"error": f"{name!r} is not an allowed tool; the allowed tools are: measure"}
    assert counter.calls == []


def test_valid_call_runs_with_the_arguments_unchanged():
    allowlist, counter = counting_allowlist()
    result = allowlist.dispatch(call("measure", {"speed": 2.5, "steps": 32, "method": "explicit Euler"}, id="c7"))
    assert result == ToolResult("c7", "measure", True, {"speed": 2.5, "steps": 32, "method_index": 0})
    assert counter.calls == [{"speed": 2.5, "steps": 32, "method": "explicit Euler"}]
    assert type(counter.calls[0]["steps"]) is int


def test_budget_text_and_budget_of_two():
    allowlist, counter = counting_allowlist(budget=2)
    results = [allowlist.dispatch(call(id=str(i))) for i in range(4)]
    assert [r.ok for r in results] == [True, True, False, False]
    assert results[2].content == {"error": "the budget of 2 experiments is spent"}
    assert results[3].content == {"error": "the budget of 2 experiments is spent"}
    assert len(counter.calls) == 2
    assert allowlist.used == 2


def test_budget_of_eight_text():
    allowlist, counter = counting_allowlist(budget=8)
    for i in range(8):
        assert allowlist.dispatch(call(id=str(i))).ok
    assert allowlist.dispatch(call()).content == {"error": "the budget of 8 experiments is spent"}
    assert len(counter.calls) == 8


def test_refused_calls_cost_nothing():
    allowlist, counter = counting_allowlist(budget=2)
    hostile = [
        call("os.system"),
        call(arguments={**VALID, "speed": 1000000}),
        call(arguments={**VALID, "extra": 1}),
        call(arguments={"speed": 25}),
        call(arguments="speed=25"),
        call(arguments={**VALID, "steps": 32.5}),
        call(arguments={**VALID, "method": "velocity verlet"}),
    ]
    for c in hostile:
        assert not allowlist.dispatch(c).ok
    assert allowlist.used == 0 and counter.calls == []
    assert allowlist.dispatch(call()).ok and allowlist.dispatch(call()).ok
    assert not allowlist.dispatch(call()).ok
    assert len(counter.calls) == 2


def test_a_spent_budget_still_gives_the_validation_reason_first():
    allowlist, _ = counting_allowlist(budget=1)
    allowlist.dispatch(call())
    assert allowlist.dispatch(call("os.system")).content == {"error": "'os.system' is not an allowed tool; the allowed tools are: measure"}
    assert allowlist.dispatch(call(arguments={"speed": 25})).content == {"error": "missing arguments: method, steps"}


def test_every_new_allowlist_has_a_fresh_budget():
    tools = [tool()]
    first = Allowlist(tools, budget=1)
    assert first.dispatch(call()).ok
    assert not first.dispatch(call()).ok
    second = Allowlist(tools, budget=1)
    assert second.dispatch(call()).ok


def make_raising(error):
    ran = []

    def function(x):
        ran.append(x)
        raise error

    return Allowlist([Tool("f", "", (Parameter("x", "", 0, 10),), function)], budget=3), ran


@pytest.mark.parametrize("error", [ValueError("dt must be positive, got 0"), RuntimeError("did not land")])
def test_value_and_runtime_errors_become_error_results_and_still_cost(error):
    allowlist, ran = make_raising(error)
    result = allowlist.dispatch(ToolCall("9", "f", {"x": 1}))
    assert result == ToolResult("9", "f", False, {"error": str(error)})
    assert ran == [1]
    assert allowlist.used == 1  # counted before the function ran


def test_the_count_goes_up_before_the_function_runs():
    seen = []
    holder = {}

    def function(x):
        seen.append(holder["allowlist"].used)
        raise ValueError("refused by the function")

    allowlist = Allowlist([Tool("f", "", (Parameter("x", "", 0, 10),), function)], budget=2)
    holder["allowlist"] = allowlist
    assert not allowlist.dispatch(ToolCall("1", "f", {"x": 1})).ok
    assert not allowlist.dispatch(ToolCall("2", "f", {"x": 1})).ok
    assert seen == [1, 2]
    assert allowlist.dispatch(ToolCall("3", "f", {"x": 1})).content == {"error": "the budget of 2 experiments is spent"}
    assert seen == [1, 2]


@pytest.mark.parametrize("error", [TypeError("bug"), KeyError("bug"), ZeroDivisionError("bug"), AssertionError("bug")])
def test_other_exceptions_propagate(error):
    allowlist, ran = make_raising(error)
    with pytest.raises(type(error)):
        allowlist.dispatch(ToolCall("1", "f", {"x": 1}))
    assert ran == [1]


# ---------------------------------------------------------------------------------------------
# Hostile calls never run the function


HOSTILE_NAMES = [
    "os.system", "__import__", "eval", "exec", "open", "subprocess.run", "measure ", "MEASURE", "Measure",
    "", None, [], ["measure"], {"measure": 1}, 0, 1.5, True,
]
BAD_VALUES = {
    "speed": [51, 0, 50.0000001, 0.9999999, 10**400, -(10**400), math.inf, -math.inf, math.nan, "25", "25.0",
              True, False, None, [25], {"v": 25}, 1e999],
    "steps": [3, 201, 10**400, -(10**400), 3.0, 201.0, 32.5, "32", True, None, [32], math.nan, math.inf],
    "method": ["os.system", "velocity verlet", "VELOCITY VERLET", " velocity Verlet", None, ["velocity Verlet"], 1,
               True],
}


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=repr)
def test_hostile_names_never_run(name):
    allowlist, counter = counting_allowlist(budget=5)
    result = allowlist.dispatch(call(name))
    assert not result.ok
    assert counter.calls == [] and allowlist.used == 0


@pytest.mark.parametrize(
    "key, value", [(k, v) for k, values in BAD_VALUES.items() for v in values], ids=lambda x: repr(x)[:40]
)
def test_hostile_values_never_run(key, value):
    allowlist, counter = counting_allowlist(budget=5)
    result = allowlist.dispatch(call(arguments={**VALID, key: value}))
    assert not result.ok and isinstance(result.content["error"], str)
    assert result.content["error"].startswith(key + " must be ")
    assert counter.calls == [] and allowlist.used == 0


@pytest.mark.parametrize(
    "arguments",
    ["speed=25", None, [25, 32, "velocity Verlet"], 25, {**VALID, "extra": 1}, {"speed": 25, "steps": 32},
     {}, {**VALID, "__class__": 1}, '{"speed": 25, "steps": 32, "method": "velocity Verlet"}'],
    ids=repr,
)
def test_hostile_arguments_never_run(arguments):
    allowlist, counter = counting_allowlist(budget=5)
    assert not allowlist.dispatch(call(arguments=arguments)).ok
    assert counter.calls == [] and allowlist.used == 0


def test_nan_and_infinity_from_the_json_parser_never_run():
    allowlist, counter = counting_allowlist()
    for text in ('{"speed": NaN, "steps": 32, "method": "explicit Euler"}',
                 '{"speed": Infinity, "steps": 32, "method": "explicit Euler"}',
                 '{"speed": -Infinity, "steps": 32, "method": "explicit Euler"}',
                 '{"speed": 1e999, "steps": 32, "method": "explicit Euler"}',
                 '{"speed": 25, "steps": NaN, "method": "explicit Euler"}'):
        result = allowlist.dispatch(call(arguments=json.loads(text)))
        assert not result.ok
    assert counter.calls == []


PAYLOAD = "__import__('pathlib').Path({path!r}).write_text('pwned')"


def test_code_in_a_value_a_name_or_a_key_never_runs(tmp_path):
    # The payload is real code: run on purpose, it creates its file.
    control = tmp_path / "control.txt"
    exec(PAYLOAD.format(path=str(control)))
    assert control.read_text() == "pwned"

    target = tmp_path / "target.txt"
    code = PAYLOAD.format(path=str(target))
    variants = [
        code,
        "eval(" + repr(code) + ")",
        "exec(" + repr(code) + ")",
        "'); " + code + "; ('",
        "measure; " + code,
        "measure(" + code + ")",
    ]
    allowlist, counter = counting_allowlist(budget=50)
    for text in variants:
        calls = [
            call(text),
            call(arguments={**VALID, "speed": text}),
            call(arguments={**VALID, "method": text}),
            call(arguments={**VALID, text: 1}),
            call(arguments={text: 25, "steps": 32, "method": "explicit Euler"}),
            call(arguments=text),
            call([text]),
            call({text: text}),
        ]
        for c in calls:
            result = allowlist.dispatch(c)
            assert not result.ok
            # the refusal may quote the code as data, and nothing more
            assert isinstance(result.content["error"], str)
    assert not target.exists()
    assert counter.calls == [] and allowlist.used == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["control.txt"]


# ---------------------------------------------------------------------------------------------
# Property tests: arbitrary JSON in, never an exception, the function only for valid input


HUGE_INTS = st.builds(
    lambda digits, sign, offset: sign * (10**digits + offset),
    st.sampled_from([18, 19, 308, 400, 4299, 4300, 5000]),
    st.sampled_from([1, -1]),
    st.integers(-2, 2),
)  # built, not listed: an int of over 4300 digits cannot even be repr'd
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    HUGE_INTS,
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
)
JSON = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=8), children, max_size=4),
    ),
    max_leaves=12,
)
NEAR_SPEED = st.one_of(st.integers(1, 50), st.floats(1, 50), st.integers(-5, 60), st.floats(0, 55), JSON)
NEAR_STEPS = st.one_of(st.integers(4, 200), st.integers(0, 250), st.floats(0, 250), JSON)
NEAR_METHOD = st.one_of(st.sampled_from(METHODS), st.sampled_from(("velocity verlet", "Explicit Euler", "")), JSON)
VALID_ARGUMENTS = st.fixed_dictionaries(
    {"speed": st.one_of(st.integers(1, 50), st.floats(1, 50)), "steps": st.integers(4, 200),
     "method": st.sampled_from(METHODS)}
)
NEAR_ARGUMENTS = st.one_of(
    VALID_ARGUMENTS,
    st.fixed_dictionaries({"speed": NEAR_SPEED, "steps": NEAR_STEPS, "method": NEAR_METHOD}),
    JSON,
    st.fixed_dictionaries(
        {"speed": NEAR_SPEED, "steps": NEAR_STEPS, "method": NEAR_METHOD},
        optional={"extra": JSON, "speed ": JSON},
    ),
    st.fixed_dictionaries({"speed": NEAR_SPEED, "method": NEAR_METHOD}),
)
NAMES = st.one_of(st.just("measure"), st.sampled_from(HOSTILE_NAMES), JSON)
NAMES_MOSTLY_RIGHT = st.one_of(st.just("measure"), NAMES)


def number_within(value, low, high, integer):
    """An independent statement of the rules: the value the tool may receive."""
    if type(value) is int:
        return low <= value <= high
    if type(value) is float and (not integer or value.is_integer()):
        return math.isfinite(value) and low <= value <= high
    return False


def as_received(value, integer):
    """What the tool receives for a valid value: an integer parameter always gets an int."""
    return int(value) if integer else value


def should_run(name, arguments):
    return (
        type(name) is str
        and name == "measure"
        and type(arguments) is dict
        and set(arguments) == {"speed", "steps", "method"}
        and number_within(arguments["speed"], 1, 50, integer=False)
        and number_within(arguments["steps"], 4, 200, integer=True)
        and type(arguments["method"]) is str
        and arguments["method"] in METHODS
    )


PROPERTY_SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY_SETTINGS
@given(name=NAMES_MOSTLY_RIGHT, arguments=NEAR_ARGUMENTS)
def test_dispatch_never_raises_and_runs_only_valid_calls(name, arguments):
    allowlist, counter = counting_allowlist()
    result = allowlist.dispatch(ToolCall("p", name, arguments))
    assert isinstance(result, ToolResult) and result.call_id == "p"
    event("valid" if should_run(name, arguments) else "refused")
    if should_run(name, arguments):
        assert result.ok
        assert len(counter.calls) == 1
        received = counter.calls[0]
        for key in ("speed", "steps", "method"):
            expected = as_received(arguments[key], integer=key == "steps")
            assert received[key] == expected
            assert type(received[key]) is type(expected)  # ints stay ints, floats stay floats (16.0 is 16)
        assert type(result.content["steps"]) is int
        assert allowlist.used == 1
    else:
        assert not result.ok
        assert counter.calls == [] and allowlist.used == 0
        assert set(result.content) == {"error"} and isinstance(result.content["error"], str)
        assert result.content["error"]


@PROPERTY_SETTINGS
@given(value=JSON)
def test_parameter_validation_is_total_and_exact(value):
    for parameter in (SPEED, STEPS):
        valid = number_within(value, parameter.low, parameter.high, parameter.integer)
        try:
            accepted = parameter.validate(value)
        except Refused as refusal_:
            assert not valid
            assert str(refusal_).startswith(parameter.name + " must be ")
        else:
            assert valid
            if parameter.integer:
                assert accepted == value and type(accepted) is int
            else:
                assert accepted is value


@PROPERTY_SETTINGS
@given(text=st.text(max_size=40))
def test_json_text_from_a_model_never_breaks_dispatch(text):
    """Whatever text a model sends as arguments, parsed or not, dispatch answers with a result."""
    allowlist, counter = counting_allowlist()
    try:
        arguments = json.loads(text)
    except (ValueError, RecursionError):
        arguments = text
    result = allowlist.dispatch(ToolCall("t", "measure", arguments))
    assert result.ok == should_run("measure", arguments)
    assert len(counter.calls) == (1 if result.ok else 0)


# ---------------------------------------------------------------------------------------------
# The real lesson tools


def projectile_error(name, arguments):
    from replaylab.lessons.projectile import lab

    result = lab.all_tools().dispatch(ToolCall("1", name, arguments))
    assert not result.ok
    return result.content["error"]


def test_projectile_refusal_texts():
    assert projectile_error("range_with_drag", {"speed": 25, "angle": 90, "dt": 0.01}) == (
        "angle must be between 1 and 89, got 90"
    )
    assert projectile_error("range_with_drag", {"speed": 25, "angle": 45, "dt": 0.0}) == (
        "dt must be between 0.001 and 0.05, got 0"
    )
    assert projectile_error("range_with_drag", {"speed": 25, "angle": 45}) == "missing arguments: dt"
    assert projectile_error("range_with_drag", {"speed": "25", "angle": 45, "dt": 0.01}) == (
        "speed must be a number, got str: send 25 as a number, without quotes"
    )
    assert projectile_error("range_with_drag", {"speed": "fast", "angle": 45, "dt": 0.01}) == "speed must be a number, got str"
    assert projectile_error("range_with_drag", {"speed": "nan", "angle": 45, "dt": 0.01}) == "speed must be a number, got str"
    assert projectile_error("range_without_drag", {"speed": 25, "angle": 45, "code": "import os"}) == (
        "unknown arguments: code"
    )
    assert projectile_error("os.system", {"command": "ls"}) == (
        "'os.system' is not an allowed tool; the allowed tools are: range_with_drag, range_without_drag, flight_time_without_drag"
    )
    assert projectile_error("range_with_drag", {"speed": 25, "angle": 45, "dt": float("nan")}) == (
        "dt must be finite, got nan"
    )


def test_projectile_tools_accept_valid_calls():
    from replaylab.lessons.projectile import lab
    from replaylab.physics import projectile

    allowlist = lab.all_tools()
    assert set(allowlist.tools) == {"range_with_drag", "range_without_drag", "flight_time_without_drag"}
    result = allowlist.dispatch(ToolCall("1", "range_with_drag", {"speed": 25, "angle": 35, "dt": 0.01}))
    assert result.ok and result.content == {"range_m": projectile.range_with_drag(25, 35, 0.01)}


def hunter_error(arguments, name="oscillator_energy_drift"):
    from replaylab.lessons.hunter import lab

    allowlist = lab.all_tools()
    result = allowlist.dispatch(ToolCall("1", name, arguments))
    assert not result.ok and allowlist.used == 0
    return result.content["error"]


HUNTER_VALID = {"method": "velocity Verlet", "steps_per_period": 32, "periods": 10}
OPTIONS = "explicit Euler, symplectic Euler, velocity Verlet, Runge-Kutta 4"


def test_hunter_refusal_texts():
    assert hunter_error({**HUNTER_VALID, "method": "os.system"}) == (
        f"method must be one of {OPTIONS}, got 'os.system'"
    )
    assert hunter_error({**HUNTER_VALID, "method": ["velocity Verlet"]}) == f"method must be one of {OPTIONS}, got a list"
    assert hunter_error({**HUNTER_VALID, "method": "velocity verlet"}) == (
        f"method must be one of {OPTIONS}, got 'velocity verlet'"
    )
    assert hunter_error({**HUNTER_VALID, "steps_per_period": 0}) == "steps_per_period must be between 4 and 200, got 0"
    assert hunter_error({**HUNTER_VALID, "periods": 1000000}) == "periods must be between 1 and 50, got 1000000"
    assert hunter_error({**HUNTER_VALID, "steps_per_period": 32.5}) == "steps_per_period must be an integer, got 32.5"
    assert hunter_error({**HUNTER_VALID, "steps_per_period": 3.0}) == "steps_per_period must be between 4 and 200, got 3"


def test_hunter_budget_is_eight_and_fresh():
    from replaylab.lessons.hunter import lab

    allowlist = lab.all_tools()
    results = [allowlist.dispatch(ToolCall(str(i), "oscillator_energy_drift", HUNTER_VALID)) for i in range(9)]
    assert [r.ok for r in results] == [True] * 8 + [False]
    assert results[8].content == {"error": "the budget of 8 experiments is spent"}
    assert lab.all_tools().dispatch(ToolCall("x", "oscillator_energy_drift", HUNTER_VALID)).ok
