"""Issue 39: a recording read once and checked once, and a batch's transcripts in one file.

The one pass of checks (`recording._checked_at_once`) must accept exactly what the checks one by
one accept (`validate(parse_json(...))`), with the same data, and leave every other text to them,
so that a damaged recording is still its one line; a replay's transcript made from the data read
(`pipeline.replayed_data`) must be what the writer makes of the replayed run (`to_data`); and the
batch's file of transcripts must hold each run at the place its verdict names, written whole or
not at all.
"""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import RECORDINGS, ROOT
from helpers.bad import BAD, VALID, changed, deep_arguments
from replaylab import pipeline
from replaylab.agents import recording
from replaylab.agents.recording import RecordingError
from replaylab.agents.replay import ReplayMismatch
from replaylab.generate import generate
from replaylab.inputs import DamagedResult

TOLERANCE = 1e-6


def one_by_one(text):
    """The outcome of the checks one by one: the data, or the error's line."""
    try:
        return recording.validate(recording.parse_json(text, "f.json"), "f.json")
    except RecordingError as error:
        return str(error)


def outcome(text):
    try:
        return recording.parse(text, "f.json")
    except RecordingError as error:
        return str(error)


def with_arguments(value):
    """The valid recording, its first call's arguments replaced by the JSON text `value`."""
    return changed(lambda d: d["steps"][0]["tool_calls"][0].__setitem__("arguments", "@@")).replace('"@@"', value)


# Texts that each break one check, and must be left to the checks one by one.
BROKEN = {
    **{name: data.decode("utf-8") for name, (data, _) in BAD.items() if name not in ("not-utf8", "encoded-surrogate", "too-large")},
    "nan": with_arguments('{"angle": NaN}'),
    "infinity": with_arguments('{"angle": -Infinity}'),
    "overflowing-float": with_arguments('{"angle": 1e999}'),
    "integer-1001-digits": with_arguments('{"angle": ' + "9" * 1001 + "}"),
    "nested-60": deep_arguments(60).decode(),
    "key-twice-deep": with_arguments('{"a": 1, "a": 2}'),
    "raw-surrogate": VALID.replace('"text": "', '"text": "\ud800', 1),
    "surrogate-escape-in-a-key": with_arguments('{"\\udc00": 1}'),
    "schema": changed(lambda d: d.__setitem__("finished", "no")),
    "call-id": changed(lambda d: d["steps"][0]["results"][0].__setitem__("call_id", "zz")),
    "results-count": changed(lambda d: d["steps"][0]["results"].pop()),
    "not-an-object": "[1, 2]",
    "not-json": VALID[:-20],
}

