"""Small building blocks shared by the pages: cards, copyable command boxes, collapsible sections,
finding rows and measurement bars. Status is always icon + words, never colour alone."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSize, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QFont,
    QFontDatabase,
    QGuiApplication,
    QIcon,
    QPainter,
    QPalette,
)
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gpusetup.gui import theme
from gpusetup.gui.i18n import current_language, tr
from gpusetup.messages import finding_words, lang_code, msg, render, render_parts, step_title
from gpusetup.model import Finding, Measurement, Message, Severity, Step


def finding_title(finding: Finding) -> str:
    """The finding's title in the interface language (the core's English title when there is no translation)."""
    return finding_words(finding, current_language()).title


def label(text: str = "", *, bold: bool = False, selectable: bool = True, wrap: bool = True, size: float = 0) -> QLabel:
    w = QLabel(text)
    w.setWordWrap(wrap)
    w.setTextFormat(Qt.TextFormat.PlainText)
    if selectable:
        w.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if bold or size:
        f = w.font()
        if bold:
            f.setBold(True)
        if size:
            f.setPointSizeF(f.pointSizeF() * size)
        w.setFont(f)
    return w


def set_text_color(w: QWidget, color: str) -> None:
    """Colour a label's text through its palette (a per-widget style sheet is much slower to polish)."""
    pal = w.palette()
    pal.setColor(QPalette.ColorRole.WindowText, QColor(color))
    w.setPalette(pal)


def mono_font() -> QFont:
    f = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    return f


def scroll(inner: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(inner)
    return area


class Card(QFrame):
    """A bordered panel with an optional bold title; used for GPUs, summaries and plan sections."""

    def __init__(self, title: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("card")
        self.body = QVBoxLayout(self)
        self.body.setContentsMargins(14, 12, 14, 12)
        self.body.setSpacing(6)
        if title:
            self.title = label(title, bold=True, size=1.1)
            self.body.addWidget(self.title)

    def paintEvent(self, event: object) -> None:  # noqa: N802 - Qt API; drawn, not style-sheeted (fast)
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        p.setPen(pal.color(QPalette.ColorRole.Mid))
        p.setBrush(pal.color(QPalette.ColorRole.AlternateBase))
        p.drawRoundedRect(self.rect().adjusted(0, 0, -1, -1), 8, 8)
        p.end()


class SecretCard(Card):
    """The Secure Boot key's one-time password, big, with what to do with it at the restart. The password was said
    for the screen only (it is in no log or file): the card is filled from ``SetupWizard.secret``, which keeps it in
    memory until the window closes, across a language switch too."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("…", parent)  # worded when shown: a hidden card reads no catalogue before the first paint
        self.value = label("", bold=True, size=2.0)
        f = mono_font()
        f.setPointSizeF(self.value.font().pointSizeF())
        f.setBold(True)
        self.value.setFont(f)
        self.text = label("")
        self.body.addWidget(self.value)
        self.body.addWidget(self.text)
        self.setVisible(False)

    def show_message(self, message: Message) -> None:
        """Show what the installer said (``install.execute.MOK_PASSWORD``), worded in the interface's language."""
        self.title.setText(render(msg("wizard.secure-boot.title"), current_language()))
        self.value.setText(str(message.params.get("password") or ""))
        self.value.setAccessibleName(self.title.text())
        self.text.setText(render(message, current_language()))
        self.setVisible(True)


class CopyButton(QPushButton):
    """Copies text to the clipboard and says so for a moment."""

    def __init__(self, text_fn: Callable[[], str], caption: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(caption or tr("Copy"), parent)
        self._caption = self.text()
        self._text_fn = text_fn
        self.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_FileDialogDetailedView))
        self.setAccessibleName(tr("Copy to clipboard"))
        self.clicked.connect(self._copy)

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self._text_fn())
        self.setText(tr("Copied"))
        QTimer.singleShot(1500, self, self._restore)  # the button as context: no call after it is deleted

    def _restore(self) -> None:
        self.setText(self._caption)


