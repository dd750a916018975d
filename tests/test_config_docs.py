"""config/README.md documents every key of the configuration, and the schema knows them all."""

import re

import yaml

from helpers import ROOT


def test_every_config_key_is_documented_and_in_the_schema():
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    documented = set(re.findall(r"(?m)^\| `(\w+)` \|", (ROOT / "config" / "README.md").read_text()))
    assert set(config) == documented == set(schema["properties"]) == set(schema["required"])


def test_every_campaign_key_is_documented_and_in_the_schema():
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["campaign"]
    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())["properties"]["campaign"]
    documented = set(re.findall(r"(?m)^\| `campaign\.(\w+)` \|", (ROOT / "config" / "README.md").read_text()))
    assert set(config) == documented == set(schema["properties"]) == set(schema["required"])
