"""The lesson contract: every lesson of the registry declares itself the same way and goes through
every stage like the others (generate, the workflow, promote, the audit), an unknown lesson is one
clear line everywhere, and no source file outside a lesson's package, the registry and the
configuration names a lesson."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helpers import ROOT, cli, environment, in_process
from helpers.audit import AUDITED_PARTS, audited_files, package_folder
from helpers.workflow import configure, copy_project, first_error_line, prepared_copy, snakemake
from replaylab.agents import recording as recording_io
from replaylab.agents.tools import ANSWER
from replaylab.lessons import JUDGED, PARTS, Lesson, UnknownLesson, Variant, registry

LESSONS = registry.names()
UNKNOWN = f"unknown lesson 'astronomy'; the lessons are: {', '.join(LESSONS)}"
GENERATED = 2  # runs (or groups of runs) per lesson


# ---------------------------------------------------------------------------------------------
# Declared once, complete


@pytest.mark.parametrize("name", LESSONS)
def test_every_lesson_declares_itself_and_has_every_part(name):
    lesson = registry.lesson(name)
    assert isinstance(lesson, Lesson) and lesson.name == name
    assert lesson.package == f"{registry.__package__}.{name}"
    assert lesson.judged in JUDGED and len(lesson.unit) == 2 and all(lesson.unit)
    for part, attributes in PARTS.items():
        module = lesson.part(part)
        missing = [a for a in attributes if not hasattr(module, a)]
        assert not missing, f"{module.__name__} lacks {', '.join(missing)}"
    assert lesson.variants and all(isinstance(v, Variant) and v.name == key for key, v in lesson.variants.items())
    assert lesson.figures and all(callable(draw) for draw in lesson.figures.values())
    assert lesson.table_names and isinstance(lesson.right_answer, str)
    for v in lesson.variants.values():  # every run ends with the variant's typed answer, in its allowlist
        assert v.answer.name == ANSWER and v.answer.ends_run and v.allowlist().tools[ANSWER] is v.answer
    assert "careless" in lesson.part("agent").STRATEGIES  # careful experiments, a careless answer
    schema = json.loads((package_folder(lesson) / "results.schema.json").read_text(encoding="utf-8"))
    assert {"answer", "group", "verdict", "scans", "exercises"} <= set(schema["$defs"])
    assert (schema["$defs"]["group"] is False) == (lesson.judged == "run")  # group decisions only where it decides groups


def test_the_configuration_builds_every_lesson_of_the_registry():
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    assert tuple(config["lessons"]) == LESSONS


def test_a_lesson_part_outside_the_contract_is_refused():
    with pytest.raises(ValueError, match="'os' is not a part of a lesson"):
        registry.lesson(LESSONS[0]).part("os")


# ---------------------------------------------------------------------------------------------
# An unknown lesson: one line, everywhere


def test_an_unknown_lesson_is_one_line_in_the_library():
    for name in ("astronomy", "", "../hunter", None):
        with pytest.raises(UnknownLesson):
            registry.lesson(name)
    with pytest.raises(UnknownLesson) as error:
        registry.lesson("astronomy")
    assert str(error.value) == UNKNOWN


@pytest.mark.parametrize(
    "args",
    [("tools", "astronomy"), ("call", "astronomy", "t", "{}"), ("session", "astronomy"), ("record", "astronomy"),
     ("generate", "astronomy", "--count", "1", "--out", "x"), ("build", "astronomy")],
    ids=lambda args: args[0],
)
def test_an_unknown_lesson_is_one_line_on_the_command_line(args, tmp_path):
    out = in_process(*args, cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr == f"replaylab: {UNKNOWN}\n"
    assert list(tmp_path.iterdir()) == []


def test_a_recording_of_an_unknown_lesson_names_its_file_and_field(tmp_path):
    data = json.loads(next((ROOT / "recordings" / LESSONS[0]).glob("*.json")).read_text())
    data["lesson"] = "astronomy"
    path = tmp_path / f"{data['run']}.json"
    path.write_text(json.dumps(data))
    for args in (("replay", path), ("promote", path, "--recordings", tmp_path / "recordings")):
        out = in_process(*args)
        assert out.returncode == 2, out.stderr
        assert out.stderr == f"replaylab: {path}: $.lesson: {UNKNOWN}\n"
    assert not (tmp_path / "recordings").exists()


@pytest.mark.workflow
def test_an_unknown_lesson_in_the_configuration_stops_the_dry_run(tmp_path):
    copy = copy_project(tmp_path / "project")
    configure(copy, lessons=[LESSONS[0], "astronomy"])
    result = snakemake(copy, "-n", check=False)
    assert result.returncode != 0
    assert first_error_line(result) == (
        f"config/config.yaml: $.lessons[1]: 'astronomy' is not a lesson of replaylab; the lessons are: {', '.join(LESSONS)}"
    )


# ---------------------------------------------------------------------------------------------
# Every lesson of the registry through generate, the workflow, promote and the audit


@pytest.fixture(scope="module")
def generated(prepared, tmp_path_factory):
    """A copy of the project with scripted runs of every lesson beside the committed ones, built (a
    copy of `prepared`, tests/conftest.py: what reads no run, each lesson's answers, baselines and
    scans, is up to date; every run is replayed, judged and shown)."""
    copy = prepared_copy(prepared, tmp_path_factory.mktemp("contract") / "project", batch_size=50)
    for name in LESSONS:
        out = in_process("generate", name, "--count", GENERATED, "--out", copy / "generated")
        assert out.returncode == 0, out.stderr
    configure(copy, run_folders=["generated"])
    snakemake(copy, "--cores", "2")
    return copy


@pytest.mark.workflow
@pytest.mark.slow  # a Snakemake build of its own (`generated`: one worker makes it, tests/conftest.py)
@pytest.mark.parametrize("name", LESSONS)
def test_every_lesson_goes_through_generate_and_the_workflow(generated, name):
    lesson = registry.lesson(name)
    runs = sorted(p.stem for p in (generated / "generated" / name).glob("*.json"))
    assert len(runs) == GENERATED * (len(lesson.variants) if lesson.judged == "group" else 1)
    folder = generated / "results" / name
    results = json.loads((folder / "results.json").read_text())
    assert set(runs) <= set(results["runs"])
    assert sum(row["runs"] for row in results["scorecard"]) == len(results["verdicts"])
    assert sorted(p.stem for p in (folder / "figures").glob("*.png")) == sorted(lesson.figures)
    assert sorted(p.stem for p in (folder / "tables").glob("*.csv")) == sorted(lesson.table_names)
    assert (folder / "index.md").read_text().startswith(f"# {lesson.heading}\n") and (folder / "index.html").is_file()
    assert f"## [{lesson.heading}]({name}/index.md)" in (generated / "results" / "index.md").read_text()


@pytest.mark.workflow
@pytest.mark.slow  # a Snakemake build of its own (`generated`: one worker makes it, tests/conftest.py)
@pytest.mark.parametrize("name", LESSONS)
def test_every_lesson_goes_through_promote(generated, name, tmp_path):
    lesson = registry.lesson(name)
    found = sorted((generated / "generated" / name).glob("*.json"))[0]
    source = tmp_path / "live" / name / found.name  # promote moves it: the copy's runs stay
    source.parent.mkdir(parents=True)
    shutil.copy(found, source)
    recordings = tmp_path / "recordings"
    recorded, verdict = source.read_bytes(), lesson.verdict_line(recording_io.load(source))
    out = in_process("promote", source, "--recordings", recordings)
    assert out.returncode == 0, out.stderr
    assert f"  verdict: {verdict}" in out.stdout.splitlines()
    assert (recordings / name / source.name).read_bytes() == recorded and not source.exists()  # moved


@pytest.mark.parametrize("name", LESSONS)
def test_every_lesson_is_audited(name):
    folder = package_folder(registry.lesson(name))
    assert {folder / f"{part}.py" for part in AUDITED_PARTS} <= set(audited_files())


# ---------------------------------------------------------------------------------------------
# Nothing outside a lesson's package, the registry and the configuration names a lesson


def lesson_names_in(text, names=LESSONS):
    """The lesson names spelled in a text, also inside identifiers and paths (hunter_page,
    lessons.hunter, results/hunter/), not inside longer words (reviewer)."""
    return sorted({n for n in names if re.search(rf"(?<![A-Za-z]){re.escape(n)}(?![A-Za-z])", text)})


def source_files():
    """The project's source: the library, the rule scripts, the workflow and its Snakefile."""
    found = [ROOT / "Snakefile", *(ROOT / "scripts").rglob("*.py")]
    found += [p for folder in ("src", "workflow") for p in (ROOT / folder).rglob("*") if p.is_file()]
    return sorted(p for p in found if "__pycache__" not in p.parts and ".egg-info" not in str(p))


