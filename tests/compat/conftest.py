"""Keep compat tests hermetic: never read a real user data bundle from ~/.local/share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from gpusetup.compat import db, update

KEY = Ed25519PrivateKey.generate()
PUB = KEY.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
SHIPPED_KEYS = update.pinned_keys


@pytest.fixture(autouse=True)
def _isolated_compat_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    user = tmp_path / "userdata" / "compat"
    monkeypatch.setenv("GPUSETUP_COMPAT_DIR", str(user))
    monkeypatch.delenv("GPUSETUP_DB_URL", raising=False)
    db.clear_cache()
    yield user
    db.clear_cache()


@pytest.fixture(autouse=True)
def _test_key_is_pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    """Data is verified where it is loaded, with the pinned key: in these tests the test key is the pinned one."""
    monkeypatch.setattr(update, "pinned_keys", lambda: [PUB])
