"""Page 7: summary; save the report (HTML/JSON), create a support bundle, open the log folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QPushButton, QWidget

from gpusetup.gui.i18n import current_language, tr
from gpusetup.gui.pages.base import BasePage
from gpusetup.gui.pages.choose import FRAMEWORK_NAMES
from gpusetup.gui.pages.machine import driver_words
from gpusetup.gui.pages.verify import answer_rows
from gpusetup.gui.services import Unavailable
from gpusetup.gui.widgets import Card, StatusLine, label, open_folder
from gpusetup.gui.workers import JobContext
from gpusetup.messages import outcome_text, render
from gpusetup.model import Machine, Report, Severity

if TYPE_CHECKING:
    from gpusetup.gui.wizard import SetupWizard


class DonePage(BasePage):
    def __init__(self, wizard: SetupWizard) -> None:
        super().__init__(wizard)
        self.setTitle(tr("Done"))
        self.setSubTitle(tr("Here is what happened. Keep the report, or send a support bundle if something is not right."))
        self.summary = Card(tr("Summary"))
        self.summary_lines: list[QWidget] = []
        self.content.addWidget(self.summary)
        actions = Card(tr("Keep a record"))
        row = QHBoxLayout()
        self.save_html = QPushButton(tr("Save report (&HTML)…"))
        self.save_json = QPushButton(tr("Save report (&JSON)…"))
        self.bundle = QPushButton(tr("Create a &support bundle…"))
        self.open_logs = QPushButton(tr("Open the &log folder"))
        for b in (self.save_html, self.save_json, self.bundle, self.open_logs):
            b.setAccessibleName(b.text().replace("&", "").rstrip("…"))
            row.addWidget(b)
        row.addStretch(1)
        actions.body.addLayout(row)
        actions.body.addWidget(label(tr("A support bundle is a zip file with the report and logs, with personal details (user names, host name, serial numbers) removed. Send it to whoever helps you.")))
        self.action_status = StatusLine()
        self.action_status.setVisible(False)
        actions.body.addWidget(self.action_status)
        self.content.addWidget(actions)
        self.content.addStretch(1)
        self.save_html.clicked.connect(lambda: self._save("html"))
        self.save_json.clicked.connect(lambda: self._save("json"))
        self.bundle.clicked.connect(self._bundle)
        self.open_logs.clicked.connect(self._open_logs)

    def report(self) -> Report:
        m = self.state.machine
        if m is None:
            m = Machine()
        return Report(machine=m, findings=list(self.state.findings), plans=self.state.chosen_plans(), selftest=self.state.selftest)

    def initializePage(self) -> None:  # noqa: N802 - Qt API
        # lazy: see verify.answer_rows
        from gpusetup.selftest.proof import answers, headline

        for w in self.summary_lines:
            w.setParent(None)
            w.deleteLater()
        self.summary_lines = []
        m = self.state.machine

        def add(kind: str, text: str) -> None:
            s = StatusLine()
            s.set(kind, text)
            self.summary.body.addWidget(s)
            self.summary_lines.append(s)

        if m is not None:
            names = ", ".join(g.name or g.pci.device_name or "?" for g in m.gpus) or tr("no graphics card")
            add("info", tr("Computer: {gpus}; driver {driver}.").format(gpus=names, driver=driver_words(m)))
            errors = [f for f in self.state.findings if f.severity == Severity.ERROR]
            if errors:
                add("warn", tr("{n} problem(s) found; they are in the report with their fixes.").format(n=len(errors)))
        fws = ", ".join(FRAMEWORK_NAMES.get(f, f) for f in self.state.frameworks)
        out, target = self.state.install, self.state.target
        st = self.state.selftest
        # the proof's answers, the same ones Verify shows (one result, one renderer): "installed" is ✓ only when
        # the proof says every framework works there
        proven_env = not self.services.demo and st is not None and any(x.tier == "framework" for x in st.measurements)
        said = answers(st) if proven_env else []
        if not fws and said:  # a resumed `gpusetup install` names no choice: the frameworks the proof checked
            fws = ", ".join(a.name for a in said)
        if out is None or target is None:
            add("info", tr("Nothing was installed."))
        elif target.kind == "docker":
            add("pass" if out.ok else "warn", tr("Docker setup for {fws} written to {dir}.").format(fws=fws, dir=target.value) if out.ok else tr("The Docker setup was not fully written: {error}").format(error=out.message))
        elif out.ok and out.needs_reboot:
            add("warn", tr("{fws}: restart the computer to finish, then open GPU Setup again.").format(fws=fws))
        elif out.ok and self.services.demo:
            add("info", tr("Demonstration: {fws} would be installed into {where}; nothing was installed.").format(fws=fws, where=target.value))
        elif out.ok and said and all(a.proven for a in said):
            add("pass", tr("{fws} installed into {where}.").format(fws=fws, where=target.value))
        elif out.ok and said:
            add("warn", tr("{fws} installed into {where}, but the proof below found a problem.").format(fws=fws, where=target.value))
        elif out.ok:
            add("warn", tr("{fws} installed into {where}, but not proven: the proof did not check it.").format(fws=fws, where=target.value))
        elif out.cancelled:
            add("info", tr("The installation was cancelled and undone."))
        else:
            add("fail", tr("The installation did not finish: {error}").format(error=outcome_text(out, current_language())))
        line = headline(st, m.gpus[0].name if m is not None and m.gpus else None)  # as Verify words it
        if line is not None and not self.services.demo:
            gpu_verdicts = {x.verdict for x in st.measurements if x.tier in ("driver", "cublas")} if st else set()
            add("fail" if "fail" in gpu_verdicts else "warn" if "warn" in gpu_verdicts else "pass", render(line, current_language()))
        elif st is not None and not st.cancelled and self.services.demo:
            kind = {"pass": "pass", "warn": "warn", "fail": "fail"}.get(st.verdict, "info")
            word = {"pass": tr("passed"), "warn": tr("passed with warnings"), "fail": tr("failed")}.get(st.verdict, tr("finished"))
            add(kind, tr("Self-test {word}: {n} measurements.").format(word=word, n=len(st.measurements)))
        if proven_env:
            for w in answer_rows(st):
                self.summary.body.addWidget(w)
                self.summary_lines.append(w)
        if target is not None and target.kind == "venv" and out is not None and out.ok and not self.services.demo:
            if m is not None and m.system.os == "windows":
                add("info", tr("To use it, open a terminal and run: {path}\\Scripts\\activate").format(path=target.value))
            else:
                add("info", tr("To use it, open a terminal and run: source {path}/bin/activate").format(path=target.value))

    @classmethod
    def choose_save_path(cls, parent: QWidget, caption: str, start: str, filter_: str) -> str:
        """Save-file dialog (a classmethod so tests can answer for the user)."""
        path, _ = QFileDialog.getSaveFileName(parent, caption, start, filter_)
        return path

    def _say(self, kind: str, text: str) -> None:
        self.action_status.set(kind, text)
        self.action_status.setVisible(True)

    def _save(self, fmt: str) -> None:
        name = "gpusetup-report." + ("html" if fmt == "html" else "json")
        filt = tr("Web page (*.html)") if fmt == "html" else tr("JSON (*.json)")
        path = self.choose_save_path(self, tr("Save the report"), str(Path.home() / name), filt)
        if not path:
            return
        services, report = self.services, self.report()

        def body(ctx: JobContext) -> str:
            text = services.render_report(report, fmt)
            tmp = Path(path + ".partial")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)  # never a half-written report
            return path

        self.run_job(
            body,
            name="report",
            on_result=lambda p: self._say("pass", tr("Report saved to {path}").format(path=p)),
            on_error=lambda msg, exc: self._say("fail", self.unavailable_text(exc) if isinstance(exc, Unavailable) else tr("Could not save the report: {error}").format(error=msg)),
        )

    def _bundle(self) -> None:
        path = self.choose_save_path(self, tr("Save the support bundle"), str(Path.home() / "gpusetup-bundle.zip"), tr("Zip file (*.zip)"))
        if not path:
            return
        services, report = self.services, self.report()
        self._say("busy", tr("Creating the support bundle…"))
        self.run_job(
            lambda ctx: services.create_bundle(report, Path(path)),
            name="bundle",
            on_result=lambda p: self._say("pass", tr("Support bundle saved to {path}").format(path=p)),
            on_error=lambda msg, exc: self._say("fail", self.unavailable_text(exc) if isinstance(exc, Unavailable) else tr("Could not create the bundle: {error}").format(error=msg)),
        )

    def _open_logs(self) -> None:
        self.log_dialog = open_folder(self, self.services.log_dir)
