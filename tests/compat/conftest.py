"""Keep compat tests hermetic: never read a real user data bundle from ~/.local/share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gpusetup.compat import db


@pytest.fixture(autouse=True)
def _isolated_compat_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    user = tmp_path / "userdata" / "compat"
    monkeypatch.setenv("GPUSETUP_COMPAT_DIR", str(user))
    monkeypatch.delenv("GPUSETUP_DB_URL", raising=False)
    db.clear_cache()
    yield user
    db.clear_cache()
