"""gpusetup: detect, resolve, set up and verify a GPU deep-learning stack."""

__version__ = "0.1.0"
