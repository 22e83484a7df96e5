"""Build a signed compat data bundle for ``gpusetup db update``.

    python scripts/make_compat_bundle.py --key compat-update-ed25519.pem --version 2026.12.01 --out dist/compat

Publishes resources/compat/*.json with a manifest (sha256 + size per file) signed by the Ed25519 private key
whose public half is in resources/keys/compat-update-ed25519.pub. Upload the output directory as-is.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cryptography.hazmat.primitives import serialization

from gpusetup.compat.update import build_bundle
from gpusetup.resources import resource


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--key", required=True, type=Path, help="Ed25519 private key (PEM, PKCS#8)")
    ap.add_argument("--version", required=True, help="bundle version, YYYY.MM.DD[.N]; must not be older than the data in use")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--src", type=Path, default=resource("compat"))
    args = ap.parse_args()
    key = serialization.load_pem_private_key(args.key.read_bytes(), password=None)
    out = build_bundle(args.src, args.out, key, args.version)
    print(f"bundle written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
