"""Privacy by default: remove what identifies a person or a machine, or grants access, from bundle text.

What goes: user names (in paths and as known words), host names, IP and MAC addresses, serial numbers,
e-mail addresses, GPU/MIG UUIDs (replaced by stable pseudonyms so several GPUs stay distinguishable), and
secrets — by the variable's name (``*_TOKEN``, ``*KEY*``, ``*PASSWORD*``…) and by the value's shape
(AWS keys, Hugging Face / GitHub / OpenAI-style tokens, JWTs, private key blocks, passwords in URLs).

What stays: versions, PCI addresses (``0000:01:00.0``), error messages — what a support engineer needs.
Each replacement is counted by kind; the bundle's manifest lists the kinds.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import re
import socket
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from gpusetup.report.privacy import pseudonym

_SECRET_NAME = r"[A-Za-z0-9_.-]*(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH)[A-Za-z0-9_.-]*"

# (kind, pattern, replacement) — order matters: secrets and URLs before addresses.
_PATTERNS: list[tuple[str, re.Pattern[str], str]] = [
    ("private-key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S), "[REDACTED private key]"),
    ("bearer", re.compile(r"(?i)(authorization:\s*(?:bearer|basic|token)\s+)(\S+)"), r"\1[REDACTED]"),
    ("bearer", re.compile(r"(?i)(\bbearer\s+)([A-Za-z0-9._~+/-]{16,}=*)"), r"\1[REDACTED]"),
    # NAME=value, NAME: value, "NAME": "value", export NAME='value'
    ("secret", re.compile(rf"""(?i)((?<!://)\b{_SECRET_NAME}\b["']?\s*[=:]\s*["']?)([^\s"',;]+)"""), r"\1[REDACTED]"),
    ("url-credentials", re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/\s:@]+):([^/\s@]+)@"), r"\1[REDACTED]:[REDACTED]@"),
    ("url-token", re.compile(r"(?i)([?&](?:token|access_token|key|api_key|apikey|sig|signature|password|secret)=)([^&\s]+)"), r"\1[REDACTED]"),
    ("aws-key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "[REDACTED aws key]"),
    ("url-userinfo", re.compile(r"(?i)\b((?:https?|git\+https?|ftp)://)([^/\s:@]{8,})@"), r"\1[REDACTED]@"),
    ("token", re.compile(r"\b(?:hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|sk-[A-Za-z0-9_-]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20,}|pypi-[A-Za-z0-9_-]{40,}|npm_[A-Za-z0-9]{30,}|AIza[0-9A-Za-z_-]{35})\b"), "[REDACTED token]"),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b"), "[REDACTED jwt]"),
    ("email", re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b"), "[REDACTED email]"),
    # "Serial Number : 1324…", "serial=…", "<serial>…", and free text: "GPU Serial number 1324021012345"
    ("serial", re.compile(r"(?i)(serial(?:[\s_-]*(?:number|no\.?|num|#))?(?:\s+is)?\s*[:=#]?\s*|<serial>)((?=[A-Za-z-]*\d)[A-Za-z0-9-]{6,})"), r"\1[REDACTED]"),
    ("mac-address", re.compile(r"(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}(?![0-9A-Fa-f:])"), "[REDACTED mac]"),
    ("ipv4-address", re.compile(r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\w.])"), "[REDACTED ip]"),
    # full or compressed IPv6 with at least three groups and a '::' or 8 groups; PCI addresses have '.'
    ("ipv6-address", re.compile(r"(?<![\w:.])(?:(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){1,6}:(?:[0-9A-Fa-f]{1,4}:){0,5}[0-9A-Fa-f]{1,4})(?![\w:.])"), "[REDACTED ip]"),
]
_FIRST_ADDRESS = next(i for i, (kind, _p, _r) in enumerate(_PATTERNS) if kind == "ipv4-address")
_HOSTNAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,62})(?:\.[a-z0-9-]{1,63})*")
_ANY_UUID = re.compile(r"(?<![\w-])[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}(?![\w-])")
_IP_WORDS = {"inet", "inet6", "addr", "address", "ip", "ipv4", "host", "hostname", "server", "nameserver", "via",
             "from", "to", "peer", "gateway", "gw", "src", "dst", "client", "remote", "local", "connect",
             "connecting", "connected", "listen", "listening", "bind", "proxy", "dns", "route", "at", "on", "node",
             "master", "worker", "endpoint", "url", "by"}
