"""Entry point of the frozen (PyInstaller) GPU Setup window: opens the wizard."""

from gpusetup.cli import gui_main

raise SystemExit(gui_main())
