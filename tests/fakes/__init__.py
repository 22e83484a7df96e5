"""Fakes for the core's chokepoints (runner, NVML, libcuda, filesystem roots), fed by recorded outputs."""