_GPU_UUID = re.compile(r"\b(GPU|MIG)-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b")
_VERSIONISH = re.compile(r"(?i)(version|cudnn|cuda|driver|nccl|libnv|\.so)[^\n]{0,24}$")
_HOME = re.compile(r"(?i)(/home/|/Users/|C:\\\\?Users\\\\?)([^/\\\s\"']+)")
_NOT_SECRETS = {"bearer", "basic", "token", "null", "none", "true", "false", "[redacted]", "{", "[", "[]", "{}", "n/a", "<unset>"}
_LOOPBACK = {"127.0.0.1", "0.0.0.0", "255.255.255.255", "::1"}


_ANY_UUID_KIND = "uuid"


def _is_version(text: str, m: re.Match[str]) -> bool:
    """Is this four-part dotted number a version ("tensorrt 8.6.1.6", "jax 0.12.0.1") rather than an IPv4?"""
    line_start = max(text.rfind("\n", max(0, m.start() - 200), m.start()) + 1, m.start() - 200)
    before = text[line_start:m.start()]  # (what precedes it on its line, at most 200 characters: linear time)
    after = text[m.end():m.end() + 8]
    if re.match(r"[:/]\d", after) or before.endswith(("://", "@", "[")):
        return False  # 10.0.0.5:8080, 10.0.0.0/24, http://10.…, user@10.…
    prev = re.findall(r"[A-Za-z][\w.+-]*", before[-40:])
    if prev and prev[-1].lower().rstrip(":=") in _IP_WORDS and re.search(r"[\s:=]\s*$", before):
        return False  # inet 192.168.1.4, via 10.0.0.1, nameserver 8.8.8.8
    if m.group(0).startswith("0."):
        return True  # 0.x.x.x is no host's address; 0.12.0.1 is a version
    if re.search(r"(?:==|>=|<=|~=|!=|=|\b[vV]|[-_])$", before) or re.match(r"(?:[-+~]\w|\.(?:post|dev)|rc\d|[ab]\d)",
                                                                           after):
        return True  # pkg==8.6.1.6, v8.6.1.6, libnvinfer8-8.6.1.6, 8.6.1.6-1+cuda12.0
    prev_word = re.search(r"(?:^|[\s(\[|,])([A-Za-z][\w.+-]*)(?:\s+|\s*:\s*)$", before)
    if prev_word and re.search(r"[A-Za-z0-9-]\.[A-Za-z][A-Za-z0-9-]*\.[A-Za-z]{2,}$", prev_word.group(1)):
        return False  # "vm.corp.example 10.20.30.40": a host name, then its address
    if prev_word:
        return True  # "tensorrt 8.6.1.6", "Version: 8.6.1.6", package tables (pip list, dpkg -l, conda list)
    return bool(_VERSIONISH.search(text[max(0, m.start() - 40): m.start()]))


