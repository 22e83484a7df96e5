"""The child side of the start-up check (:mod:`gpusetup.qtcheck`) inside the packaged GUI program, which has
no Python to run ``-c`` with: ``gpusetup-gui --gpusetup-qt-probe`` only creates a QGuiApplication and says so."""

from __future__ import annotations

import sys

from PySide6.QtGui import QGuiApplication

from gpusetup.qtcheck import OK_MARK


def probe_main() -> int:
    app = QGuiApplication(sys.argv[:1])
    print(OK_MARK, app.platformName(), flush=True)
    return 0
