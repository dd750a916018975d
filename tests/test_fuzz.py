"""Property-based fuzzing (Hypothesis, pinned in pyproject.toml) of what a user, a provider or the
author of a recording can hand to replaylab (issue 16).

Valid recordings are mutated (structure, types, nesting, sizes, encodings, file names, file
kinds) and configurations too. The contract: the workflow's checks of the dry run
(`inputs.find_runs` and `inputs.check_recordings`, what `snakemake -n` runs, and
`configuration.check` for configurations), the command line's
`replay` and `promote` either accept the input, and then the build of the run succeeds (replay,
judge, results.json, tables and page: everything but drawing the figures, which the workflow
tests do; the page as Markdown, which the HTML is made from), or refuse it on one line that names the file (and, inside the file, the JSON path)
with exit code 2. Exit code 3 is the one other outcome: a recording that loads but no longer
replays, whose one line is the mismatch and the command that records the run again. Never a
traceback, a hang (an alarm stops the test), or another exit code.

The seed and the numbers of examples are fixed (SEED, and SCALE times the counts below) and
printed, so that a failure in CI is the same failure on a developer's machine. `make test` runs
the counts as they stand (SCALE 1; the MCP servers' test, `slow`, runs in `make test-all`); `.ci/run`
three times as many (REPLAYLAB_FUZZ_SCALE=3).
Hypothesis also draws, now and then, a constant it found in the code of the modules imported so
far (replaylab's, not the tests'): every module of replaylab is imported first
(`same_constants`), so that the examples do not depend on which tests ran before.
"""

import contextlib
import io
import json
import math
import pkgutil
import re
import shutil
import signal
import sys

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from helpers import RECORDINGS, ROOT, fuzz_scale
from helpers.bad import NOT_A_FILE, make_not_a_file
import replaylab
from replaylab import cli, configuration, inputs, pipeline
from replaylab.agents.recording import RecordingError, printable
from replaylab.lessons import registry
from replaylab.render import Render, collect_results, write_tables

SEED = 20261130


SCALE = fuzz_scale()  # checked before the tests start (tests/conftest.py)
EXAMPLES = 200 * SCALE
CONFIG_EXAMPLES = 160 * SCALE


def fuzzing(examples):
    """The settings of every fuzz test: `examples` examples, no deadline, no example database
    (the seed alone decides them), no health check (slow, large inputs are the point)."""
    return settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))


SOURCES = sorted(RECORDINGS.glob("*/*.json"))
TEXTS = {path: path.read_text(encoding="utf-8") for path in SOURCES}
COUNTS = {"accepted and built": 0, "refused": 0, "mismatch": 0}


@pytest.fixture(scope="module", autouse=True)
def same_constants():
    """Every module of replaylab imported (but its lessons' tests, the command's __main__ and the
    Inspect tasks, which need the inspect extra), whatever ran before: the constants Hypothesis
    finds in the imported code are then the same in every run."""
    for module in pkgutil.walk_packages(replaylab.__path__, "replaylab."):
        if ".tests" not in module.name and not module.name.endswith("__main__") and not module.name.startswith("replaylab.inspect_tasks"):
            __import__(module.name)

# ---------------------------------------------------------------------------------------------
# What is put in a recording


HOSTILE_TEXT = st.sampled_from([
    "\x1b[2J\x1b[31m", "a\nb", "\r", "\u202eevil", "\u2028", "\ud800", "\udfff", "\x00", "\x7f", "\x85",
    "; touch PWNED", "$(id)", "`id`", "'", '"', "\\", "../../etc/passwd", "é", "𝔘", "\ufeff", " ", "",
])
TEXT = st.one_of(st.text(max_size=30), HOSTILE_TEXT, st.builds(lambda a, b: a + b, st.text(max_size=8), HOSTILE_TEXT))
NUMBER = st.one_of(
    st.integers(), st.integers(min_value=-(10**1200), max_value=10**1200),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0, -0.0, 1e308, 5e-324, 2**53 + 1]),
)
SCALAR = st.one_of(st.none(), st.booleans(), NUMBER, TEXT)
VALUE = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
                     max_leaves=12)
