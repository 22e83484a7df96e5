"""Entry point of the frozen (PyInstaller) ``gpusetup`` command-line program."""

import sys

if sys.argv[1:2] == ["--gpusetup-fetch-uv"]:  # a step of an install plan (gpusetup/install/uvfetch.py)
    from gpusetup.install.uvfetch import main as fetch_uv

    raise SystemExit(fetch_uv(sys.argv[2:]))

from gpusetup.cli import main  # noqa: E402

raise SystemExit(main())