# Texts that pass, some near a limit or with an escape the one pass cannot vouch for.
FINE = {
    "reference": VALID,
    "nested-59": deep_arguments(59).decode(),
    "integer-1000-digits": with_arguments('{"angle": -' + "9" * 1000 + "}"),
    "a-pair-of-surrogates": VALID.replace('"text": "', '"text": "\\ud83d\\ude00', 1),
    "a-character-below-the-surrogates": VALID.replace('"text": "', '"text": "\\ud7ff', 1),
    "not-ascii": changed(lambda d: d.__setitem__("task", "Winkel θ ≥ 30°, 𝔘")),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_text_that_breaks_a_check_is_left_to_the_checks_one_by_one(name):
    text = BROKEN[name]
    expected = one_by_one(text)
    assert isinstance(expected, str), f"{name} is not broken"
    assert recording._checked_at_once(text) is None
    assert outcome(text) == expected


@pytest.mark.parametrize("name", sorted(FINE))
def test_a_text_that_passes_gives_the_same_data_either_way(name):
    text = FINE[name]
    expected = one_by_one(text)
    assert isinstance(expected, dict), expected
    assert outcome(text) == expected
    assert json.dumps(outcome(text)) == json.dumps(expected)  # key order too


def test_the_one_pass_vouches_for_plain_recordings():
    """The reference recordings and generated runs need no second look (else nothing is saved)."""
    for path in sorted(RECORDINGS.glob("*/*.json")):
        assert recording._checked_at_once(path.read_text(encoding="utf-8")) is not None, path
    assert recording._checked_at_once(FINE["a-pair-of-surrogates"]) is None  # an escape: looked at one by one


def recordings_of_every_kind(tmp_path):
    found = sorted(RECORDINGS.glob("*/*.json")) + sorted((ROOT / "tests" / "data" / "format1").rglob("*.json"))
    for lesson in ("hunter", "projectile", "review", "pendulum"):
        found += generate(lesson, 3, tmp_path / "generated")
    return found


def test_a_transcript_made_from_the_data_read_is_what_the_writer_makes(tmp_path):
    """The transcript's line (the recording's own text with `replayed` added, when every result was
    recomputed exactly; else `replayed_data`) holds `to_data` of the replayed run: a reference,
    format 1, and runs generated for every lesson."""
    paths = recordings_of_every_kind(tmp_path)
    for path in paths:
        run, _, line = pipeline.Replayer(None, TOLERANCE).replayed(path)
        assert line.endswith("}\n") and line.count("\n") == 1, path
        assert json.dumps(json.loads(line), ensure_ascii=False) == json.dumps(recording.to_data(run), ensure_ascii=False), path
        if path.is_relative_to(tmp_path):  # generated by this code: recomputed exactly, its own text is the line
            assert line == pipeline.line_of_recording(path.read_text(encoding="utf-8"), run.replayed), path
    assert len(paths) > 15


def test_a_result_recomputed_within_the_tolerance_is_the_recomputed_one_in_the_transcript(tmp_path):
    """A recording whose result differs from the recomputed one within the tolerance replays, and
    its transcript holds the recomputed value, not the recorded one."""
    source = generate("hunter", 1, tmp_path / "generated")[0]
    data = json.loads(source.read_text(encoding="utf-8"))
    content = data["steps"][0]["results"][0]["content"]
    key = "max_energy_drift"
    recomputed = content[key]
    content[key] = recomputed * (1 + 1e-9)
    source.write_text(json.dumps(data, indent=2), encoding="utf-8")
    run, made, line = pipeline.Replayer("hunter", TOLERANCE).replayed(source)
    assert json.loads(line)["steps"][0]["results"][0]["content"][key] == recomputed != content[key]
    assert json.loads(line) == made == recording.to_data(run)


@pytest.mark.parametrize("recorded, now, same", [
    (1.0, 1.0, True), (1.0, 1, False), (0.0, -0.0, False), (-0.0, -0.0, True), (True, 1, False),
    ("a", "a", True), ([1.0, "x"], [1.0, "x"], True), ([1.0], [1], False), ({"a": 1.0}, {"a": 1.0}, True),
    ({"a": 1.0}, {"b": 1.0}, False), (None, None, True), (0.1, 0.1000000000000001, False),
])
def test_only_a_result_recomputed_type_for_type_keeps_the_recordings_text(recorded, now, same):
    assert pipeline._identical(recorded, now) is same


def test_a_recording_laid_out_otherwise_gives_a_transcript_line_of_the_same_data(tmp_path):
    """Line breaks of any kind between a recording's values (CR LF, tabs, one line) give one line."""
    source = RECORDINGS / "hunter" / "velocity-verlet.json"
    data = json.loads(source.read_text(encoding="utf-8"))
    texts = {"crlf": json.dumps(data, indent="\t").replace("\n", "\r\n") + "\r\n \t",
             "one-line": json.dumps(data), "cr": json.dumps(data, indent=1).replace("\n", "\r")}
    for name, text in texts.items():
        path = tmp_path / name / "hunter" / "velocity-verlet.json"
        path.parent.mkdir(parents=True)
        path.write_bytes(text.encode("utf-8"))
        run, _, line = pipeline.Replayer("hunter", TOLERANCE).replayed(path)
        assert "\r" not in line and line.count("\n") == 1 and line.endswith("}\n"), name
        assert json.loads(line) == recording.to_data(run), name


def replay(tmp_path, lesson, paths):
    transcripts, judged = tmp_path / "transcripts" / "batch0of1.jsonl", tmp_path / "judged" / "batch0of1.json"
    pipeline.replay_batch(pipeline.Replay(lesson, [str(p) for p in paths], transcripts, judged, TOLERANCE))
    return transcripts, json.loads(judged.read_text(encoding="utf-8"))


def test_a_batch_writes_one_file_with_each_run_where_its_verdict_says(tmp_path):
    paths = sorted((RECORDINGS / "hunter").glob("*.json")) + generate("hunter", 5, tmp_path / "generated")
    archive, judged = replay(tmp_path / "out", "hunter", paths)
    assert [p.name for p in archive.parent.iterdir()] == [archive.name]  # no temporary file left
    lines = archive.read_bytes().splitlines(keepends=True)
    assert len(lines) == len(paths) == len(judged["runs"])
    for path in paths:
        offset, length = judged["runs"][path.stem]["transcript"]
        replayed, text = pipeline.read_transcript(archive, path.stem, [offset, length])
        assert text.encode() == archive.read_bytes()[offset:offset + length]
        assert replayed.run == path.stem and replayed.replayed == {"from": str(path), "tolerance": TOLERANCE}
        assert replayed.transcript == recording.load(path).transcript  # recomputed exactly here
        assert archive.read_bytes()[offset:offset + length].endswith(b"\n")
    assert [d["run"] for d in pipeline.archived_transcripts(archive)] == [p.stem for p in paths]


def test_a_mismatch_names_its_run_and_writes_neither_file(tmp_path):
    good = generate("hunter", 3, tmp_path / "generated")
    forged = tmp_path / "forged" / "hunter" / "forged.json"
    forged.parent.mkdir(parents=True)
    data = json.loads(good[0].read_text(encoding="utf-8"))
    data["run"] = "forged"
    data["steps"][0]["results"][0]["content"]["max_energy_drift"] *= 1.01
    forged.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ReplayMismatch) as caught:
        replay(tmp_path / "out", "hunter", [*good, forged])
    assert str(caught.value).startswith(f"{forged}: message 1, call 1, tool oscillator_energy_drift: max_energy_drift was ")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*"))


