"""Real Debian and Ubuntu systems for the installer scripts, without touching this machine.

A minimal root of the distribution is made with debootstrap (cached as a tarball under ~/.cache, so a second
test run starts in seconds), and a local apt archive of stand-in packages replaces its sources: packages with
the real names, versions and dependency shapes of the NVIDIA driver packages (copied from the distributions'
own Packages indexes, see the callers), whose payload is a few marker files instead of a driver. The scripts
then run for real inside the root with chroot: real apt, real dpkg, real debconf, a real package database to
compare before and after.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import subprocess
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

INSTALLERS = Path(__file__).resolve().parents[2] / "installers"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpusetup-tests" / "roots"

# the distribution, its archive, and the debootstrap script that knows it (Debian 12's debootstrap has no
# "noble" script; "gutsy" is its generic Ubuntu script)
DISTS = {
    "bookworm": ("http://deb.debian.org/debian", "bookworm", []),
    "noble": ("http://archive.ubuntu.com/ubuntu", "gutsy", ["--no-check-gpg"]),  # no Ubuntu keyring on Debian
}
ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "HOME": "/root"}


@dataclass
class Deb:
    name: str
    version: str
    depends: str = ""
    provides: str = ""
    files: dict[str, str] = field(default_factory=dict)  # path -> content ("#!" first: executable)
    templates: str = ""  # debconf templates
    config: str = ""  # debconf config script (asks the question)
    section: str = "non-free/kernel"


def needs_root_and_debootstrap() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (chroot) for the installer scripts' real runs")
    if not shutil.which("debootstrap") or not shutil.which("dpkg-deb"):
        pytest.skip("debootstrap is not installed (apt-get install debootstrap; .ci/run installs it)")


def _debootstrap(dist: str) -> Path:
    """A cached tarball of a minimal root of `dist`."""
    CACHE.mkdir(parents=True, exist_ok=True)
    tarball = CACHE / f"{dist}-minbase.tar"
    if tarball.exists():
        return tarball
    mirror, script, extra = DISTS[dist]
    work = CACHE / f"{dist}.building"
    shutil.rmtree(work, ignore_errors=True)
    argv = ["debootstrap", "--variant=minbase", *extra, dist, str(work), mirror]
    if script != dist:
        argv.append(f"/usr/share/debootstrap/scripts/{script}")
    res = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    if res.returncode != 0:
        pytest.fail(f"debootstrap {dist} failed (exit {res.returncode}):\n{res.stdout[-2000:]}{res.stderr[-2000:]}")
    tmp = tarball.with_suffix(".tmp")
    with tarfile.open(tmp, "w") as tar:
        tar.add(work, arcname=".")
    tmp.replace(tarball)
    shutil.rmtree(work, ignore_errors=True)
    return tarball


def make_root(dist: str, where: Path) -> Path:
    tarball = _debootstrap(dist)
    where.mkdir(parents=True)
    with tarfile.open(tarball) as tar:
        tar.extractall(where, filter="fully_trusted")
    shutil.copytree(INSTALLERS, where / "opt" / "installers")
    return where


def build_deb(deb: Deb, out: Path, arch: str = "amd64") -> Path:
    tree = out / f"{deb.name}_{deb.version}.tree"
    (tree / "DEBIAN").mkdir(parents=True)
    control = [f"Package: {deb.name}", f"Version: {deb.version}", f"Architecture: {arch}",
               "Maintainer: gpusetup tests <tests@invalid>", f"Section: {deb.section}", "Priority: optional"]
    if deb.depends:
        control.append(f"Depends: {deb.depends}")
    if deb.provides:
        control.append(f"Provides: {deb.provides}")
    control.append(f"Description: stand-in for {deb.name} (gpusetup installer tests)")
    (tree / "DEBIAN" / "control").write_text("\n".join(control) + "\n")
    if deb.templates:
        (tree / "DEBIAN" / "templates").write_text(deb.templates)
    if deb.config:
        cfg = tree / "DEBIAN" / "config"
        cfg.write_text(deb.config)
        cfg.chmod(0o755)
    for path, text in deb.files.items():
        f = tree / path.lstrip("/")
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
        if text.startswith("#!"):
            f.chmod(0o755)
    target = out / f"{deb.name}_{deb.version.replace(':', '%3a')}_{arch}.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(tree), str(target)], check=True,
                   capture_output=True)
    shutil.rmtree(tree)
    return target


def write_archive(repo: Path, suites: list[str], components: list[str], debs: list[Deb]) -> None:
    """A Debian-style archive on disk: every stand-in in `main` of the first suite, empty indexes elsewhere."""
    pool = repo / "pool"
    pool.mkdir(parents=True, exist_ok=True)
    stanzas = []
    for deb in debs:
        path = build_deb(deb, pool)
        control = subprocess.run(["dpkg-deb", "-f", str(path)], check=True, capture_output=True, text=True).stdout
        data = path.read_bytes()
        stanzas.append(control.rstrip("\n") + f"\nFilename: pool/{path.name}\nSize: {len(data)}\n"
                       f"SHA256: {hashlib.sha256(data).hexdigest()}\n")
    for n, suite in enumerate(suites):
        lines = []
        for comp in components:
            d = repo / "dists" / suite / comp / "binary-amd64"
            d.mkdir(parents=True, exist_ok=True)
            text = "\n".join(stanzas) if (n == 0 and comp == "main") else ""
            (d / "Packages").write_text(text)
            (d / "Packages.gz").write_bytes(gzip.compress(text.encode()))
            for name in ("Packages", "Packages.gz"):
                body = (d / name).read_bytes()
                lines.append(f" {hashlib.sha256(body).hexdigest()} {len(body)} {comp}/binary-amd64/{name}")
        (repo / "dists" / suite / "Release").write_text(
            f"Suite: {suite}\nCodename: {suite}\nArchitectures: amd64\nComponents: {' '.join(components)}\n"
            "SHA256:\n" + "\n".join(lines) + "\n")


def use_archive(root: Path, suites: list[str], components: list[str], debs: list[Deb]) -> None:
    """Replace the root's apt sources with the stand-in archive (nothing is fetched from the network)."""
    write_archive(root / "standin", suites, components, debs)
    (root / "etc" / "apt" / "sources.list").write_text("".join(
        f"deb [trusted=yes] file:/standin {s} {' '.join(components)}\n" for s in suites))
    for extra in (root / "etc" / "apt" / "sources.list.d").glob("*"):
        extra.unlink()
    chroot(root, "apt-get", "update", check=True)


def chroot(root: Path, *argv: str, check: bool = False, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    res = subprocess.run(["chroot", str(root), *argv], capture_output=True, text=True, env=ENV,
                         stdin=subprocess.DEVNULL, timeout=timeout)
    if check and res.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} failed ({res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
    return res


def installed(root: Path) -> dict[str, str]:
    """Every package dpkg has fully installed in the root, with its version (what `dpkg -l` shows as ii)."""
    out = chroot(root, "dpkg-query", "-W", "-f=${db:Status-Abbrev}|${binary:Package}|${Version}\n", check=True).stdout
    return {p: v for s, p, v in (line.split("|") for line in out.splitlines() if line) if s.startswith("ii")}


def audit(root: Path) -> str:
    """`dpkg --audit`: empty when no package is half-installed or half-configured."""
    return chroot(root, "dpkg", "--audit").stdout.strip()


def script(root: Path, name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return chroot(root, "bash", f"/opt/installers/{name}", *args)
