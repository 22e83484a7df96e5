"""Shared test set-up: fixture paths, offscreen Qt, no real GPU access."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["GPUSETUP_LIVE"] = "off"  # no plan-time index check against the real PyPI (tests/compat/test_live.py turns it on)
sys.path.insert(0, str(ROOT / "tests"))  # `from fakes.runner import FakeRunner`


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


def fixture_text(rel: str) -> str:
    return (FIXTURES / rel).read_text(encoding="utf-8", errors="replace")