RUN_NAMES = st.one_of(
    st.sampled_from(["run", "a" * 100, "a" * 101, "a" * 250, "my run", ".hidden", "-dash", "x.v2", "x-y", "é", "a\nb"]),
    st.text(alphabet="abcXYZ019_.- ", min_size=1, max_size=12),
)


def paths_of(data, path=()):
    """Every (JSON path) of the data, the root included."""
    found = [path]
    if isinstance(data, dict):
        for key, value in data.items():
            found += paths_of(value, path + (key,))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found += paths_of(value, path + (index,))
    return found


def at(data, path):
    for part in path:
        data = data[part]
    return data


@st.composite
def structural(draw, data):
    """One change to the data: a value replaced, a key removed or added, a step or a call repeated."""
    path = draw(st.sampled_from(paths_of(data)))
    kind = draw(st.sampled_from(["replace", "remove", "add", "repeat", "nest"]))
    if not path:
        return draw(VALUE) if kind == "replace" else data
    parent, last = at(data, path[:-1]), path[-1]
    if kind == "replace":
        parent[last] = draw(VALUE)
    elif kind == "remove":
        del parent[last]
    elif kind == "add" and isinstance(parent, dict):
        parent[draw(TEXT)] = draw(VALUE)
    elif kind == "repeat" and isinstance(parent, list):
        parent.insert(last, json.loads(json.dumps(parent[last], allow_nan=True)))
    elif kind == "nest":
        value = parent[last]
        for _ in range(draw(st.integers(1, 80))):
            value = draw(st.sampled_from([[value], {"a": value}]))
        parent[last] = value
    return data


def serialized(draw, data):
    ascii_only = draw(st.booleans())
    indent = draw(st.sampled_from([None, 2]))
    try:
        text = json.dumps(data, ensure_ascii=ascii_only, allow_nan=True, indent=indent)
    except (ValueError, RecursionError):  # an integer too long for Python to print
        text = json.dumps(data, ensure_ascii=True, allow_nan=True, default=str)
    return text.encode("utf-8", "surrogatepass")


@st.composite
def textual(draw, text):
    """One change to the bytes of the file: cut, a slice replaced, a key repeated, deep nesting,
    another encoding, a byte order mark, a digit run."""
    data = text.encode("utf-8")
    kind = draw(st.sampled_from(["cut", "splice", "duplicate", "deep", "encoding", "bom", "digits", "bytes"]))
    position = draw(st.integers(0, len(data)))
    if kind == "cut":
        return data[:position]
    if kind == "splice":
        end = draw(st.integers(position, min(len(data), position + 20)))
        return data[:position] + draw(TEXT).encode("utf-8", "surrogatepass") + data[end:]
    if kind == "duplicate":
        return data.replace(b'"run": ', b'"run": "x", "run": ', 1)
    if kind == "deep":
        depth = draw(st.sampled_from([60, 65, 500, 1000, 5000, 100_000]))
        return data.replace(b'"finished": ', b'"finished": ' + b"[" * depth + b"true" + b"]" * depth + b", \"x\": ", 1)
    if kind == "encoding":
        return text.encode(draw(st.sampled_from(["utf-16", "utf-32", "latin-1"])), "replace")
    if kind == "bom":
        return b"\xef\xbb\xbf" + data
    if kind == "digits":
        return data.replace(b'"periods": ', b'"periods": ' + b"9" * draw(st.sampled_from([999, 1000, 1001, 5000])), 1)
    return data[:position] + draw(st.binary(min_size=1, max_size=4)) + data[position:]


