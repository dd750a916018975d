"""One settings model (issue 36): the configuration read and checked once, by `replaylab.settings`,
for the workflow, `campaign`, `doctor` and `verify`; typed, frozen, its paths the project's
whatever the current folder; bad input one line naming the file and the field."""

import dataclasses
import json
import shutil

import pytest
import yaml

from helpers import ROOT, environment, in_process
from replaylab import settings
from replaylab.lessons import registry
from replaylab.campaign_settings import Model


def project_copy(tmp_path, change=None, schema=True):
    """A folder with the project's config/config.yaml (changed by `change(config)`), and its
    workflow/schemas/ unless `schema` is false."""
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    if change:
        change(config)
    (tmp_path / "config").mkdir(parents=True)
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    if schema:
        shutil.copytree(ROOT / "workflow" / "schemas", tmp_path / "workflow" / "schemas")
    return tmp_path


def test_the_projects_settings_are_typed_and_its_paths_are_the_projects(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # another folder: nothing is read from here
    found = settings.load(ROOT)
    assert found.folder == ROOT and found.source == "config/config.yaml"
    assert found.lessons == tuple(registry.names())
    assert (found.tolerance, found.batch_size, found.run_folders) == (1e-6, 2000, ())
    assert (found.record_lesson, found.record_run, found.provider, found.seed) == ("projectile", "new", "scripted", 0)
    assert (found.recordings, found.results) == (ROOT / "recordings", ROOT / "results")
    campaign = found.campaign
    assert (campaign.name, campaign.lessons, campaign.runs, campaign.instances) == ("baseline", ("projectile", "hunter", "review"), 5, "seeds")
    assert campaign.models == (Model("scripted-careful", "scripted"), Model("scripted-mixed", "scripted"))
    assert found.campaign_folder() == ROOT / "results" / "campaigns" / "baseline"
    assert campaign.section()["models"] == [{"name": "scripted-careful"}, {"name": "scripted-mixed"}]  # as written


def test_the_settings_are_frozen_and_give_copies(tmp_path):
    found = settings.load(project_copy(tmp_path, lambda c: c.update(run_folders=["generated", "../elsewhere"])))
    assert found.run_folders == (tmp_path / "generated", tmp_path / "../elsewhere")
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.tolerance = 0.5
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.campaign.runs = 1
    found.config()["lessons"].append("x")
    found.campaign.section()["models"].clear()
    assert found.config()["lessons"] == list(found.lessons) and len(found.campaign.section()["models"]) == 2


def test_the_workflows_config_is_checked_and_typed_in_place():
    """The workflow gives Snakemake's merged configuration, whose nested --config values are texts:
    `of` types them where the schema wants numbers, in `config` itself (the rules read it)."""
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config["campaign"] = {**config["campaign"], "runs": "12", "request_timeout": "30.5"}
    found = settings.of(config, "config/config.yaml + --config", ROOT)
    assert (found.campaign.runs, found.campaign.request_timeout) == (12, 30.5)
    assert (config["campaign"]["runs"], config["campaign"]["request_timeout"]) == (12, 30.5)


@pytest.mark.parametrize("change, message", [
    (lambda c: c["campaign"].update(runs=0), "config/config.yaml: $.campaign.runs: 0 is less than the minimum of 1"),
    (lambda c: c.update(lessons=["astronomy"]),
     "config/config.yaml: $.lessons[0]: 'astronomy' is not a lesson of replaylab; the lessons are: " + ", ".join(registry.names())),
    (lambda c: c.update(tolerance=float("nan")), "config/config.yaml: $.tolerance: nan is not a finite number"),
])
def test_a_bad_value_is_one_line_naming_the_file_and_the_field(tmp_path, change, message):
    with pytest.raises(settings.InputError) as refused:
        settings.load(project_copy(tmp_path, change))
    assert str(refused.value) == message


def test_a_file_that_is_not_a_configuration_is_one_line(tmp_path):
    folder = project_copy(tmp_path)
    (folder / "config" / "config.yaml").write_text("lessons: [projectile\n")
    with pytest.raises(settings.InputError, match=r"^config/config\.yaml: not a YAML file: while parsing a flow sequence$"):
        settings.load(folder)
    (folder / "config" / "config.yaml").write_text("- a list\n")
    with pytest.raises(settings.InputError) as refused:
        settings.load(folder)
    assert str(refused.value) == "config/config.yaml: not a mapping of settings (the workflow's configuration)"


def test_campaign_files_are_set_over_the_campaign_section(tmp_path, monkeypatch):
    folder = project_copy(tmp_path / "project")
    monkeypatch.chdir(tmp_path)  # campaign files are read from where the command line gives them
    (tmp_path / "short.yaml").write_text("runs: 7\nname: short\n")
    (tmp_path / "long.yaml").write_text(yaml.safe_dump({"campaign": {"lessons": ["hunter"], "runs": 3}}))
    found = settings.load(folder, ["short.yaml", "long.yaml"])
    assert (found.campaign.name, found.campaign.runs, found.campaign.lessons) == ("short", 3, ("hunter",))
    assert found.source == "config/config.yaml + short.yaml + long.yaml"
    assert found.campaign.models == settings.load(folder).campaign.models  # what the files do not set is the configuration's
    with pytest.raises(settings.InputError) as refused:
        settings.load(folder, ["missing.yaml"])
    assert str(refused.value) == "missing.yaml: no such file (a campaign's settings)"
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump({"campaign": {"runs": 0}}))
    with pytest.raises(settings.InputError) as refused:
        settings.load(folder, ["bad.yaml"])
    assert str(refused.value) == "config/config.yaml + bad.yaml: $.campaign.runs: 0 is less than the minimum of 1"


def test_a_folder_of_the_users_own_is_checked_with_the_workflows_schema(tmp_path):
    """A project that uses the workflow as a module has no workflow/schemas/ of its own: its
    configuration is checked with the schema of the clone this library belongs to."""
    assert settings.schema_of(tmp_path) == settings.LIBRARY_SCHEMA == ROOT / "workflow" / "schemas" / "config.schema.yaml"
    found = settings.load(project_copy(tmp_path, lambda c: c.update(batch_size=5), schema=False))
    assert found.batch_size == 5
    with pytest.raises(settings.InputError, match=r"^config/config\.yaml: \$\.batch_size: 0 is less than the minimum of 1$"):
        settings.load(project_copy(tmp_path / "bad", lambda c: c.update(batch_size=0), schema=False))


def test_doctor_and_a_campaigns_dry_run_from_a_folder_below_the_projects():
    """Found from the nearest folder above that holds the Snakefile and config/config.yaml; the
    paths they show are the project's."""
    below = ROOT / "docs"
    doctor = in_process("doctor", "--json", cwd=below)
    checks = {c["what"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["config/config.yaml"] == {"what": "config/config.yaml", "ok": True, "detail": "valid (the workflow's schema and checks)"}
    assert checks["recording recordings/projectile/reference.json"]["ok"] is True
    plan = in_process("campaign", "--dry-run", "--model", "scripted-careful", "--lesson", "pendulum", "--runs", "1", cwd=below,
                      env=environment())
    assert plan.returncode == 0, plan.stderr
    assert plan.stdout.splitlines()[0].startswith("campaign baseline: 1 runs (pendulum;")
    assert plan.stdout.splitlines()[-1] == "dry run: nothing sent, nothing written"
