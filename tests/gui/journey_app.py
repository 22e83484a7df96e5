"""The wizard as its own process, for the journey that kills it (tests/gui/test_journey.py): the real app
(gpusetup.gui.app: QApplication, settings, log file, WizardApp) over the journey's services, on the X display it is
given, walked to the install by a timer as a user clicks — Next on every page, JAX only, the folder given. It
writes what it sees to the status file (its platform, the window, the page) for the test to read.

    python journey_app.py '{"state": DIR, "url": URL, "target": DIR, "language": "en", "status": FILE}'
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from journey import JourneyServices  # noqa: E402
from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtGui import QGuiApplication  # noqa: E402

from gpusetup.gui import app  # noqa: E402
from gpusetup.gui.pages.base import PAGE_CHOOSE, PAGE_INSTALL  # noqa: E402


def main(spec: dict[str, str]) -> int:
    qapp = app.get_app()
    services = JourneyServices(Path(spec["state"]), spec["url"], slow=True)
    services, settings = app.session(None, services)
    log = app.setup_file_log(services.log_dir)
    app.log_session_start(services, log)
    wiz = app.WizardApp(services, settings, spec["language"], "light")
    status = Path(spec["status"])
    chose: list[bool] = []

    def step() -> None:
        w = wiz.wizard
        page = w.currentPage()
        status.write_text(json.dumps({"platform": QGuiApplication.platformName(), "visible": w.isVisible(),
                                      "window": int(w.winId()), "page": w.currentId(),
                                      "phase": getattr(page, "phase", None)}))
        if w.currentId() == PAGE_INSTALL or w.running_jobs() or page is None or not page.isComplete():
            return
        if w.currentId() == PAGE_CHOOSE and not chose:
            page.venv_path.setText(spec["target"])
            for name, box in page.checks.items():
                box.setChecked(name == "jax")
            chose.append(True)
            return
        w.next()

    timer = QTimer()
    timer.timeout.connect(step)
    timer.start(100)
    _ = qapp
    return wiz.run()


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
