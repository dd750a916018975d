"""The Snakemake workflow, run for real in a temporary copy of the project (tests/helpers/workflow.py).

One full build per test session (fixture `built`, tests/conftest.py). Each rerun test changes the
content of one file of the copy, asks Snakemake what it would run, and puts the file back.
"""

import json
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml

from helpers import ROOT, python
from helpers.workflow import (
    PROFILE_NOTICE,
    append_comment,
    batch_of,
    copy_project,
    edited,
    first_error_line,
    forge,
    lesson_of,
    module_folder,
    pending,
    prepared_copy,
    snakemake,
    summary,
)
from replaylab.lessons import registry

LESSONS = registry.names()
RULES = {"all", "replay", "scan", "answers", "baselines", "render", "index", "site", *LESSONS}
RECORDING_RULES = {"record", "record_run", "live_page"}  # only when targeted
CAMPAIGN_RULES = {"campaign", "campaign_record", "campaign_replay", "campaign_render", "campaign_compare"}


pytestmark = pytest.mark.workflow


def test_full_build_writes_every_result(built):
    for lesson in LESSONS:
        folder = built / "results" / lesson
        for name in ("results.json", "scans.json", "exercises.json", "index.md", "index.html", "runs.csv.gz"):
            assert (folder / name).is_file(), f"{lesson}/{name}"
        assert sorted(json.loads(line)["run"] for p in (folder / "transcripts").glob("*.jsonl") for line in p.read_text().splitlines()) == sorted(
            p.stem for p in (built / "recordings" / lesson).glob("*.json")
        )
        # each batch judged its runs: judged/<batch>.json beside transcripts/<batch>.jsonl
        assert sorted(p.stem for p in (folder / "judged").glob("*.json")) == sorted(p.stem for p in (folder / "transcripts").iterdir())
        assert list((folder / "figures").glob("*.png")), lesson
        assert list((folder / "tables").glob("*.csv")), lesson
    assert (built / "results" / "index.md").is_file() and (built / "results" / "index.html").is_file()
    # every job keeps a log, with its time, and a benchmark (the time and memory of its process)
    batch = Path(batch_of(built, "hunter", "velocity-verlet")).stem
    assert "replay: done in" in (built / "logs" / "hunter" / "replay" / f"{batch}.log").read_text()
    for benchmark in (f"replay/{batch}.tsv", "scan.tsv", "answers.tsv", "baselines.tsv", "render.tsv"):
        assert (built / "benchmarks" / "hunter" / benchmark).read_text().startswith("s\th:m:s\tmax_rss"), benchmark
    assert (built / "results" / "hunter" / "scorecard.csv").is_file()


@pytest.mark.slow  # Snakemake asked, in a copy of the shared `prepared` project
def test_a_copy_of_prepared_leaves_only_the_jobs_that_read_runs(prepared, tmp_path):
    """The tests that start from `prepared` (tests/conftest.py) skip its jobs, whatever batch size
    they set (the jobs' settings file holds the tolerance only): what is left reads the runs."""
    copy = prepared_copy(prepared, tmp_path / "project", batch_size=50)
    jobs, _ = pending(copy)
    assert {rule for rule, _ in jobs} == {"replay", "render", "index", "site"}
    assert {lesson for rule, lesson in jobs if rule == "render"} == set(yaml.safe_load((copy / "config" / "config.yaml").read_text())["lessons"])


def test_second_run_does_nothing(built):
    result = snakemake(built, "--cores", "1")
    assert "Nothing to be done" in result.stdout + result.stderr
    assert pending(built) == (set(), [])


@pytest.mark.parametrize("module", ["integrators.py", "oscillator.py"])
def test_oscillator_code_reruns_hunter_and_review_only(built, module):
    with edited(built / "src" / "replaylab" / "physics" / module, append_comment):
        jobs, outputs = pending(built)
    lessons = {lesson for _, lesson in jobs}
    assert "projectile" not in lessons, outputs
    assert {("replay", "hunter"), ("replay", "review"), ("render", "hunter"), ("render", "review")} <= jobs
    replays = {o for o in outputs if "/transcripts/" in o}
    assert replays == {batch_of(built, lesson, p.stem) for lesson in ("hunter", "review") for p in (built / "recordings" / lesson).glob("*.json")}


def test_projectile_code_reruns_projectile_only(built):
    with edited(built / "src" / "replaylab" / "physics" / "projectile.py", append_comment):
        jobs, outputs = pending(built)
    assert {lesson for _, lesson in jobs} == {"projectile", None}, outputs  # None: results/index.md
    assert {("replay", "projectile"), ("scan", "projectile"), ("answers", "projectile"), ("baselines", "projectile"),
            ("render", "projectile")} <= jobs