def test_a_damaged_recording_in_a_batch_is_its_one_line(tmp_path):
    good = generate("hunter", 2, tmp_path / "generated")
    damaged = tmp_path / "generated" / "hunter" / "damaged.json"
    damaged.write_text(BROKEN["key-twice-deep"].replace('"symplectic-euler"', '"damaged"'), encoding="utf-8")
    with pytest.raises(RecordingError) as caught:
        replay(tmp_path / "out", "hunter", [*good, damaged])
    assert str(caught.value) == f"{damaged}: $.steps[0].tool_calls[0].arguments: the key 'a' appears twice (the keys of a JSON object are unique)"
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*"))


def test_a_damaged_file_of_transcripts_is_one_line_that_says_how_to_rebuild_it(tmp_path):
    archive, judged = replay(tmp_path / "results" / "hunter", "hunter", sorted((RECORDINGS / "hunter").glob("*.json")))
    place = judged["runs"]["velocity-verlet"]["transcript"]
    archive.write_bytes(archive.read_bytes().replace(b'"velocity-verlet"', b'"velocity-verlet!"', 1))
    for where, expected in [
        (place, "$.run: 'velocity-verlet!' does not match"),
        ([place[0] + 1, place[1]], "not valid JSON: "),
        ("nowhere", "its place in the file is not the one the build wrote ('nowhere')"),
    ]:
        with pytest.raises(DamagedResult) as caught:
            pipeline.read_transcript(archive, "velocity-verlet", where)
        line = str(caught.value)
        assert line.startswith(f"{archive}: the transcript of velocity-verlet: {expected}") and "\n" not in line, line
        assert line.endswith("delete it, or run with --forcerun replay"), line
    other = judged["runs"]["symplectic-euler"]["transcript"]
    with pytest.raises(DamagedResult, match="the line there is the transcript of 'symplectic-euler'"):
        pipeline.read_transcript(archive, "velocity-verlet", other)
    archive.unlink()
    with pytest.raises(DamagedResult, match="the file is missing"):
        pipeline.read_transcript(archive, "symplectic-euler", other)


def test_a_run_twice_in_a_batch_is_refused(tmp_path):
    path = RECORDINGS / "hunter" / "velocity-verlet.json"
    with pytest.raises(RecordingError, match="is also the name of another run of the batch"):
        replay(tmp_path, "hunter", [path, path])


