"""Light and dark palettes on the Fusion style, following the system's colour scheme by default.

Qt's own ``styleHints().colorScheme()`` tells the system's choice (Qt >= 6.5); under the offscreen
platform it is ``Unknown``, so the palette is applied explicitly, which also makes screenshots testable.
Widgets take colours from palette roles, never hard-coded, except the three status colours below.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory

SCHEMES = ("auto", "light", "dark")

# status colours chosen to keep 4.5:1 contrast on both palettes when used as text
STATUS = {
    "light": {"pass": "#1b7f3b", "warn": "#9a6200", "fail": "#b3261e", "info": "#2a5db0", "skip": "#6b6b6b"},
    "dark": {"pass": "#6fd08c", "warn": "#f2c14e", "fail": "#ff8a80", "info": "#8ab4f8", "skip": "#a0a0a0"},
}


def system_is_dark() -> bool:
    hints = QGuiApplication.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    if scheme is None:
        return False
    return scheme() == Qt.ColorScheme.Dark


def resolve_scheme(scheme: str) -> str:
    if scheme == "auto":
        return "dark" if system_is_dark() else "light"
    return scheme if scheme in ("light", "dark") else "light"


def light_palette() -> QPalette:
    p = QPalette()
    c = QColor
    p.setColor(QPalette.ColorRole.Window, c("#f4f5f7"))
    p.setColor(QPalette.ColorRole.WindowText, c("#1d1f23"))
    p.setColor(QPalette.ColorRole.Base, c("#ffffff"))
    p.setColor(QPalette.ColorRole.AlternateBase, c("#ffffff"))  # card background
    p.setColor(QPalette.ColorRole.ToolTipBase, c("#ffffff"))
    p.setColor(QPalette.ColorRole.ToolTipText, c("#1d1f23"))
    p.setColor(QPalette.ColorRole.PlaceholderText, c("#767a82"))
    p.setColor(QPalette.ColorRole.Text, c("#1d1f23"))
    p.setColor(QPalette.ColorRole.Button, c("#e9ebef"))
    p.setColor(QPalette.ColorRole.ButtonText, c("#1d1f23"))
    p.setColor(QPalette.ColorRole.BrightText, c("#ffffff"))
    p.setColor(QPalette.ColorRole.Highlight, c("#2f6fde"))
    p.setColor(QPalette.ColorRole.HighlightedText, c("#ffffff"))
    p.setColor(QPalette.ColorRole.Link, c("#1f5fc9"))
    p.setColor(QPalette.ColorRole.Mid, c("#c4c8d0"))
    p.setColor(QPalette.ColorRole.Midlight, c("#dfe2e7"))
    p.setColor(QPalette.ColorRole.Dark, c("#9aa0aa"))
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, c("#9a9ea6"))
    return p


def dark_palette() -> QPalette:
    p = QPalette()
    c = QColor
    p.setColor(QPalette.ColorRole.Window, c("#202226"))
    p.setColor(QPalette.ColorRole.WindowText, c("#e6e7ea"))
    p.setColor(QPalette.ColorRole.Base, c("#16171a"))
    p.setColor(QPalette.ColorRole.AlternateBase, c("#2b2d33"))  # card background, lighter than inputs
    p.setColor(QPalette.ColorRole.ToolTipBase, c("#2a2c31"))
    p.setColor(QPalette.ColorRole.ToolTipText, c("#e6e7ea"))
    p.setColor(QPalette.ColorRole.PlaceholderText, c("#8b8f97"))
    p.setColor(QPalette.ColorRole.Text, c("#e6e7ea"))
    p.setColor(QPalette.ColorRole.Button, c("#2d3036"))
    p.setColor(QPalette.ColorRole.ButtonText, c("#e6e7ea"))
    p.setColor(QPalette.ColorRole.BrightText, c("#ffffff"))
    p.setColor(QPalette.ColorRole.Highlight, c("#4f8ef7"))
    p.setColor(QPalette.ColorRole.HighlightedText, c("#0b0c0e"))
    p.setColor(QPalette.ColorRole.Link, c("#8ab4f8"))
    p.setColor(QPalette.ColorRole.Mid, c("#4a4d55"))
    p.setColor(QPalette.ColorRole.Midlight, c("#383b41"))
    p.setColor(QPalette.ColorRole.Dark, c("#111214"))
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, c("#6d7078"))
    return p


_current = {"scheme": "light"}


def apply(app: QApplication, scheme: str = "auto") -> str:
    """Fusion style plus our palette; returns the scheme actually applied ("light" or "dark")."""
    resolved = resolve_scheme(scheme)
    if app.style().name().lower() != "fusion":  # setting a style is slow; do it once
        fusion = QStyleFactory.create("Fusion")
        if fusion is not None:
            app.setStyle(fusion)
    app.setPalette(dark_palette() if resolved == "dark" else light_palette())
    _current["scheme"] = resolved
    return resolved


def follow_system(app: QApplication, wanted: Callable[[], str]) -> None:
    """Re-apply the palette when the OS switches between light and dark (Qt >= 6.5), while the user's
    choice (``wanted()``) is "auto"."""
    hints = QGuiApplication.styleHints()
    signal = getattr(hints, "colorSchemeChanged", None)
    if signal is not None:
        signal.connect(lambda *_: apply(app, "auto") if wanted() == "auto" else None)


def current() -> str:
    return _current["scheme"]


def status_color(kind: str) -> str:
    return STATUS[current()].get(kind, STATUS[current()]["info"])