def test_one_recording_reruns_its_replay_and_what_follows_and_no_scan(built):
    # review's three reference runs are one group, judged together: one batch
    recording = built / "recordings" / "review" / "evidence.json"

    def change_a_message(text):
        data = json.loads(text)
        data["steps"][0]["text"] += " (edited)"  # the words change, the calls and results do not
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    with edited(recording, change_a_message):
        jobs, outputs = pending(built)
    assert batch_of(built, "review", "evidence") in outputs
    assert len({batch_of(built, "review", run) for run in ("evidence", "numerics", "physics")}) == 1
    assert not [o for o in outputs if "/hunter/" in o]
    assert {rule for rule, _ in jobs}.isdisjoint({"scan", "answers", "baselines"}), outputs
    assert {lesson for _, lesson in jobs} == {"review", None}, outputs
    assert {("replay", "review"), ("render", "review"), ("index", None)} <= jobs


def test_plotting_code_reruns_figures_and_pages_only(built):
    with edited(built / "src" / "replaylab" / "lessons" / "review" / "figures.py", append_comment):
        jobs, outputs = pending(built)
    # figures, tables and page are drawn by one job per lesson (`render`), then the summary page:
    # no replay (which judges) or scan
    assert jobs == {("render", "review"), ("index", None), ("site", None)}, outputs  # the site copies the pages
    assert {"results/review/figures", "results/review/index.md"} <= set(outputs)


def test_page_style_reruns_the_pages_only(built):
    with edited(built / "src" / "replaylab" / "templates" / "page.css", append_comment):
        jobs, outputs = pending(built)
    assert jobs == {("render", lesson) for lesson in LESSONS} | {("index", None), ("site", None)}, outputs
    assert {f"results/{lesson}/index.html" for lesson in LESSONS} | {"results/index.html"} <= set(outputs)


def test_changed_tolerance_reruns_the_replays(built):
    config = built / "config" / "config.yaml"
    with edited(config, lambda text: re.sub(r"(?m)^tolerance: .*$", "tolerance: 2.0e-6", text)):
        jobs, outputs = pending(built)
    replays = {o for o in outputs if "/transcripts/" in o}
    assert replays == {batch_of(built, p.parent.name, p.stem) for p in (built / "recordings").glob("*/*.json")}
    assert {rule for rule, _ in jobs}.isdisjoint({"scan"})


def test_a_no_op_start_does_not_import_pandas_and_keeps_the_imports_cache(built):
    """What a start that finds everything up to date costs: Snakemake, the workflow, its checks.
    pandas (0.4 s) is imported by the jobs that tabulate only, not by Snakemake's comparison of
    params (the default target's rules have none: their settings are an input file); the import
    statements of the code come from the cache of the build."""
    assert (built / ".snakemake" / "replaylab" / "imports.json").is_file()
    probe = ("import sys, runpy; sys.argv = ['snakemake', '--cores', '1']\n"
             "try:\n    runpy.run_module('snakemake', run_name='__main__')\n"
             "finally:\n    print('pandas' in sys.modules, file=sys.stderr)\n")
    result = python(probe, cwd=built, timeout=300)
    assert "Nothing to be done" in result.stderr, result.stderr[-2000:]
    assert result.stderr.strip().splitlines()[-1] == "False", result.stderr[-2000:]


def test_restored_copy_is_up_to_date_again(built):
    """Putting the contents back needs no rerun: Snakemake compares checksums, not only times."""
    assert pending(built) == (set(), [])


