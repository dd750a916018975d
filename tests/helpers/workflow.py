"""Running the Snakemake workflow for real, in a temporary copy of the project.

Each rerun test changes the CONTENT of one file of a copy (never only its mtime), asks Snakemake
what it would run (`--summary`: one line per output with its rule and plan), and puts the file
back: Snakemake keeps a checksum of every input, so the copy is up to date again afterwards. A
copy imports its own src/ (the workflow puts it first on sys.path), so a change made there is the
code the jobs run.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

from helpers import ROOT, environment

COPIED = ("Snakefile", "workflow", "profiles", "scripts", "config", "recordings", "src")

# Snakemake's first line on stderr whenever it loads the workflow's default profile
# (profiles -> workflow/profiles: Snakemake looks for profiles/default next to a top-level Snakefile).
PROFILE_NOTICE = "Using workflow specific profile profiles/default for setting default command line arguments."


def copy_project(target, batch_size=1):
    """The files the workflow needs, copied (results, logs and caches are not).

    With `batch_size` 1 (the tests' default), the reference runs are replayed in jobs of their
    own, which shows the rebuild's precision run by run.
    """
    target.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", ".snakemake")
    for name in COPIED:
        source = ROOT / name
        if source.is_symlink():
            (target / name).symlink_to(source.readlink())
        elif source.is_dir():
            shutil.copytree(source, target / name, symlinks=True, ignore=ignore)
        else:
            shutil.copy2(source, target / name)
    configure(target, batch_size=batch_size)
    return target


def code_only_targets(lessons):
    """The outputs of each lesson's jobs that read no recording, only the code (rules `answers`,
    `baselines` and `scan`: its answers, instances, baselines, scans and exercises)."""
    return [f"results/{lesson}/{name}.json" for lesson in lessons for name in ("answers", "baselines", "scans")]


def prepared_copy(prepared, target, batch_size=1):
    """A copy of the test run's `prepared` project (tests/conftest.py: the workflow's files, and
    the outputs of every lesson's jobs that read no recording, `code_only_targets`), with Snakemake's
    metadata and the files' times: a build in it runs what reads the runs (replays, renders, the
    summary, a campaign's jobs) and finds the rest up to date, as a second build of one project
    does. For the tests whose case is not a build from clean."""
    shutil.copytree(prepared, target, symlinks=True)
    configure(target, batch_size=batch_size)
    return target


def configure(copy, **values):
    """Set top-level keys of a copy's config/config.yaml (values written as JSON, which YAML reads)."""
    config = copy / "config" / "config.yaml"
    text = config.read_text()
    for key, value in values.items():
        text, count = re.subn(rf"(?m)^{key}:.*(?:\n[ \t]+- .*)*$", f"{key}: {json.dumps(value)}", text)
        assert count == 1, key
    config.write_text(text)


def configure_campaign(copy, **values):
    """Set keys of the `campaign:` section of a copy's config/config.yaml whose value is on their own
    line (`  key: value # comment`: not `models`); the value written as JSON, the comment kept."""
    config = copy / "config" / "config.yaml"
    text = config.read_text()
    start = text.index("\ncampaign:\n") + 1
    head, section = text[:start], text[start:]
    for key, value in values.items():
        section, count = re.subn(rf"(?m)^(  {key}:) [^#\n]*?( *#.*)?$", lambda m, v=value: f"{m[1]} {json.dumps(v)}{m[2] or ''}", section)
        assert count == 1, key
    config.write_text(head + section)


def snakemake(copy, *args, check=True, python=sys.executable, env=None, timeout=600):
    """`python -m snakemake ARGS` in `copy`, with `environment()` unless `env` is given; fails the test
    unless it succeeds (with check=False, the caller looks at the result). After `timeout` seconds
    it gets SIGINT, as Ctrl-C would send (Snakemake then cancels its jobs, a cluster's too), and
    the test fails. Snakemake and its jobs end with the test whatever happens (helpers.processes)."""
    from helpers.processes import start

    process = start(
        [str(python), "-m", "snakemake", *map(str, args)],
        cwd=copy,
        env=env if env is not None else environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGINT)
        try:
            stdout, stderr = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
        raise AssertionError(
            f"snakemake {' '.join(map(str, args))} timed out after {timeout} s:\n{stdout[-3000:]}\n{stderr[-5000:]}"
        ) from None
    result = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    if check and result.returncode != 0:
        raise AssertionError(
            f"snakemake {' '.join(map(str, args))} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
        )
    return result


