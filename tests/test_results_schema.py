"""results.json against its schema (schemas/results.schema.json and each lesson's results.schema.json):
checked when written and when read, strict for the writers, honest about what was not computed."""

import copy
import json
from importlib import resources

import pytest

from replaylab.lessons import counted, registry
from replaylab.results import FORMAT, ResultsError, check, load, strict

LESSONS = registry.names()


@pytest.fixture(scope="module")
def built(reference_results):
    """The committed recordings built by `build(recordings=RECORDINGS, ...)`, once per test run
    (tests/conftest.py)."""
    return reference_results


@pytest.fixture(scope="module")
def results(built):
    return {lesson: json.loads((built / lesson / "results.json").read_text()) for lesson in LESSONS}


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_built_results_file_validates_and_loads_strictly(built, lesson):
    loaded = load(built / lesson / "results.json")
    assert loaded["format"] == FORMAT and loaded["lesson"] == lesson
    assert loaded["score_unit"] == list(registry.lesson(lesson).unit)
    with pytest.raises(ResultsError, match=rf"^{built / lesson / 'results.json'}: \$\.scans: no key 'nothing'$"):
        loaded["scans"]["nothing"]


def first_verdict(data):
    return next(iter(data["verdicts"].values()))


@pytest.mark.parametrize("lesson", LESSONS)
@pytest.mark.parametrize(
    "change, where",
    [
        (lambda d: d.pop("scorecard"), r"\$: 'scorecard' is a required property"),
        (lambda d: d.update(extra=1), r"\$: Additional properties are not allowed \('extra' was unexpected\)"),
        (lambda d: d.update(format="replaylab-results/3"), r"\$\.format: 'replaylab-results/5' was expected"),
        (lambda d: d["scans"].update(renamed=d["scans"].pop(next(iter(d["scans"])))), r"\$\.scans: "),
        (lambda d: first_verdict(d).pop("calls"), r"\$\.verdicts\.[^:]+: 'calls' is a required property"),
        (lambda d: first_verdict(d).pop("supported"), r"\$\.verdicts\.[^:]+: 'supported' is a required property"),
        (lambda d: d.pop("groups"), r"\$: 'groups' is a required property"),
        (lambda d: first_verdict(d).update(surprise=True), r"\$\.verdicts\.[^:]+: Additional properties are not allowed"),
        (lambda d: d["scorecard"][0].update(runs="1"), r"\$\.scorecard\[0\]\.runs: '1' is not of type 'integer'"),
    ],
    ids=["missing-key", "unknown-key", "old-format", "renamed-scan", "verdict-without-calls", "verdict-without-supported",
         "no-groups", "unknown-verdict-key", "wrong-type"],
)
def test_the_schema_refuses_a_changed_file_naming_the_field(results, lesson, change, where):
    data = copy.deepcopy(results[lesson])
    change(data)
    with pytest.raises(ResultsError, match=rf"^results/{lesson}/results\.json: {where}"):
        check(data, f"results/{lesson}/results.json")


def test_an_unknown_lesson_in_results_is_one_line(results):
    data = copy.deepcopy(results[LESSONS[0]])
    data["lesson"] = "astronomy"
    with pytest.raises(ResultsError, match=r"^x\.json: \$\.lesson: unknown lesson 'astronomy'; the lessons are: "):
        check(data, "x.json")


def test_a_results_file_is_checked_when_read(built, tmp_path):
    data = json.loads((built / LESSONS[0] / "results.json").read_text())
    del data["verdicts"]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match=rf"^{path}: \$: 'verdicts' is a required property$"):
        load(path)
    path.write_text("{not json")
    with pytest.raises(ResultsError, match=rf"^{path}: cannot be read as JSON"):
        load(path)


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_writer_asking_for_a_missing_key_names_it(results, lesson):
    """A key the writers need, renamed after the check: the page fails naming the file, path and key."""
    data = copy.deepcopy(results[lesson])
    data["right_answer_renamed"] = data.pop("right_answer")
    with pytest.raises(ResultsError, match=rf"^results/{lesson}/results\.json: \$: no key 'right_answer'$"):
        registry.lesson(lesson).page(strict(data, f"results/{lesson}/results.json"))