def test_code_inputs_are_precise_per_lesson_and_stage(built):
    out = snakemake(built, "--detailed-summary").stdout.splitlines()
    header = out[0].split("\t")
    inputs = {}
    for line in out[1:]:
        fields = dict(zip(header, line.split("\t")))
        inputs[fields["output_file"]] = set(fields["input-file(s)"].split(","))
    oscillator = {"src/replaylab/physics/oscillator.py", "src/replaylab/physics/integrators.py"}
    projectile = {output: files for output, files in inputs.items() if lesson_of(output) == "projectile"}
    assert len(projectile) > 3, sorted(inputs)  # its replay, judge, scan and render outputs
    for output, files in projectile.items():
        assert not files & oscillator, output
        assert not any("/lessons/hunter/" in f or "/lessons/review/" in f for f in files), output
    for output, files in inputs.items():
        if output not in ("results/index.md", "results/index.html"):
            assert "src/replaylab/index_page.py" not in files, output
        # only the jobs that write pages depend on the HTML page's code, template and style
        writes_pages = output.endswith(("index.md", "index.html")) or lesson_of(output) and output.endswith(
            ("results.json", "figures", "tables", "scorecard.csv", "scorecard.json", "runs.csv.gz", "runs")
        )
        for page_file in ("src/replaylab/html_page.py", "src/replaylab/templates/page.css"):
            assert (page_file in files) == bool(writes_pages), (output, page_file)
    hunt = inputs[batch_of(built, "hunter", "velocity-verlet")]
    assert "src/replaylab/physics/drift.py" in hunt
    assert "src/replaylab/physics/projectile.py" not in hunt
    (judged,) = [files for output, files in inputs.items() if output.startswith("results/projectile/judged/")]
    assert "src/replaylab/lessons/projectile/judge.py" in judged  # a replay job judges its batch
    assert "src/replaylab/lessons/projectile/scans.py" not in judged
    assert "src/replaylab/lessons/projectile/figures.py" not in judged
    # a replay job's input is its batch's list (with each recording's digest), not each recording
    assert any(f.startswith(".snakemake/replaylab/batches/projectile/") for f in judged)
    for lesson in LESSONS:
        assert not any(f.startswith("recordings/") for f in inputs[f"results/{lesson}/scans.json"])
        assert not any(f.startswith("recordings/") for f in inputs[f"results/{lesson}/exercises.json"])
        assert f"src/replaylab/lessons/{lesson}/figures.py" in inputs[f"results/{lesson}/figures"]
        assert f"src/replaylab/lessons/{lesson}/page.py" in inputs["results/index.md"]


def test_one_lesson_target_builds_that_lesson_alone(built):
    jobs, outputs = pending(built, "--forceall", "hunter")
    assert {lesson for _, lesson in jobs} == {"hunter"}, outputs
    assert {rule for rule, _ in jobs} == {"replay", "scan", "answers", "baselines", "render"}


def test_no_rule_writes_under_recordings(built):
    listed = snakemake(built, "--list-rules").stdout.splitlines()
    rules = {line.split()[0] for line in listed if line.strip() and not line[0].isspace()}
    assert rules == RULES | RECORDING_RULES | CAMPAIGN_RULES
    outputs = summary(built, "--forceall")
    assert outputs and all(o.startswith("results/") for o in outputs), sorted(outputs)
    # a campaign's recordings are sources too: its recording jobs' outputs are its blocks' lists
    campaign = summary(built, "--forceall", "campaign")
    assert any(o.startswith("results/campaigns/baseline/projectile/recorded/") for o in campaign)
    assert all(o.startswith("results/") and "/recordings/" not in o for o in campaign), sorted(campaign)


def test_dry_run_needs_no_api_key(built):
    result = snakemake(built, "-n", "--forceall")  # environment() has no key
    assert "Job stats" in result.stdout
    for path in [built / "Snakefile", *(built / "workflow").rglob("*.smk"), *(built / "scripts").glob("*.py")]:
        text = path.read_text(encoding="utf-8")
        assert "OPENAI_API_KEY" not in text and "environ" not in text, path


