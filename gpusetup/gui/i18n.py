"""Languages: English in the source, Simplified Chinese from a shipped Qt translation.

Our strings go through Qt's ``tr()``; ``resources/translations/gpusetup_zh_CN.ts`` is the editable
translation (Qt Linguist format) and ``gpusetup_zh_CN.qm`` its compiled form (``pyside6-lrelease``).
Qt's own strings (wizard buttons, file dialogs) come from Qt's ``qtbase_<lang>.qm``.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

from gpusetup import i18n as core_i18n
from gpusetup.resources import resource

log = logging.getLogger("gpusetup.gui.i18n")

# code -> name shown in the language menu (each in its own language)
LANGUAGES: dict[str, str] = {"en": "English", "zh_CN": "简体中文"}

_installed: list[QTranslator] = []
_current: list[str] = ["en"]  # the language whose translation is installed (for text that Qt does not translate)


def system_language() -> str:
    name = QLocale.system().name()  # zh_CN, en_US…
    if name.startswith("zh") and not name.startswith(("zh_TW", "zh_HK")):
        return "zh_CN"
    return "en"


def qm_path(lang: str) -> str:
    return str(resource("translations", f"gpusetup_{lang}.qm"))


def install(lang: str) -> bool:
    """Switch the application's language; True when a translation was loaded (always True for English)."""
    app = QCoreApplication.instance()
    if app is None:
        return False
    for t in _installed:
        app.removeTranslator(t)
    _installed.clear()
    _current[0] = "en"
    core_i18n.set_surface("wizard")  # the core's words for a wizard reader: its pages and buttons, not commands
    if lang == "en" or lang not in LANGUAGES:
        QLocale.setDefault(QLocale(QLocale.Language.English, QLocale.Country.UnitedStates))
        core_i18n.set_output_language("en")
        return lang == "en"
    ours = QTranslator(app)
    ok = ours.load(qm_path(lang))
    if ok:
        app.installTranslator(ours)
        _installed.append(ours)
        _current[0] = lang
    else:
        log.warning("translation %s not found at %s", lang, qm_path(lang))
    qt = QTranslator(app)
    if qt.load(f"qtbase_{lang}", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
        app.installTranslator(qt)
        _installed.append(qt)
    QLocale.setDefault(QLocale(lang))
    core_i18n.set_output_language(_current[0])  # what the core words while it works (self-test progress)
    return ok


def current_language() -> str:
    """The language the interface is shown in ("en" until a translation was installed successfully).

    Text from the Qt-free core (finding titles and meanings) is looked up in this language, so it follows
    the same switch as the Qt strings and falls back to English together with them.
    """
    return _current[0]


CONTEXT = "gpusetup"


def tr(text: str, disambiguation: str | None = None) -> str:
    """Translate ``text`` through Qt's translator (context ``gpusetup``). Use ``.format()`` afterwards.

    Every call site passes a string literal, so ``tools``/tests can extract them with ``ast`` into the
    ``.ts`` file and check that each has a Chinese translation.
    """
    return QCoreApplication.translate(CONTEXT, text, disambiguation)
