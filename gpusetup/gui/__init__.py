"""The PySide6 wizard for beginners. The only package that imports Qt; it shows and drives the core."""