REGISTRY = Path(registry.__file__).resolve()


def allowed_names(path):
    """The lesson names a file may spell: its own lesson's, inside the package; all, in the registry."""
    if path.resolve() == REGISTRY:
        return set(LESSONS)
    return {name for name in LESSONS if package_folder(registry.lesson(name)) in path.parents}


def test_no_source_file_outside_a_lessons_package_and_the_registry_names_a_lesson():
    files = source_files()
    assert len(files) > 60 and ROOT / "workflow" / "rules" / "common.smk" in files
    found = {}
    for path in files:
        spelled = set(lesson_names_in(path.read_text(encoding="utf-8", errors="replace"))) - allowed_names(path)
        if spelled:
            found[str(path.relative_to(ROOT))] = sorted(spelled)
    assert found == {}


def test_the_name_check_finds_names_in_code_paths_and_words():
    hunter, review = LESSONS[1], LESSONS[2]
    assert lesson_names_in(f'if lesson == "{hunter}":') == [hunter]
    assert lesson_names_in(f"from replaylab.lessons.{hunter} import page as {hunter}_page") == [hunter]
    assert lesson_names_in(f"results/{review}/index.md") == [review]
    assert lesson_names_in(f"the {review}ers, {hunter}s") == []
    assert allowed_names(REGISTRY) == set(LESSONS)
    own = package_folder(registry.lesson(hunter)) / "judge.py"
    assert allowed_names(own) == {hunter}
    assert allowed_names(ROOT / "src" / "replaylab" / "pipeline.py") == set()