@pytest.mark.parametrize(
    "name, change, where",
    [
        ("broken", lambda d: d["steps"][0]["results"].pop(), "$.steps[0].results: "),
        ("broken", lambda d: d.update(api_key="sk-not-a-key"), "$: unknown field 'api_key'"),
        ("broken", lambda d: d.update(lesson="projectile"), "$.lesson: "),
        ("other", lambda d: None, "$.run: 'velocity-verlet' differs from the file name 'other'"),
    ],
    ids=["results-for-calls", "unknown-field", "wrong-folder", "run-not-file-name"],
)
def test_malformed_recording_fails_the_dry_run_on_one_line(built, name, change, where):
    data = json.loads((built / "recordings" / "hunter" / "velocity-verlet.json").read_text(encoding="utf-8"))
    if name != "other":
        data["run"] = name
    change(data)
    path = built / "recordings" / "hunter" / f"{name}.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    try:
        result = snakemake(built, "-n", check=False)
    finally:
        path.unlink()
    assert result.returncode != 0
    assert first_error_line(result).startswith(f"recordings/hunter/{name}.json: {where}"), result.stderr
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda t: re.sub(r"(?m)^tolerance: .*$", "tolerance: -1", t), "config/config.yaml: $.tolerance: -1 "),
        (lambda t: re.sub(r"(?m)^tolerance: .*$", "tolerance: small", t), "config/config.yaml: $.tolerance: 'small' "),
        (lambda t: t.replace("  - hunter", "  - hunt"), "config/config.yaml: $.lessons[1]: 'hunt' is not a lesson"),
        (lambda t: t + "api_key: x\n", "config/config.yaml: $: unknown field 'api_key'"),
    ],
    ids=["negative-tolerance", "text-tolerance", "unknown-lesson", "unknown-key"],
)
def test_malformed_config_fails_the_dry_run_on_one_line(built, change, message):
    with edited(built / "config" / "config.yaml", change):
        result = snakemake(built, "-n", check=False)
    assert result.returncode != 0
    assert first_error_line(result).startswith(message), result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_report_holds_every_figure_and_page(built):
    snakemake(built, "--report", "results/report.zip")
    with zipfile.ZipFile(built / "results" / "report.zip") as archive:
        names = archive.namelist()
    assert "report/report.html" in names
    # the site (results/site/, every page with what it links, its links working): a folder of its own
    (site,) = {n[: -len(f"{LESSONS[0]}/index.html")] for n in names if n.endswith(f"/{LESSONS[0]}/index.html")}
    with zipfile.ZipFile(built / "results" / "report.zip") as archive:
        assert archive.read(site + "index.html") == (built / "results" / "index.html").read_bytes()
        for lesson in LESSONS:
            assert archive.read(f"{site}{lesson}/index.html") == (built / "results" / lesson / "index.html").read_bytes()
    names = [n for n in names if not n.startswith(site)]
    figures = sorted(p.name for p in (built / "results").glob("*/figures/*.png"))
    assert figures and sorted(Path(n).name for n in names if n.endswith(".png")) == figures
    # the pages only there, where their links work: no page stored apart from the site
    assert not [n for n in names if n.endswith((".html", ".md")) and n != "report/report.html"], names


def test_lint_and_format_are_clean(built):
    lint = snakemake(built, "--lint")
    assert "Congratulations" in lint.stdout + lint.stderr
    fmt = subprocess.run(
        [sys.executable, "-m", "snakefmt", "--check", "."], cwd=built, capture_output=True, text=True, timeout=120
    )
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


@pytest.mark.slow  # a Snakemake build of its own
def test_the_workflow_runs_as_a_module_of_a_users_folder(built, tmp_path):
    """A folder with only config/, recordings/ and the short Snakefile of docs/workflow.md gets the
    same bytes (one lesson's target: the module's rules are the workflow's own)."""
    user = module_folder(tmp_path / "analysis", built)
    assert sorted(p.name for p in user.iterdir()) == ["Snakefile", "config", "recordings"]
    profile = built / "workflow" / "profiles" / "default"
    snakemake(user, "--cores", "2", "--workflow-profile", str(profile), "hunter")
    mine, project = user / "results" / "hunter", built / "results" / "hunter"
    for name in ("results.json", "index.md", "index.html"):
        assert (mine / name).read_bytes() == (project / name).read_bytes(), name
    again = snakemake(user, "--cores", "1", "--workflow-profile", str(profile), "hunter")
    assert "Nothing to be done" in again.stdout + again.stderr
    assert pending(built) == (set(), [])  # nothing was written into the project


# ---------------------------------------------------------------------------------------------
# A forged recording: its replay fails, the rest is still built


# one write of the whole line: the jobs and Snakemake share stderr (print writes the end apart)
MARKER = '\nimport sys as _sys\n\n_sys.stderr.write(f"replaylab imported from {__file__}\\n")\n'


@pytest.fixture(scope="module")
def forged(tmp_path_factory):
    copy = copy_project(tmp_path_factory.mktemp("forged") / "project")
    key = forge(copy / "recordings" / "hunter" / "symplectic-euler.json")
    # every process that imports replaylab says from where: it must be this copy's src/
    init = copy / "src" / "replaylab" / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + MARKER, encoding="utf-8")
    result = snakemake(copy, "--cores", "2", "--keep-going", "hunter", "projectile", check=False)
    return copy, result, key


@pytest.mark.slow  # a Snakemake build of its own (`forged`: one worker makes it, tests/conftest.py)
def test_replay_mismatch_fails_only_that_replay(forged):
    copy, result, key = forged
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert re.findall(r"Error in rule (\w+):", result.stderr) == ["replay"]
    message = next(line for line in result.stderr.splitlines() if line.startswith("recordings/hunter/symplectic-euler.json: message 1, call 1, tool "))
    assert f"{key} was " in message and "when recorded and is" in message
    assert message.endswith(
        "--from recordings/hunter/symplectic-euler.json --run symplectic-euler"
        " && replaylab promote results/live/hunter/symplectic-euler.json"
    ), message
    assert "record the run again with: replaylab record hunter" in message
    logs = [p.read_text(encoding="utf-8") for p in (copy / "logs" / "hunter" / "replay").glob("*.log")]
    assert any(message in log for log in logs)


