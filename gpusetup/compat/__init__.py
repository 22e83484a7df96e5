"""Compatibility knowledge base and resolver.

- :mod:`gpusetup.compat.db` loads the sourced, dated tables in ``resources/compat/`` (or an updated bundle).
- :func:`gpusetup.compat.resolver.resolve` turns a :class:`~gpusetup.model.Machine` into one
  :class:`~gpusetup.model.FrameworkPlan` per framework.
- :func:`gpusetup.compat.profile.load_machine_file` reads a diagnose report or a small machine profile.
- :mod:`gpusetup.compat.update` downloads and verifies newer data bundles (``gpusetup db update``).
"""
