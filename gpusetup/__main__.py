from gpusetup.cli import main

raise SystemExit(main())