# ---------------------------------------------------------------------------------------------
# A new lesson, added with exactly the files docs/adding-a-lesson.md lists


TOY = ROOT / "tests" / "data" / "toy-lesson"  # a lesson `toy`, as a teacher would write one


def readme_lesson_files(name):
    """The files a new lesson needs, as docs/adding-a-lesson.md's table lists them: the package's
    files (paths relative to the package) and the other files of the project."""
    section = (ROOT / "docs" / "adding-a-lesson.md").read_text(encoding="utf-8")
    cells = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    listed = [path.replace("<name>", name) for cell in cells for path in re.findall(r"`([^`]+)`", cell)]
    package = f"src/replaylab/lessons/{name}/"
    outside = {p for p in listed if p == "README.md" or ("/" in p and not p.startswith((package, "tests/")))}
    inside = {p.removeprefix(package) for p in listed if p not in outside}
    return inside, outside


def tree(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


@pytest.mark.workflow
@pytest.mark.slow  # a Snakemake build of its own, and the tests in a copy
def test_a_new_lesson_needs_the_files_the_readme_lists_and_no_other(tmp_path):
    inside, outside = readme_lesson_files("toy")
    assert set(tree(TOY)) == inside, "the toy lesson has exactly the package files docs/adding-a-lesson.md lists"
    assert outside == {"src/replaylab/lessons/registry.py", "config/config.yaml", "recordings/toy/<run>.json", "README.md"}

    copy = copy_project(tmp_path / "project")
    for extra in ("pyproject.toml", "tests"):  # to run the tests in the copy too
        (shutil.copytree if (ROOT / extra).is_dir() else shutil.copy2)(ROOT / extra, copy / extra)
    before = tree(copy)
    shutil.copytree(TOY, copy / "src" / "replaylab" / "lessons" / "toy")
    registry_file = copy / "src" / "replaylab" / "lessons" / "registry.py"
    text = registry_file.read_text()
    registry_file.write_text(re.sub(r'(NAMES = \([^)]*)\)', r'\1, "toy")', text, count=1))
    configure(copy, lessons=[*LESSONS, "toy"])
    env = environment(PYTHONPATH=str(copy / "src"))
    out = cli("record", "toy", "--provider", "scripted", "--run", "first", cwd=copy, env=env)
    assert out.returncode == 0, out.stderr
    out = cli("promote", "results/live/toy/first.json", cwd=copy, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "  verdict: answer square 9: right (the build computes the square as 9); supported: the run squared 3 and got 9" in out.stdout
    shutil.rmtree(copy / "results")

    changed = {path for path, data in tree(copy).items() if before.get(path) != data}
    assert {p for p in changed if not p.startswith("src/replaylab/lessons/toy/")} == {
        "src/replaylab/lessons/registry.py", "config/config.yaml", "recordings/toy/first.json"
    }
    snakemake(copy, "--cores", "2")
    results = json.loads((copy / "results" / "toy" / "results.json").read_text())
    assert results["verdicts"]["first"]["largest"] == 9 and results["verdicts"]["first"]["answer"] == {"square": 9}
    assert [(r["runs"], r["answered"], r["right"], r["supported"]) for r in results["scorecard"]] == [(1, 1, 1, 1)]
    assert "**Run `first` answered: the square is 9.** **The agent's answer is right, and its own experiments support it.**" in (
        copy / "results" / "toy" / "index.md").read_text()
    assert (copy / "results" / "toy" / "index.html").is_file()
    assert "## [Lesson `toy`: the square of a number](toy/index.md)" in (copy / "results" / "index.md").read_text()
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-vv", "-p", "no:cacheprovider", "src/replaylab/lessons/toy",
         "tests/test_lesson_contract.py", "-k", "toy or declares or is_audited or names_a_lesson",
         "-m", "not workflow"],  # the workflow with the toy ran above
        cwd=copy, env=env, capture_output=True, text=True, timeout=600,
    )
    assert tests.returncode == 0, tests.stdout[-3000:]
    for ran in ("test_toy.py::test_the_tool_squares PASSED",
                "test_toy.py::test_the_judge_scores_the_answer_and_checks_it_against_the_runs_own_square PASSED",
                "test_every_lesson_declares_itself_and_has_every_part[toy] PASSED",
                "test_every_lesson_is_audited[toy] PASSED", "test_no_source_file_outside_a_lessons_package_and_the_registry_names_a_lesson PASSED"):
        assert ran in tests.stdout, tests.stdout[-3000:]
