"""Entry point of the frozen (PyInstaller) ``gpusetup`` command-line program."""

from gpusetup.cli import main

raise SystemExit(main())