class CommandBox(QWidget):
    """Exact commands in a read-only monospace box with a Copy button."""

    def __init__(self, text: str = "", accessible: str = "", max_lines: int = 8, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.edit = QPlainTextEdit()
        self.edit.setReadOnly(True)
        self.edit.setFont(mono_font())
        self.edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.edit.setAccessibleName(accessible or tr("Commands"))
        self.edit.setTabChangesFocus(True)
        self._max_lines = max_lines
        lay.addWidget(self.edit, 1)
        self.copy = CopyButton(lambda: self.edit.toPlainText())
        lay.addWidget(self.copy, 0, Qt.AlignmentFlag.AlignTop)
        self.set_text(text)

    def set_text(self, text: str) -> None:
        self.edit.setPlainText(text)
        lines = max(1, min(self._max_lines, text.count("\n") + 1))
        h = self.edit.fontMetrics().lineSpacing() * lines + 14
        self.edit.setFixedHeight(h + (self.edit.horizontalScrollBar().sizeHint().height() if lines > 1 else 4))

    def text(self) -> str:
        return self.edit.toPlainText()


class FixBox(QWidget):
    """A fix in words and commands: wrapped, selectable text in a framed box, with a Copy button."""

    def __init__(self, text: str, accessible: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.label = label(text)
        self.label.setObjectName("fix")
        self.label.setFrameShape(QFrame.Shape.StyledPanel)
        self.label.setBackgroundRole(QPalette.ColorRole.Base)
        self.label.setAutoFillBackground(True)
        self.label.setMargin(6)
        self.label.setAccessibleName(accessible or tr("How to fix it:"))
        self.label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.label.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        lay.addWidget(self.label, 1)
        self.copy = CopyButton(lambda: self.label.text())
        lay.addWidget(self.copy, 0, Qt.AlignmentFlag.AlignTop)

    def text(self) -> str:
        return self.label.text()


class Collapsible(QWidget):
    """A section that opens and closes with a keyboard-reachable arrow button."""

    toggled = Signal(bool)

    def __init__(self, title: str, content: QWidget, expanded: bool = False, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.button = QToolButton()
        self.button.setText(title)
        self.button.setCheckable(True)
        self.button.setChecked(expanded)
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.button.setAutoRaise(True)
        f = self.button.font()
        f.setBold(True)
        self.button.setFont(f)
        self.button.setAccessibleName(title)
        self.button.toggled.connect(self._set)
        lay.addWidget(self.button)
        self.content = content
        lay.addWidget(content)
        self._set(expanded)

    def _set(self, on: bool) -> None:
        self.button.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        self.content.setVisible(on)
        self.toggled.emit(on)

    def expanded(self) -> bool:
        return self.button.isChecked()

    def set_expanded(self, on: bool) -> None:
        self.button.setChecked(on)


SEVERITY_ICON = {
    Severity.ERROR: QStyle.StandardPixmap.SP_MessageBoxCritical,
    Severity.WARNING: QStyle.StandardPixmap.SP_MessageBoxWarning,
    Severity.INFO: QStyle.StandardPixmap.SP_MessageBoxInformation,
    Severity.OK: QStyle.StandardPixmap.SP_DialogApplyButton,
}


def severity_word(sev: Severity) -> str:
    return {
        Severity.ERROR: tr("Problem"),
        Severity.WARNING: tr("Warning"),
        Severity.INFO: tr("Note"),
        Severity.OK: tr("OK"),
    }[sev]


def severity_icon(widget: QWidget, sev: Severity) -> QIcon:
    return widget.style().standardIcon(SEVERITY_ICON[sev])


class StatusLine(QWidget):
    """Icon + bold word + text: how every status in the wizard is shown (not colour alone)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.icon = QLabel()
        self.icon.setFixedSize(QSize(22, 22))
        self.text = label("")
        self.kind = ""  # the last kind shown (pass / warn / fail / info / busy), for whoever asks
        lay.addWidget(self.icon, 0, Qt.AlignmentFlag.AlignTop)
        lay.addWidget(self.text, 1)

    def set(self, kind: str, text: str) -> None:
        self.kind = kind
        icons = {
            "pass": QStyle.StandardPixmap.SP_DialogApplyButton,
            "ok": QStyle.StandardPixmap.SP_DialogApplyButton,
            "warn": QStyle.StandardPixmap.SP_MessageBoxWarning,
            "fail": QStyle.StandardPixmap.SP_MessageBoxCritical,
            "info": QStyle.StandardPixmap.SP_MessageBoxInformation,
            "busy": QStyle.StandardPixmap.SP_BrowserReload,
        }
        icon = self.style().standardIcon(icons.get(kind, icons["info"]))
        self.icon.setPixmap(icon.pixmap(QSize(20, 20)))
        self.text.setText(text)
        self.setAccessibleName(text)


class FindingWidget(Card):
    """One finding: icon and severity word, plain title, what it means, the fix (copyable), do-it-for-me.

    Every word comes from the core's one renderer of findings (:func:`gpusetup.messages.finding_words`): in a
    translated interface the title and meaning from the finding catalogue, and the fix from its message, worded
    in the interface's language around the exact commands, with this machine's values. The rule's English title
    and detail stay one click away under "English details". Only a finding from an older report, whose fix has
    no message, shows its English fix, folded away and labelled as English.
    """

    fix_requested = Signal(object)

    def __init__(self, finding: Finding, can_fix: bool = False, parent: QWidget | None = None) -> None:
        super().__init__("", parent)
        self.finding = finding
        words = finding_words(finding, current_language())
        title, meaning, translated = words.title, words.meaning, words.translated
        head = QHBoxLayout()
        icon = QLabel()
        icon.setPixmap(severity_icon(self, finding.severity).pixmap(QSize(24, 24)))
        head.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        word = label(severity_word(finding.severity) + ":", bold=True, wrap=False)
        kind = {"error": "fail", "warning": "warn", "info": "info", "ok": "pass"}[finding.severity.value]
        set_text_color(word, theme.status_color(kind))
        head.addWidget(word, 0, Qt.AlignmentFlag.AlignTop)
        self.title_label = label(title, bold=True)
        head.addWidget(self.title_label, 1)
        self.body.addLayout(head)
        self.meaning_label: QLabel | None = None
        if meaning:
            self.body.addWidget(label(tr("What this means:"), bold=True))
            self.meaning_label = label(meaning)
            self.body.addWidget(self.meaning_label)
        self.english: Collapsible | None = None
        if translated:
            inner = QWidget()
            lay = QVBoxLayout(inner)
            lay.setContentsMargins(22, 0, 0, 0)
            lay.addWidget(label(finding.title, bold=True))
            if finding.detail:
                lay.addWidget(label(finding.detail))
            self.english = Collapsible(tr("English details (with this computer's values)"), inner)
            self.body.addWidget(self.english)
        self.fix_box: FixBox | None = None
        self.fix_section: Collapsible | None = None
        self.fix_button: QPushButton | None = None
        if words.fix:
            self.fix_box = FixBox(words.fix, accessible=tr("How to fix: {title}").format(title=title))
            if translated and finding.fix_code is None:
                # an older report's fix: English words around exact commands, one click away like the details
                self.fix_section = Collapsible(tr("How to fix it (in English, with the exact commands)"), self.fix_box)
                self.body.addWidget(self.fix_section)
            else:
                self.body.addWidget(label(tr("How to fix it:"), bold=True))
                self.body.addWidget(self.fix_box)
        if can_fix:
            row = QHBoxLayout()
            row.addStretch(1)
            self.fix_button = QPushButton(tr("Do it for me…"))
            self.fix_button.setAccessibleName(tr("Fix automatically: {title}").format(title=title))
            self.fix_button.clicked.connect(lambda: self.fix_requested.emit(self.finding))
            row.addWidget(self.fix_button)
            self.body.addLayout(row)
        self.setAccessibleName(f"{severity_word(finding.severity)}: {title}")


class Bar(QWidget):
    """A horizontal bar: measured value as a fraction of the rated peak, coloured by verdict."""

    def __init__(self, fraction: float | None, verdict: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.fraction = fraction
        self.verdict = verdict
        self.setMinimumHeight(14)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        return QSize(200, 14)

    def paintEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        r = self.rect().adjusted(0, 1, -1, -1)
        pal = self.palette()
        p.setPen(pal.color(QPalette.ColorRole.Mid))
        p.setBrush(pal.color(QPalette.ColorRole.Midlight))
        p.drawRoundedRect(r, 5, 5)
        if self.fraction is not None:
            w = int(r.width() * max(0.0, min(1.0, self.fraction)))
            if w > 0:
                kind = {"pass": "pass", "warn": "warn", "fail": "fail"}.get(self.verdict, "info")
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(QColor(theme.status_color(kind)))
                p.drawRoundedRect(r.adjusted(0, 0, -(r.width() - w), 0), 5, 5)
        p.end()


def verdict_word(verdict: str) -> str:
    return {
        "pass": tr("✔ Pass"),
        "warn": tr("⚠ Slower than expected"),
        "fail": tr("✖ Failed"),
        "skipped": tr("– Skipped"),
        "info": tr("ℹ Measured"),
    }.get(verdict, verdict)


def fmt_num(v: float | None) -> str:
    if v is None:
        return "–"
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


class MeasurementRow(QWidget):
    """Name, bar against the rated peak, the numbers in words and the verdict (icon + word)."""

    def __init__(self, m: Measurement, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.measurement = m
        grid = QVBoxLayout(self)
        grid.setContentsMargins(0, 4, 0, 4)
        top = QHBoxLayout()
        top.addWidget(label(title, bold=True), 1)
        verdict = label(verdict_word(m.verdict), bold=True, wrap=False)
        kind = {"pass": "pass", "warn": "warn", "fail": "fail", "skipped": "skip"}.get(m.verdict, "info")
        set_text_color(verdict, theme.status_color(kind))
        top.addWidget(verdict)
        grid.addLayout(top)
        if m.rated and m.value is not None:  # a bar only means something against a rated peak
            frac = m.fraction if m.fraction is not None else m.value / m.rated
            grid.addWidget(Bar(frac, m.verdict))
        if m.value is not None and m.rated:
            pct = f"{(m.fraction if m.fraction is not None else m.value / m.rated) * 100:.0f}"
            words = tr("{value} {unit} of {rated} {unit} rated peak ({pct}%)").format(
                value=fmt_num(m.value), unit=m.unit, rated=fmt_num(m.rated), pct=pct
            )
        elif m.value is not None:
            words = tr("{value} {unit} (no rated peak known for this device)").format(value=fmt_num(m.value), unit=m.unit)
        else:
            words = tr("not measured")
        translated = current_language() != "en"
        if m.reason and not translated:
            words += " — " + m.reason
        elif m.code:  # the self-test said it as data: in the interface's language
            words += " — " + render_parts(m.code, m.params, m.reason, current_language())
        self.words = label(words)
        grid.addWidget(self.words)
        # a translated interface: how it was measured (English, from the self-test) one click away
        self.details = details_section([m.reason]) if translated else None
        if self.details is not None:
            grid.addWidget(self.details)
        self.setAccessibleName(f"{title}: {verdict_word(m.verdict)}. {words}")
        self.setToolTip(words)


class Busy(QWidget):
    """A progress bar with a line of text under it, for a job that runs in the background."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(False)
        self.bar.setAccessibleName(tr("Progress"))
        self.text = label("")
        lay.addWidget(self.bar)
        lay.addWidget(self.text)

    def update_progress(self, text: str, fraction: float) -> None:
        if fraction < 0:
            self.bar.setRange(0, 0)  # busy indicator
        else:
            self.bar.setRange(0, 1000)
            self.bar.setValue(int(fraction * 1000))
        self.text.setText(text)
        self.bar.setAccessibleDescription(text)


def clear_layout(lay: QVBoxLayout | QHBoxLayout) -> None:
    while lay.count():
        item = lay.takeAt(0)
        if item is None:
            break
        w = item.widget()
        sub = item.layout()
        if w is not None:
            w.setParent(None)
            w.deleteLater()
        elif isinstance(sub, (QVBoxLayout, QHBoxLayout)):
            clear_layout(sub)


def details_section(lines: list[str], title: str = "") -> Collapsible | None:
    """A closed "Details" section holding the core's full English text (versions, flags, paths, data notes).

    A translated interface words every decision in its own language; the exact English the CLI prints stays
    one click away for whoever wants it (or has to paste it into a bug report). None when there is nothing.
    """
    lines = [ln for ln in lines if ln]
    if not lines:
        return None
    inner = QWidget()
    lay = QVBoxLayout(inner)
    lay.setContentsMargins(22, 0, 0, 0)
    for ln in lines:
        lay.addWidget(label(ln))
    return Collapsible(title or tr("Details (in English)"), inner)


def step_heading(step: Step, language: str) -> tuple[str, bool]:
    """(the title shown for an install step, whether it is translated): its title code worded in ``language``
    (gpusetup.messages, the catalogue every surface uses; it names what the step acts on); the core's English
    title in English, or for a step without a code (a plan saved by an older version)."""
    if step.title_code is None or lang_code(language) == "en":
        return step.title, False
    return step_title(step, language), True


class PathDialog(QDialog):
    """Where a folder is, to copy (shown when no file manager opens it)."""

    def __init__(self, path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("Log folder"))
        lay = QVBoxLayout(self)
        lay.addWidget(label(tr("No file manager could open the folder. It is here:")))
        row = QHBoxLayout()
        self.path = QLineEdit(str(path))
        self.path.setReadOnly(True)
        self.path.setAccessibleName(tr("Folder path"))
        row.addWidget(self.path, 1)
        self.copy = QPushButton(tr("&Copy"))
        self.copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(str(path)))
        row.addWidget(self.copy)
        lay.addLayout(row)
        close = QPushButton(tr("Close"))
        close.clicked.connect(self.accept)
        lay.addWidget(close, 0, Qt.AlignmentFlag.AlignRight)


def open_folder(parent: QWidget, path: Path) -> PathDialog | None:
    """Open ``path`` in the file manager; where that is not possible, show the path with a Copy button."""
    with contextlib.suppress(OSError):
        path.mkdir(parents=True, exist_ok=True)
    if QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
        return None
    dialog = PathDialog(path, parent)
    dialog.show()
    return dialog