@st.composite
def recordings(draw):
    """(lesson, file name, file bytes or a kind of file that is not a regular one)."""
    source = draw(st.sampled_from(SOURCES))
    text = TEXTS[source]
    lesson, name = source.parent.name, source.stem
    how = draw(st.sampled_from(["structure", "structure", "structure", "text", "text", "name", "kind", "none"]))
    if how == "structure":
        content = serialized(draw, draw(structural(json.loads(text))))
    elif how == "text":
        content = draw(textual(text))
    elif how == "name":
        name = draw(RUN_NAMES)
        data = json.loads(text)
        if draw(st.booleans()):
            data["run"] = name
        content = serialized(draw, data)
    elif how == "kind":
        content = draw(st.sampled_from(sorted(NOT_A_FILE)))
    else:
        content = text.encode("utf-8")
    return lesson, name, content


# ---------------------------------------------------------------------------------------------
# The contract


def place(folder, lesson, name, content):
    lesson_folder = folder / lesson
    shutil.rmtree(folder, ignore_errors=True)
    lesson_folder.mkdir(parents=True)
    path = lesson_folder / f"{name}.json"
    if content in NOT_A_FILE:
        make_not_a_file(path, content)
    else:
        path.write_bytes(content)
    return path


def command(*argv):
    """(exit code, stdout, stderr) of `replaylab *argv`, run in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(list(argv))
        except SystemExit as stop:
            code = stop.code
    return code, out.getvalue(), err.getvalue()


# What a refusal says after the file's name: the JSON path of the field, or what is wrong with the
# file as a whole (its bytes, its kind, its name).
WHOLE_FILE = ("$", "not valid JSON: ", "not UTF-8 text", "nested more than", "a folder", "a symbolic link",
              "a loop of symbolic links", "a named pipe", "the file name: ")


def refused_on_one_line(code, err, path):
    assert code == 2, (code, err)
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err and "unexpected error" not in err, err[:2000]
    prefix = f"replaylab: {printable(str(path))}: "
    assert lines[0].startswith(prefix), lines[0][:300]
    assert lines[0][len(prefix):].startswith(WHOLE_FILE), lines[0][:300]


def build(path, folder):
    """Everything the workflow builds from one run, but the figures (drawn from the same data)."""
    run = inputs.check_recording(path)
    transcripts, judged = folder / "transcripts" / "batch0of1", folder / "judged" / "batch0of1.json"
    pipeline.replay_batch(pipeline.Replay(run.lesson, [path], transcripts, judged, 1e-6))
    stage = Render.in_folder(run.lesson, folder, 1e-6, [transcripts], [judged], folder / "scans.json",
                             folder / "exercises.json", runs=[run.run])
    results = collect_results(stage)
    write_tables(run.lesson, results, stage.tables)
    page = registry.lesson(run.lesson).page(results)  # the Markdown; its HTML embeds the figures
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f\x1b]", page), "a control character reached the page"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, reference_results):
    root = tmp_path_factory.mktemp("fuzz")
    # computed once (they never depend on a run): each lesson's scans, exercises, answers and
    # baselines (tolerance 1e-6) of the session's build of the reference runs, read only
    scans = {lesson: reference_results / lesson for lesson in registry.names()}
    return root, scans


def alarm(seconds):
    def hung(signum, frame):
        raise TimeoutError(f"no answer within {seconds} s: a hang")

    signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)


def test_fuzzed_recordings_are_built_or_refused_on_one_line(workspace, capsys):
    root, scans = workspace

    @fuzzing(EXAMPLES)
    @seed(SEED)
    @given(recordings())
    def check(case):
        lesson, name, content = case
        runs = root / "runs"
        path = place(runs, lesson, name, content)
        alarm(30)
        try:
            try:
                found = inputs.find_runs(lesson, [runs])
                inputs.check_recordings({lesson: found}, root / "cache.json")
                dry_run = None
            except RecordingError as error:
                dry_run = str(error)
            assert dry_run is None or "\n" not in dry_run
            replay = command("replay", str(path))
            promote = command("promote", str(path), "--recordings", str(root / "recordings"), "--dry-run")
            for code, out, err in (replay, promote):
                assert code in (0, 2, 3), (code, err)
                assert "Traceback" not in out + err and "unexpected error" not in err, err[:2000]
            if path.name.startswith("."):  # a hidden file is no run of the workflow (a temporary file)
                assert dry_run is None and found == {}
                dry_run = "hidden" if replay[0] == 2 else None
            if dry_run is not None:  # refused by the dry run: refused alike by the command line
                COUNTS["refused"] += 1
                refused_on_one_line(replay[0], replay[2], path)
                refused_on_one_line(promote[0], promote[2], path)
                return
            assert replay[0] == promote[0], (replay, promote)
            if replay[0] == 3:
                COUNTS["mismatch"] += 1
                assert len(replay[2].splitlines()) == 1 and "record the run again with: replaylab " in replay[2]
                return
            assert replay[0] == 0, replay
            COUNTS["accepted and built"] += 1
            folder = root / "build"
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            for name_ in ("scans.json", "exercises.json", "answers.json", "baselines.json"):
                shutil.copy(scans[lesson] / name_, folder / name_)
            build(path, folder)
        finally:
            signal.alarm(0)

    check()
    with capsys.disabled():
        print(f"\nfuzz: recordings, seed {SEED}, {EXAMPLES} examples: " + ", ".join(f"{v} {k}" for k, v in COUNTS.items()))
    assert sum(COUNTS.values()) == EXAMPLES
    assert min(COUNTS.values()) > 0  # each outcome was reached: the mutations are not all of one kind


# ---------------------------------------------------------------------------------------------
# Configurations


CONFIG = __import__("yaml").safe_load((ROOT / "config" / "config.yaml").read_text())
CONFIG_SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
CONFIG_VALUES = st.one_of(VALUE, RUN_NAMES, st.lists(st.sampled_from([*registry.names(), "astro"]), max_size=4),
                          st.sampled_from([float("nan"), float("inf"), -1, 0, 1e-300, 2**70, "results/live", True]))


@st.composite
def configurations(draw):
    config = json.loads(json.dumps(CONFIG))
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(sorted(config) + ["unknown"]))
        if draw(st.integers(0, 9)) == 0:
            config.pop(key, None)
        else:
            config[key] = draw(CONFIG_VALUES)
    return config


def test_fuzzed_configurations_are_usable_or_refused_on_one_line(capsys):
    counts = {"accepted": 0, "refused": 0}

    @fuzzing(CONFIG_EXAMPLES)
    @seed(SEED)
    @given(configurations())
    def check(config):
        try:
            configuration.check(config, "config/config.yaml", CONFIG_SCHEMA)
        except configuration.InputError as error:
            counts["refused"] += 1
            message = str(error)
            assert message.startswith("config/config.yaml: $") and "\n" not in printable(message), message
            return
        counts["accepted"] += 1
        # what the jobs then get is usable: a finite positive tolerance, lessons replaylab has,
        # and the file names a recording would be saved under
        assert math.isfinite(config["tolerance"]) and config["tolerance"] > 0
        assert set(config["lessons"]) <= set(registry.names()) and config["record_lesson"] in config["lessons"]
        for variant_name in registry.lesson(config["record_lesson"]).variants:
            name = f"{config['record_run']}-{variant_name}"
            assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}", name), name
        assert not re.search("[\x00-\x1f\x7f-\x9f]", config["model"])

    check()
    with capsys.disabled():
        print(f"\nfuzz: configurations, seed {SEED}, {CONFIG_EXAMPLES} examples: {counts['accepted']} accepted, {counts['refused']} refused")
    assert counts["accepted"] > 0 and counts["refused"] > 0


# ---------------------------------------------------------------------------------------------
# What an agent sends: the lines of a session, the requests of an MCP client (issue 25)

SESSION_EXAMPLES = 35 * SCALE
MCP_EXAMPLES = 20 * SCALE
VARIANTS = [(lesson, name) for lesson in registry.names() for name in registry.lesson(lesson).variants]
CALL_IDS = st.sampled_from(["1", "2", "a", "call-1", "\u202e", "x" * 300])


def specs_of(lesson, variant):
    return registry.lesson(lesson).variant(variant).allowlist().specs()


@st.composite
def fitting(draw, spec, clean=False):
    """A value a parameter's schema allows; unless `clean`, now and then one near its bounds (one
    past them, a fraction, a number as text) or text of any kind."""
    if "enum" in spec:
        return draw(st.sampled_from(spec["enum"]))
    if spec.get("type") == "array":
        return draw(st.lists(st.sampled_from(spec["items"]["enum"]), max_size=len(spec["items"]["enum"]), unique=True))
    if spec.get("type") == "string":
        return draw(st.text(max_size=30)) if clean else draw(st.one_of(TEXT, st.just("x" * (spec.get("maxLength", 10) + 1))))
    low, high = spec["minimum"], spec["maximum"]
    if spec["type"] == "integer":
        good = st.integers(low, high)
        return draw(good if clean else st.one_of(good, good, st.sampled_from([low - 1, high + 1, float(low), str(low)])))
    good = st.floats(low, high)
    return draw(good if clean else st.one_of(good, good, st.sampled_from([low - 1e-9, high * 2, float("nan"), str(low)])))


@st.composite
def arguments_for(draw, spec, clean=False):
    """A tool's arguments: its parameters, each drawn to fit its schema (`clean`), or else now and
    then anything, some left out, an unknown one added."""
    if not clean and draw(st.integers(0, 9)) == 0:
        return draw(VALUE)
    required = spec["parameters"].get("required", [])
    arguments = {}
    for key, parameter in spec["parameters"]["properties"].items():
        choice = draw(st.integers(0, 9))
        if choice == 0 and (not clean or key not in required):
            continue
        arguments[key] = draw(VALUE) if choice == 1 and not clean else draw(fitting(parameter, clean))
    if not clean and draw(st.integers(0, 9)) == 0:
        arguments[draw(TEXT)] = draw(VALUE)
    return arguments


@st.composite
def agent_calls(draw, specs, clean=False):
    """One call an agent may send: a tool of the lesson (the answer among them), its arguments
    fitting the schema (`clean`) or near it, or another name; in replaylab's shape or OpenAI's
    (arguments as JSON text)."""
    spec = draw(st.sampled_from(specs))
    name = spec["name"] if clean else draw(st.one_of(st.just(spec["name"]), st.just(spec["name"]), TEXT, VALUE))
    arguments = draw(arguments_for(spec, clean))
    ids = st.uuids().map(str) if clean else st.one_of(st.uuids().map(str), st.uuids().map(str), CALL_IDS)
    call = {"id": draw(ids), "name": name, "arguments": arguments}
    shape = draw(st.sampled_from(["ours", "openai"] if clean else ["ours"] * 6 + ["openai"] * 3 + ["no id", "junk"]))
    if shape == "openai":
        try:
            text = json.dumps(arguments, allow_nan=True)
        except ValueError:
            text = "{"
        text = text if clean else draw(st.sampled_from([text, text, "{"]))
        return {"id": call["id"], "type": "function", "function": {"name": name, "arguments": text}}
    if shape == "no id":
        del call["id"]
    if shape == "junk":
        call[draw(TEXT)] = draw(VALUE)
    return call


@st.composite
def session_lines(draw, specs):
    """The bytes of one line an agent types into a session."""
    kind = draw(st.sampled_from(["clean"] * 5 + ["message"] * 4 + ["raw", "blank", "value"]))
    if kind == "blank":
        return draw(st.sampled_from([b"", b" ", b"\t", b"\r"]))
    if kind == "raw":
        return draw(st.binary(max_size=40)).replace(b"\n", b" ")
    if kind == "value":
        data = draw(VALUE)
    elif kind == "clean":  # a message that fits every schema: it runs, and may answer
        data = {"text": draw(st.text(max_size=20)), "tool_calls": draw(st.lists(agent_calls(specs, clean=True), min_size=1, max_size=4))}
    else:
        data = {"text": draw(st.one_of(st.text(max_size=20), TEXT)), "tool_calls": draw(st.lists(agent_calls(specs), max_size=6))}
        if draw(st.integers(0, 9)) == 0:
            data.pop(draw(st.sampled_from(["text", "tool_calls"])))
    return serialized(draw, data).replace(b"\n", b" ")


@st.composite
def sessions(draw):
    lesson, variant = draw(st.sampled_from(VARIANTS))
    lines = draw(st.lists(session_lines(specs_of(lesson, variant)), min_size=1, max_size=8))
    return lesson, variant, lines


def with_stdin(data, *argv):
    """(exit code, stdout, stderr) of `replaylab *argv` run in this process, `data` on its stdin."""
    before = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    try:
        return command(*argv)
    finally:
        sys.stdin = before


def test_fuzzed_session_lines_each_get_one_answer_and_the_run_replays(tmp_path, capsys):
    counts = {"sessions": 0, "lines": 0, "refused lines": 0, "calls": 0, "answered runs": 0}
    made = iter(range(10**9))

    @fuzzing(SESSION_EXAMPLES)
    @seed(SEED)
    @given(sessions())
    def check(case):
        lesson, variant, lines = case
        path = tmp_path / lesson / f"s{next(made)}.json"
        alarm(60)
        try:
            code, out, err = with_stdin(b"\n".join(lines) + b"\n", "session", lesson, "--variant", variant, "--out", str(path))
        finally:
            signal.alarm(0)
        assert code == 0 and "Traceback" not in err and len(err.splitlines()) == 1, (code, err[:2000])
        header, *answers = [json.loads(line) for line in out.split("\n")[:-1]]
        assert header["recording"] == str(path)
        ended = [i for i, answer in enumerate(answers) if "end" in answer]
        assert ended == [len(answers) - 1]  # one end, on the last line
        read = len(answers) - (1 if set(answers[-1]) == {"end"} else 0)  # the end of input has a line of its own
        assert read <= len(lines) and (read == len(lines) or "end" in answers[read - 1]), (read, len(lines))
        for number, answer in enumerate(answers[:read], start=1):  # one answer per line, in order
            assert answer.get("line", number) == number and ("error" in answer) != ("results" in answer), answer
        run = inputs.check_recording(path)  # what the workflow's checks accept
        steps = [a for a in answers if "results" in a]
        assert len(run.transcript.steps) == len(steps)
        assert [[r["ok"] for r in a["results"]] for a in steps] == [[r.ok for r in s.results] for s in run.transcript.steps]
        replayed = command("replay", str(path))
        assert replayed[0] == 0, replayed[2][:2000]
        counts["sessions"] += 1
        counts["lines"] += read
        counts["refused lines"] += read - len(steps)
        counts["calls"] += sum(len(s.results) for s in run.transcript.steps)
        counts["answered runs"] += run.ended == "finished: the agent called answer, which ends the run"

    check()
    with capsys.disabled():
        print(f"\nfuzz: session lines, seed {SEED}, {SESSION_EXAMPLES} examples: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    assert counts["sessions"] == SESSION_EXAMPLES and min(counts.values()) > 0


@st.composite
def mcp_lines(draw, specs):
    """(bytes of one line an MCP client sends, its id or None): a tools/call of a tool of the
    lesson (the answer among them) with arguments near its schema, another request, or a broken line."""
    request_id = draw(st.integers(1, 10**6))
    kind = draw(st.sampled_from(["clean"] * 4 + ["call"] * 4 + ["other", "raw", "value", "digits"]))
    if kind == "raw":
        return draw(st.binary(min_size=1, max_size=40)).replace(b"\n", b" ") + b"x", None
    if kind == "value":
        return serialized(draw, draw(VALUE)).replace(b"\n", b" ") + b" ", None
    if kind == "other":
        data = {"jsonrpc": "2.0", "id": request_id, "method": draw(st.sampled_from(["tools/list", "prompts/list", "ping", "resources/list"]))}
    else:
        spec = draw(st.sampled_from(specs))
        clean = kind == "clean"  # a call that fits its schema: it runs, and may answer
        name = spec["name"] if clean else draw(st.one_of(st.just(spec["name"]), st.just(spec["name"]), TEXT))
        data = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                "params": {"name": name, "arguments": draw(arguments_for(spec, clean))}}
    line = serialized(draw, data).replace(b"\n", b" ")
    if kind == "digits":  # an id, or an argument, of more digits than a recording reads
        line = line.replace(b'"id": ', b'"id": ' + b"9" * draw(st.sampled_from([1001, 5000])) + b", \"x\": ", 1)
        return line, None
    return line, request_id


@pytest.mark.slow  # servers over stdio
def test_fuzzed_mcp_requests_each_get_one_answer_and_the_runs_replay(tmp_path, capsys):
    """Real `replaylab mcp` servers, fed one fuzzed line at a time: a request is answered once, with
    its id (an error with id null when the line cannot be read); after each line a ping shows that
    nothing else came. One server per variant; after 30 examples, or a few lines after its run
    ended, it is closed: it says one true line, and its recording (if a call was recorded) replays."""
    from helpers.mcp import RawServer

    counts = {"lines": 0, "answered with the id": 0, "errors without an id": 0, "servers": 0, "recordings": 0}
    servers = {}  # one server per variant at a time
    names = iter(range(10**9))

    def close(key):
        server = servers.pop(key)
        code, err = server.close()
        assert code == 0 and "Traceback" not in err and len(err.splitlines()) == 2, err[:2000]
        path = tmp_path / "results" / "live" / key[0] / f"{server.run}.json"
        counts["servers"] += 1
        if path.exists():
            assert "wrote" in err.splitlines()[1]
            replayed = command("replay", str(path))
            assert replayed[0] == 0, replayed[2][:2000]
            counts["recordings"] += 1
        else:
            assert "no call was made" in err.splitlines()[1], err

    @fuzzing(MCP_EXAMPLES)
    @seed(SEED)
    @given(st.sampled_from(VARIANTS).flatmap(lambda lv: st.tuples(st.just(lv), st.lists(mcp_lines(specs_of(*lv)), min_size=1, max_size=4))))
    def check(case):
        key, lines = case
        if key in servers and (servers[key].examples >= 30 or servers[key].ended >= 3):
            close(key)
        if key not in servers:
            server = servers[key] = RawServer(tmp_path, key[0], "--variant", key[1], "--run", f"m{next(names)}")
            server.run = server.process.args[-1]
            server.examples = server.ended = 0
            server.initialize("fuzz")
        server = servers[key]
        server.examples += 1
        for line, request_id in lines:
            server.send(line)
            server.send({"jsonrpc": "2.0", "id": "ping", "method": "ping"})  # answered after the line's answer, or with it
            got, pinged = [], False
            while not pinged or (request_id is not None and not got):
                answer = server.read(timeout=30)
                assert answer is not None and answer.get("jsonrpc") == "2.0", answer
                if answer.get("id") == "ping" and not pinged:
                    pinged = True
                else:
                    got.append(answer)
            assert len(got) <= 1, got  # nothing more than one answer for that line
            for answer in got:
                if answer["id"] is None:  # the line could not be read
                    assert answer["error"]["code"] in (-32700, -32600), answer
                    counts["errors without an id"] += 1
                else:
                    assert request_id is None or answer["id"] == request_id, (line[:200], answer)
                    assert request_id is not None or "error" in answer, (line[:200], answer)
                    counts["answered with the id"] += 1
                    server.ended += "run has ended" in json.dumps(answer)
            assert got or request_id is None, line[:200]
            counts["lines"] += 1

    try:
        check()
    finally:
        for key in list(servers):
            close(key)
    with capsys.disabled():
        print(f"\nfuzz: MCP requests, seed {SEED}, {MCP_EXAMPLES} examples: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    assert min(counts.values()) > 0
