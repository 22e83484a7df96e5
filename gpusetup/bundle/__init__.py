"""Support bundles: one zip with everything a support engineer needs, and nothing private.

``build_bundle()`` collects the report and raw outputs (each with the command that produced it, its exit
code and duration), redacts them, and writes a zip with a ``manifest.json`` (sha256 and the reason for every
file, the kinds of redaction made, what was cut to respect the size cap). ``read_bundle()`` is the support
side: it verifies the manifest and rejects a truncated or tampered bundle with a clear message.
"""

from gpusetup.bundle.collect import BundleResult, CollectItem, build_bundle, planned_items
from gpusetup.bundle.read import Bundle, BundleError, read_bundle

__all__ = ["Bundle", "BundleError", "BundleResult", "CollectItem", "build_bundle", "planned_items", "read_bundle"]