def first_error_line(result):
    """The first line that the workflow wrote on stderr: after Snakemake's profile notice."""
    lines = result.stderr.strip().splitlines()
    if lines[:1] == [PROFILE_NOTICE]:
        lines = lines[1:]
    return lines[0] if lines else ""


def summary(copy, *args):
    """{output file: (rule, status, plan)} of every output of the DAG, from `--summary`."""
    out = snakemake(copy, "--summary", *args).stdout.splitlines()
    header = out[0].split("\t")
    assert header[:3] == ["output_file", "date", "rule"], out[:3]
    rows = {}
    for line in out[1:]:
        fields = dict(zip(header, line.split("\t")))
        rows[fields["output_file"]] = (fields["rule"], fields["status"], fields["plan"])
    return rows


def lesson_of(output):
    """The lesson of an output (results/<lesson>/...), None for results/index.md."""
    parts = Path(output).parts
    return parts[1] if len(parts) > 2 and parts[0] == "results" else None


def pending(copy, *args):
    """{(rule, lesson)} of the jobs a run would execute now, and the outputs they would write."""
    rows = summary(copy, *args)
    outputs = sorted(o for o, (_, _, plan) in rows.items() if plan == "update pending")
    jobs = {(rows[o][0], lesson_of(o)) for o in outputs}
    return jobs, outputs


def batch_of(copy, lesson, run):
    """The replayed batch (its file of transcripts, as the replay job's output) that holds a run,
    found by the batch's verdicts."""
    (found,) = [p for p in (copy / "results" / lesson / "judged").glob("*.json") if run in json.loads(p.read_text())["runs"]]
    return str((found.parent.parent / "transcripts" / f"{found.stem}.jsonl").relative_to(copy))


@contextmanager
def edited(path, change):
    """Change a file's content (`change(text) -> text`) for the duration of the block."""
    original = path.read_bytes()
    text = change(original.decode("utf-8"))
    assert text.encode("utf-8") != original, f"the change left {path} as it was"
    path.write_text(text, encoding="utf-8")
    try:
        yield path
    finally:
        path.write_bytes(original)


def append_comment(text):
    return text + "\n# a change of content, not only of the file's time\n"


def first_result_value(data):
    """(step, call, key) of the first recorded number of an accepted call."""
    for i, step in enumerate(data["steps"]):
        for j, result in enumerate(step["results"]):
            if result["ok"]:
                for key, value in result["content"].items():
                    if isinstance(value, float):
                        return i, j, key
    raise AssertionError("no recorded number to forge")


def forge(path):
    """Change the first stored number of a recording to one the code does not give: its replay must
    fail. Returns the name of the changed value."""
    data = json.loads(path.read_text(encoding="utf-8"))
    i, j, key = first_result_value(data)
    data["steps"][i]["results"][j]["content"][key] *= 1.5
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return key


def module_snakefile(project):
    """The user's Snakefile that uses the workflow as a module, as docs/workflow.md shows it,
    pointing at `project` (a folder holding the workflow's Snakefile)."""
    readme = (ROOT / "docs" / "workflow.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```snakemake\n(.*?)```", readme, flags=re.S)
    (block,) = [b for b in blocks if "module replaylab:" in b]
    return block.replace("/path/to/replaylab", str(project))


def module_folder(target, project):
    """A user's folder holding only config/, recordings/ (copied from `project`) and a Snakefile
    that uses the workflow of `project` as a module."""
    (target / "config").mkdir(parents=True)
    shutil.copy2(project / "config" / "config.yaml", target / "config" / "config.yaml")
    shutil.copytree(project / "recordings", target / "recordings")
    (target / "Snakefile").write_text(module_snakefile(project), encoding="utf-8")
    return target


DONE = re.compile(r"(\w+): done in ([0-9.]+) s, from ([0-9.]+) to ([0-9.]+) \(seconds since 1970\)")


def job_times(log):
    """(start, end) of a job, in seconds since 1970, from the line its log ends with
    (replaylab.jobs.done_line); None when the job did not end well."""
    for line in reversed(Path(log).read_text(encoding="utf-8", errors="replace").splitlines()):
        found = DONE.fullmatch(line)
        if found:
            return float(found[3]), float(found[4])
    return None
