"""`gpusetup gui --screenshots DIR` renders every page in both languages, light and dark."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QImage

from gpusetup.cli import main

PAGES = ["welcome", "machine", "choose", "plan", "install", "verify", "done"]


def test_screenshot_command_renders_every_page(tmp_path: Path, qapp, capsys) -> None:
    out = tmp_path / "shots"
    assert main(["gui", "--screenshots", str(out)]) == 0
    files = sorted(out.glob("*.png"))
    printed = capsys.readouterr().out.split()
    assert sorted(printed) == sorted(str(f) for f in files)
    for lang in ("en", "zh_CN"):
        for scheme in ("light", "dark"):
            for i, page in enumerate(PAGES, start=1):
                assert (out / f"{i}-{page}-{lang}-{scheme}.png").exists(), (page, lang, scheme)
    for kind in ("two-gpus", "no-driver", "no-gpu"):
        assert (out / f"2-machine-{kind}-en-light.png").exists()
    assert (out / "2-machine-no-driver-zh_CN-light.png").exists(), "a Chinese machine page with findings"
    for f in files:
        img = QImage(str(f))
        assert img.width() >= 900 and img.height() >= 700, f.name
        colours = {img.pixel(x, y) for x in range(0, img.width(), 7) for y in range(0, img.height(), 7)}
        assert len(colours) > 20, f"{f.name} is (nearly) one flat colour"
    light = QImage(str(out / "1-welcome-en-light.png"))
    dark = QImage(str(out / "1-welcome-en-dark.png"))
    assert QImage.pixelColor(light, 5, light.height() // 2).lightness() > 180
    assert QImage.pixelColor(dark, 5, dark.height() // 2).lightness() < 80


def test_unknown_fake_machine_is_a_clear_error(capsys) -> None:
    assert main(["gui", "--fake-machine", "nope", "--screenshots", "/nonexistent-never"]) == 3
    assert "choose one of" in capsys.readouterr().err


def test_no_display_is_a_clear_message(monkeypatch, capsys) -> None:
    import sys

    if not sys.platform.startswith("linux"):
        return
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(var, raising=False)
    assert main(["gui"]) == 3
    assert "gpusetup diagnose" in capsys.readouterr().err
