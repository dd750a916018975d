"""Shared paths and fixtures. Tests never read ../shared: the reference numbers are copied here."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECORDINGS = ROOT / "recordings"
GOLDEN = json.loads((ROOT / "tests" / "data" / "golden-reference.json").read_text())["values"]


@pytest.fixture(scope="session")
def golden():
    return GOLDEN