def test_the_pages_link_a_file_of_each_transcript_they_show_or_list(tmp_path):
    """What a page links stays small: the runs shown and listed each have their transcript in the
    run pages' folder (runs/<run>.json, the line of its batch's file), never the batch's file."""
    from replaylab.build import build_lesson

    paths = sorted((RECORDINGS / "hunter").glob("*.json")) + generate("hunter", 20, tmp_path / "generated")
    folder = tmp_path / "results" / "hunter"
    build_lesson("hunter", paths, folder, TOLERANCE, progress=lambda text: None)
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    linked = {name: run["file"] for name, run in results["runs"].items()} | {e["run"]: e["file"] for e in results["listed"]}
    assert len(results["runs"]) == 12 and len(results["listed"]) == len(paths) - 12
    lines = {json.loads(line)["run"]: line for line in (folder / "transcripts" / "batch0of1.jsonl").read_text().splitlines()}
    for name, file in linked.items():
        assert file == f"runs/{name}.json"
        assert (folder / file).read_text(encoding="utf-8") == lines[name] + "\n"
    assert ".jsonl" not in (folder / "index.md").read_text() + "".join(p.read_text() for p in (folder / "runs").glob("*.md"))


def test_the_optional_fields_are_in_a_transcript_as_the_writer_puts_them(tmp_path):
    """A recording with the optional fields a replay keeps (notes, partial, a call held as its
    JSON text) gives the transcript `to_data` gives, byte for byte."""
    data = json.loads((RECORDINGS / "hunter" / "velocity-verlet.json").read_text(encoding="utf-8"))
    data["notes"] = [{"where": "$.steps[0].text", "what": "cut at 10 characters"}]
    data["partial"] = {"next": 3, "why": "the provider's server was unreachable"}
    call = data["steps"][0]["tool_calls"][0]
    call["arguments"], call["as_json"] = json.dumps(call["arguments"], ensure_ascii=True), ["arguments"]
    path = tmp_path / "hunter" / "velocity-verlet.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data), encoding="utf-8")
    run, made, _ = pipeline.Replayer("hunter", TOLERANCE).replayed(path)
    assert made["notes"] == data["notes"] and made["partial"] == data["partial"]
    assert json.dumps(made) == json.dumps(recording.to_data(run))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(data=st.dictionaries(st.text(), JSON_VALUES, min_size=1, max_size=6).filter(lambda d: "replayed" not in d),
       indent=st.sampled_from([None, 0, 1, 2, "\t"]), ascii_only=st.booleans(), crlf=st.booleans())
def test_any_json_object_laid_out_any_way_is_one_line_of_the_same_data(data, indent, ascii_only, crlf):
    """The claim `line_of_recording` rests on: a JSON text holds a line break only between values
    (strings with line breaks, U+2028 and the like included), whatever its layout."""
    text = json.dumps(data, indent=indent, ensure_ascii=ascii_only) + "\n"
    if crlf:
        text = text.replace("\n", "\r\n")
    replayed = {"from": "recordings/hunter/x.json", "tolerance": TOLERANCE}
    line = pipeline.line_of_recording(text, replayed)
    assert line.endswith("}\n") and line.count("\n") == 1 and "\r" not in line
    assert json.loads(line) == {**data, "replayed": replayed}


def test_a_recording_in_a_folder_whose_name_a_transcript_cannot_hold_is_one_line(tmp_path):
    """The transcript names the recording it was replayed from (`replayed.from`, printed, so without
    control characters): a folder named with a tab is refused on one line naming the field."""
    folder = tmp_path / "a\tb" / "hunter"
    folder.mkdir(parents=True)
    path = folder / "velocity-verlet.json"
    path.write_bytes((RECORDINGS / "hunter" / "velocity-verlet.json").read_bytes())
    with pytest.raises(RecordingError) as caught:
        pipeline.Replayer("hunter", TOLERANCE).replayed(path)
    assert str(caught.value) == (f"{tmp_path}/a\\x09b/hunter/velocity-verlet.json: its transcript: $.replayed.from: "
                                 f"{recording.short(str(path))} holds the control character \\x09 at position {len(str(tmp_path)) + 2}: "
                                 "this field is printed, so it may hold none")