def test_the_strict_data_is_the_same_data(results):
    data = results[LESSONS[0]]
    made = strict(data, "x")
    assert made == data and json.dumps(made) == json.dumps(data)
    assert copy.deepcopy(made) == data


# ---------------------------------------------------------------------------------------------
# Pages say only what was computed


def common_verdict_keys():
    """The keys every verdict has (schemas/results.schema.json): who, what, its calls, its answer and its support."""
    schema = json.loads(resources.files("replaylab").joinpath("schemas/results.schema.json").read_text())
    return set(schema["properties"]["verdicts"]["additionalProperties"]["allOf"][0]["required"])


def demonstrations(lesson):
    """The keys of a lesson's verdict that only the runs of the demonstration group get: those its
    schema allows but does not require."""
    verdict = json.loads(resources.files(registry.lesson(lesson).package).joinpath("results.schema.json").read_text())["$defs"]["verdict"]
    return set(verdict["properties"]) - set(verdict["required"]) - common_verdict_keys()


def without_demonstrations(data):
    """The results as a build of runs outside the demonstration group gives them: no demonstration."""
    data = copy.deepcopy(data)
    for verdict in data["verdicts"].values():
        for key in demonstrations(data["lesson"]):
            verdict.pop(key, None)
    return data


def test_the_demonstrations_of_a_verdict_are_its_optional_keys():
    assert {"answer", "supported", "support", "no_answer", "explanation", "group"} <= common_verdict_keys()
    found = {lesson: demonstrations(lesson) for lesson in LESSONS}
    assert found == {"projectile": {"rough_ball"}, "hunter": {"words_ignored", "stricter_claim"},
                     "review": {"strict_replay"}, "pendulum": {"changed_gravity"},
                     "resonance": {"changed_oscillator"}, "rlc": {"changed_resistance"}}


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_demonstration_that_did_not_run_is_not_reported(results, lesson):
    data = without_demonstrations(results[lesson])
    check(data, "x")
    page = registry.lesson(lesson).page(strict(data, "x"))
    assert "not caught" not in page
    assert "not measured" not in page
    assert page.count("*(not run in this build") == 1  # each lesson has one demonstration made with its reference runs
    assert "*(not run in this build" not in registry.lesson(lesson).page(strict(results[lesson], "x"))


def test_the_scorecard_names_the_unit_of_a_score(results):
    for lesson in LESSONS:
        one, many = registry.lesson(lesson).unit
        page = registry.lesson(lesson).page(strict(results[lesson], "x"))
        assert f"| {many} | answered | right |" in page
        assert f"the share of right {many}." in page


def test_one_is_singular():
    assert counted(1, "period", "periods") == "1 period"
    assert counted(0, "period", "periods") == "0 periods"
    assert counted(2, "run", "runs") == "2 runs"


def hunts(value, path=()):
    """(path, hunt) of every hunt of a hunter results file: an object with an outcome and a witness."""
    if isinstance(value, dict):
        if {"outcome", "witness", "counted"} <= set(value):
            yield path, value
        for key, item in value.items():
            yield from hunts(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from hunts(item, path + (index,))


def test_a_counterexample_without_its_witness_is_refused_naming_the_field(results):
    """A file that passes the schema's types but says `counterexample` with no witness (issue 25,
    case 8): the schema says a counterexample has one, so the line names the file and the field."""
    data = copy.deepcopy(results["hunter"])
    path, hunt = next((p, h) for p, h in hunts(data) if h["outcome"] == "counterexample")
    hunt["witness"] = None
    where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path) + ".witness"
    with pytest.raises(ResultsError) as refused:
        check(data, "results/hunter/results.json")
    assert str(refused.value) == f"results/hunter/results.json: {where}: None is not of type 'object'"
