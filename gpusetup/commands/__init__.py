"""One module per CLI sub-command. Each has ``register(subparsers)`` and keeps heavy imports inside its
handler, so ``gpusetup diagnose`` starts fast and never imports Qt or numpy."""