@dataclass
class Redactor:
    """Redacts text; knows this machine's user and host names so it can remove them as plain words too."""

    usernames: set[str] = field(default_factory=set)
    hostnames: set[str] = field(default_factory=set)
    counts: Counter[str] = field(default_factory=Counter)

    @classmethod
    def for_this_machine(cls, extra_users: Iterable[str] = (), extra_hosts: Iterable[str] = ()) -> Redactor:
        users = {u for u in extra_users if u}
        for getter in (getpass.getuser, lambda: os.path.basename(os.path.expanduser("~"))):
            with contextlib.suppress(Exception):  # no user name is fine
                users.add(getter())
        hosts = {h for h in extra_hosts if h}
        try:
            hosts.add(socket.gethostname())
            hosts.add(socket.getfqdn())
        except OSError:
            pass
        return cls(usernames=users, hostnames=hosts)

    def _host_patterns(self) -> list[re.Pattern[str]]:
        """This machine's names, each also in its longer forms (node17 → node17.cluster.example.org, as topo -m,
        prompts and kernel logs write it). A name of one or two letters ("vm") would erase ordinary words, so
        only its dotted forms are taken (vm.corp.example, not the "vm" of vm.max_map_count)."""
        out: list[re.Pattern[str]] = []
        names: set[str] = set()
        for h in self.hostnames:
            h = h.strip().rstrip(".").lower()
            if not h or h in ("localhost", "localhost.localdomain") or not _HOSTNAME.fullmatch(h):
                continue
            names.add(h)
            names.add(h.split(".")[0])
        for name in sorted(names, key=len, reverse=True):
            if len(name) >= 3:
                out.append(re.compile(rf"(?i)(?<![\w.-]){re.escape(name)}(?:\.[A-Za-z0-9-]+)*(?![\w-])"))
            else:
                out.append(re.compile(rf"(?i)(?<![\w.-]){re.escape(name)}(?:\.[A-Za-z0-9-]+)+(?![\w.-])"))
        return out

    def _known_words(self) -> list[tuple[str, str, str]]:
        words = []
        for u in sorted(self.usernames, key=len, reverse=True):
            # 'root' and very short names would erase ordinary words; paths still catch them
            if u and u not in ("root", "user", "admin") and len(u) >= 3:
                words.append(("username", u, "[user]"))
        return words

    def redact(self, text: str) -> str:
        # secrets, URLs, e-mail and MAC addresses first; then this machine's names, *before* the IP addresses, so
        # that "vm.corp.example 10.20.30.40" is not read as "package 1.2.3.4" (a version) and the IP kept
        for kind, pattern, repl in _PATTERNS[:_FIRST_ADDRESS]:
            text = self._sub(kind, pattern, repl, text)
        for pat in self._host_patterns():
            text, n = pat.subn("[REDACTED host]", text)
            if n:
                self.counts["hostname"] += n
        for kind, pattern, repl in _PATTERNS[_FIRST_ADDRESS:]:
            text = self._sub(kind, pattern, repl, text)
        text = self._sub_uuid(text)
        text = self._sub(_ANY_UUID_KIND, _ANY_UUID, "[REDACTED uuid]", text)
        text = self._sub_home(text)
        for kind, word, repl in self._known_words():
            pat = re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])")
            text, n = pat.subn(repl, text)
            if n:
                self.counts[kind] += n
        return text

    def _sub(self, kind: str, pattern: re.Pattern[str], repl: str, text: str) -> str:
        def one(m: re.Match[str]) -> str:
            if kind == "secret" and m.group(2).lower() in _NOT_SECRETS:
                return m.group(0)
            if kind == "ipv4-address" and (m.group(0) in _LOOPBACK or _is_version(text, m)):
                return m.group(0)
            if kind == "ipv6-address" and m.group(0) in _LOOPBACK:
                return m.group(0)
            self.counts[kind] += 1
            return m.expand(repl)

        return pattern.sub(one, text)

    def _sub_uuid(self, text: str) -> str:
        def one(m: re.Match[str]) -> str:
            self.counts["gpu-uuid"] += 1
            return pseudonym(m.group(0), m.group(1))

        return _GPU_UUID.sub(one, text)

    def _sub_home(self, text: str) -> str:
        def one(m: re.Match[str]) -> str:
            if m.group(2) in ("[user]", "Shared", "Public", "Default"):
                return m.group(0)
            self.counts["username"] += 1
            return f"{m.group(1)}[user]"

        return _HOME.sub(one, text)

    @property
    def kinds(self) -> dict[str, int]:
        return dict(sorted(self.counts.items()))
