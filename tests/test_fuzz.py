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

The seed and the number of examples are fixed (SEED, EXAMPLES) and printed, so that a failure in
CI is the same failure on a developer's machine. Hypothesis also draws, now and then, a constant
it found in the code of the modules imported so far (replaylab's, not the tests'): every module of
replaylab is imported first (`same_constants`), so that the examples do not depend on which
tests ran before.
"""

import contextlib
import io
import json
import math
import os
import pkgutil
import re
import shutil
import signal

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from helpers import RECORDINGS, ROOT
from helpers.bad import NOT_A_FILE, make_not_a_file
import replaylab
from replaylab import cli, configuration, inputs, pipeline
from replaylab.agents.recording import RecordingError, printable
from replaylab.lessons import registry
from replaylab.render import Render, collect_results, write_tables

SEED = 20261130
EXAMPLES = int(os.environ.get("REPLAYLAB_FUZZ_EXAMPLES", "2000"))
CONFIG_EXAMPLES = 500
SOURCES = sorted(RECORDINGS.glob("*/*.json"))
TEXTS = {path: path.read_text(encoding="utf-8") for path in SOURCES}
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=False,
                suppress_health_check=list(HealthCheck))
COUNTS = {"accepted and built": 0, "refused": 0, "mismatch": 0}


@pytest.fixture(scope="module", autouse=True)
def same_constants():
    """Every module of replaylab imported (but its lessons' tests and the command's __main__),
    whatever ran before: the constants Hypothesis finds in the imported code are then the same in
    every run."""
    for module in pkgutil.walk_packages(replaylab.__path__, "replaylab."):
        if ".tests" not in module.name and not module.name.endswith("__main__"):
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
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    scans = {}
    for lesson in registry.names():  # computed once: they never depend on a run
        folder = root / "scans" / lesson
        folder.mkdir(parents=True)
        pipeline.scan_lesson(pipeline.Scan(lesson, folder / "scans.json", folder / "exercises.json"))
        scans[lesson] = folder
    return root, scans


def alarm(seconds):
    def hung(signum, frame):
        raise TimeoutError(f"no answer within {seconds} s: a hang")

    signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)


def test_fuzzed_recordings_are_built_or_refused_on_one_line(workspace, capsys):
    root, scans = workspace

    @FUZZ
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
            for name_ in ("scans.json", "exercises.json"):
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

    @settings(max_examples=CONFIG_EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
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