@pytest.mark.slow  # a Snakemake build of its own (`forged`)
def test_every_job_is_a_process_with_the_copys_own_library(forged):
    copy, result, _ = forged
    imported = re.findall(r"replaylab imported from (\S+)", result.stderr)
    # by Snakemake, then by each job that started (the failed replay too): all from the copy's src/
    started = len(re.findall(r"(?m)^Job \d+: ", result.stderr))
    assert len(imported) == 1 + started > 2, (imported, started)
    assert set(imported) == {str(copy / "src" / "replaylab" / "__init__.py")}, imported
    assert result.stderr.startswith(PROFILE_NOTICE)
    assert (copy / "results" / "projectile" / "index.md").is_file()


@pytest.mark.slow  # a Snakemake build of its own (`forged`)
def test_replay_mismatch_leaves_no_transcript_and_keeps_going(forged):
    copy, _, _ = forged
    # velocity-verlet shares the failed batch (batches go by a hash of the name): nothing of it is kept
    assert not (copy / "results" / "hunter" / "transcripts").exists() or not list((copy / "results" / "hunter" / "transcripts").iterdir())
    assert (copy / "results" / "hunter" / "scans.json").is_file()
    assert (copy / "results" / "projectile" / "index.md").is_file()  # --keep-going: the other lesson
    assert not (copy / "results" / "hunter" / "index.md").exists()


# ---------------------------------------------------------------------------------------------
# Environment files


def pins_of(requirements):
    pins = {}
    for requirement in requirements:
        name, version = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)\s*==\s*([^\s;]+)\s*", requirement).groups()
        pins[name.lower()] = version
    return pins


CONDA_NAMES = {"matplotlib-base": "matplotlib", "python-fastjsonschema": "fastjsonschema"}  # conda-forge's names


def conda_pins(dependencies):
    pins = {}
    for entry in dependencies:
        if isinstance(entry, dict):
            pins.update(pins_of(e for e in entry.get("pip", []) if not e.startswith("-e")))
            continue
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*=?=\s*(\S+)", entry)
        if match:
            name = match.group(1).lower()
            pins[CONDA_NAMES.get(name, name)] = match.group(2)
    return pins


def constraints():
    """{package: version} of constraints.txt, the versions `make` installs."""
    lines = (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
    return pins_of(line for line in lines if line.strip() and not line.startswith("#"))


def requirement_names(requirements):
    return {re.match(r"[A-Za-z0-9_.-]+", requirement).group().lower() for requirement in requirements}


def test_every_requirement_is_a_range_and_make_installs_one_pinned_version_of_it():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    assert not [r for r in requirements if "==" in r], "pyproject.toml gives ranges; constraints.txt pins"
    assert next(r for r in requirements if r.startswith("snakemake>")) == "snakemake>=9.19,<10"
    pinned = {name.lower().replace("_", "-") for name in constraints()}
    assert {n.replace("_", "-") for n in requirement_names(requirements)} <= pinned
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    installs = re.findall(r"pip install[^\n]*", makefile)
    assert installs and all("-c constraints.txt" in line for line in installs), installs


def test_environment_yml_pins_equal_the_constraints():
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    assert env["channels"] == ["conda-forge", "nodefaults"]
    pins = conda_pins(env["dependencies"])
    assert pins.pop("python") == "3.11"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = requirement_names(project["dependencies"] + project["optional-dependencies"]["test"])
    assert set(pins) == names and all(constraints()[name] == version for name, version in pins.items()), pins
    pip = next(e for e in env["dependencies"] if isinstance(e, dict))["pip"]
    assert "-e ." in pip


def test_the_rules_environment_pins_are_the_constraints():
    rules = "".join(p.read_text() for p in (ROOT / "workflow" / "rules").glob("*.smk"))
    assert rules.count('conda:\n        "../envs/replaylab.yaml"') == rules.count("    script:\n")
    env = yaml.safe_load((ROOT / "workflow" / "envs" / "replaylab.yaml").read_text(encoding="utf-8"))
    assert env["channels"] == ["conda-forge", "nodefaults"]
    pins = conda_pins(env["dependencies"])
    assert pins.pop("python") == "3.11"
    found = constraints()
    assert pins and all(found[name] == version for name, version in pins.items()), pins
