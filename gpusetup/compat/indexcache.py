"""Package-index pages, read once and kept on disk as the parsed files list with the page's validators.

One reader for every part of gpusetup that asks an index (the live check, the download-size walk, the
maintainers' refresh tool):

- **Kept on disk**, per page URL: the page's ``ETag`` / ``Last-Modified`` and the parsed files (file name,
  URL, Requires-Python, size, upload time, yanked, PEP 658 flag) — not the page. A fresh entry (younger
  than ``max_age``) is used as it is; an older one is revalidated with a conditional request (``If-None-Match``
  / ``If-Modified-Since``), and a ``304 Not Modified`` costs a few hundred bytes and no parsing.
- **Read concurrently**: :meth:`IndexCache.pages` asks for several pages at once.
- **Private**: the folder is created 0700 and every file 0600 (:mod:`gpusetup.paths`); an index URL's
  credentials never reach the disk or a message — entries are keyed by the URL with its user-info masked
  (:func:`gpusetup.credentials.scrub`), and the file URLs are stored as the index wrote them minus user-info.
- **Bounded**: every read has a size limit, a per-read timeout and a deadline for the whole download
  (:class:`gpusetup.compat.refresh.Http`); a cache file larger than :data:`MAX_ENTRY_BYTES` is ignored.

The folder comes from :func:`gpusetup.paths.cache_dir` (platformdirs; empty XDG variables are ignored).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from gpusetup import credentials
from gpusetup.paths import PRIVATE_DIR, cache_dir, write_private

MAX_ENTRY_BYTES = 16 << 20
MISSING = object()  # IndexCache.recall: no stored answer
UNREACHABLE_SECONDS = 300.0  # an index that did not answer is not asked again for this long (a later plan)
WORKERS = 16
FORMAT = 2  # bump when the stored fields change (older entries are then read again)


def default_folder() -> Path:
    return cache_dir() / "index"


@dataclass(frozen=True)
class Page:
    """One project page: its files (``refresh.IndexFile``) and how it was obtained."""

    url: str  # the page URL with user-info masked
    files: list[Any]
    how: str  # "cache" (fresh, not asked) / "revalidated" (304) / "fetched" / "memory"
    fetched: float  # when the index last confirmed it (epoch seconds)


class IndexCache:
    """Index pages for this process, backed by a private folder on disk (None: memory only)."""

    def __init__(self, http: Any = None, folder: Path | None = None, *, max_age: float = 6 * 3600,
                 timeout: float = 4.0, deadline: float | None = None, now: float | None = None) -> None:
        self._http = http
        self.folder = folder
        self.max_age = max_age
        self.timeout = timeout
        self.deadline = deadline
        self.now = now
        self._mem: dict[str, Page] = {}
        self.meta: dict[str, dict[str, Any]] = {}
        self._answers: dict[tuple[str, str], tuple[float, Any]] = {}
        self._lock = threading.Lock()
        self._dir_ready = False
        self._inflight: dict[tuple[str, str], threading.Event] = {}
        self._failed: dict[str, Exception] = {}  # the last read of a page that failed, for threads waiting on it

    # ------------------------------------------------------------------------------------ plumbing

    @property
    def http(self) -> Any:
        with self._lock:
            if self._http is None:
                from gpusetup.compat import refresh  # lazy: requests is needed only when a page is read

                self._http = refresh.Http(timeout=self.timeout, deadline=self.deadline)
            return self._http

    def _clock(self) -> float:
        return time.time() if self.now is None else self.now

    def _path(self, kind: str, key: str) -> Path | None:
        if self.folder is None:
            return None
        digest = hashlib.sha256(f"{kind}\0{key}".encode()).hexdigest()[:32]
        return self.folder / f"{kind}-{digest}.json"

    def _ensure_dir(self) -> bool:
        if self.folder is None:
            return False
        if not self._dir_ready:
            try:
                _private_tree(self.folder)
                self._dir_ready = True
            except OSError:
                return False
        return True

    def load(self, kind: str, key: str) -> dict[str, Any] | None:
        """A stored entry (a dict), or None when absent, unreadable, too large or of another format."""
        path = self._path(kind, key)
        if path is None:
            return None
        try:
            st = path.stat()
            if st.st_size > MAX_ENTRY_BYTES:
                return None
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("key") != key:
            return None
        return doc

    def store(self, kind: str, key: str, value: dict[str, Any]) -> None:
        path = self._path(kind, key)
        if path is None or not self._ensure_dir():
            return
        with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
            write_private(path, json.dumps({"format": FORMAT, "key": key, **value}, separators=(",", ":")))

    # -------------------------------------------------------------------------------------- pages

    def _once(self, kind: str, key: str) -> threading.Event | None:
        """Single flight: None when this thread is to read ``key`` (call :meth:`_done` after), else the event to wait
        for while another thread reads it (the plan's three walks ask for the same pages and metadata at once)."""
        with self._lock:
            ev = self._inflight.get((kind, key))
            if ev is None:
                self._inflight[(kind, key)] = threading.Event()
                return None
            return ev

    def _done(self, kind: str, key: str) -> None:
        with self._lock:
            ev = self._inflight.pop((kind, key), None)
        if ev is not None:
            ev.set()

    def page(self, index: str, project: str, *, max_age: float | None = None, http: Any = None) -> Page:
        """The files of ``project`` on ``index`` (raises ``refresh.RefreshError`` when it cannot be read).
        ``http``: the client to ask with when the page must be read (a caller's proxy and timeouts).
        A page another thread is reading is waited for, not read twice."""
        from gpusetup.compat import refresh as R  # lazy: see http

        url = R.project_url(index, project)
        key = credentials.scrub(url)
        age_limit = self.max_age if max_age is None else max_age
        now = self._clock()
        with self._lock:
            hit = self._mem.get(key)
        if hit is not None and now - hit.fetched < age_limit:
            return hit
        wait = self._once("page", key)
        if wait is not None:
            wait.wait(timeout=(getattr(http, "deadline", None) or 60.0) + 5.0)
            with self._lock:
                hit = self._mem.get(key)
            if hit is not None and self._clock() - hit.fetched < age_limit:
                return hit
            with self._lock:
                failed = self._failed.get(key)
            if failed is not None:  # the other reader's answer: the index did not give the page
                raise failed
            return self._page(url, key, age_limit, self._clock(), http)  # the other reader took too long
        try:
            return self._page(url, key, age_limit, now, http)
        except R.RefreshError as exc:
            with self._lock:
                self._failed[key] = exc
            raise
        finally:
            self._done("page", key)

    def _page(self, url: str, key: str, age_limit: float, now: float, http: Any) -> Page:
        from gpusetup.compat import refresh as R  # lazy: see http

        failed = self.load("unreachable", key)
        if failed is not None and now - float(failed.get("at", 0)) < (
                age_limit if "(404)" in str(failed.get("error")) else UNREACHABLE_SECONDS):
            # asked a moment ago and the index did not answer: say so again without waiting for it again
            raise R.RefreshError(str(failed.get("error", f"{key}: unreachable")))
        entry = self.load("page", key)
        unmask = _unmasker(key, url)
        if entry is not None and now - float(entry.get("fetched", 0)) < age_limit:
            page = Page(key, [_file(f, unmask) for f in entry["files"]], "cache", float(entry["fetched"]))
        else:
            etag = entry.get("etag") if entry else None
            modified = entry.get("last_modified") if entry else None
            try:
                resp = (http or self.http).request(url, accept=R.JSON_ACCEPT, etag=etag, last_modified=modified)
            except R.RefreshError as exc:
                # an index that did not answer is not asked again for a few minutes; one that has no such project
                # (404: an answer, not a failure) for as long as a page would be kept
                self.store("unreachable", key, {"at": now, "error": credentials.scrub(str(exc))})
                raise
            if resp.status == 304 and entry is not None:
                files = [_file(f, unmask) for f in entry["files"]]
                self.store("page", key, {**entry, "fetched": now})
                page = Page(key, files, "revalidated", now)
            else:
                files = R.parse_index_page(resp.body, resp.url, resp.content_type)
                headers = {k.lower(): v for k, v in resp.headers.items()}
                self.store("page", key, {"url": key, "fetched": now, "etag": headers.get("etag"),
                                         "last_modified": headers.get("last-modified"),
                                         "files": _rows(files)})
                page = Page(key, files, "fetched", now)
        with self._lock:
            self._mem[key] = page
            self._failed.pop(key, None)
        return page

    def pages(self, wanted: Iterable[tuple[str, str]], *, max_age: float | None = None,
              http: Any = None) -> dict[tuple[str, str], Page | Exception]:
        """Several pages read side by side: (index, project) → Page, or the error that stopped it."""
        todo = list(dict.fromkeys(wanted))

        def one(item: tuple[str, str]) -> Page | Exception:
            try:
                return self.page(item[0], item[1], max_age=max_age, http=http)
            except Exception as exc:  # noqa: BLE001 - handed back to the caller, per page
                return exc

        if len(todo) <= 1:
            return {item: one(item) for item in todo}
        with ThreadPoolExecutor(max_workers=min(WORKERS, len(todo))) as pool:
            return dict(zip(todo, pool.map(one, todo), strict=True))

    def forget(self) -> None:
        """Drop what this process remembers (the disk entries stay)."""
        with self._lock:
            self._mem.clear()
            self.meta.clear()
            self._answers.clear()
            self._failed.clear()

    # ------------------------------------------------------------------------------------ answers

    def _answer_key(self, question: Any, page: Page | None) -> str:
        # a question may hold index URLs with their credentials: the key (stored in the file) never does
        return credentials.scrub(json.dumps([question, page.url if page else None, page.fetched if page else None],
                                            sort_keys=True, default=str))

    def recall(self, kind: str, question: Any, *, valid_for: float | None = None, page: Page | None = None) -> Any:
        """An answer stored by :meth:`remember` (``MISSING`` when there is none, or it is older than ``valid_for``
        seconds, or was derived from another version of ``page``)."""
        key = self._answer_key(question, page)
        now = self._clock()
        with self._lock:
            hit = self._answers.get((kind, key))
        if hit is not None and (valid_for is None or now - hit[0] < valid_for):
            return hit[1]
        stored = self.load(kind, key)
        if stored is None or (valid_for is not None and now - float(stored.get("at", 0)) >= valid_for):
            return MISSING
        with self._lock:
            self._answers[(kind, key)] = (float(stored.get("at", now)), stored.get("value"))
        return stored.get("value")

    def remember(self, kind: str, question: Any, value: Any, *, page: Page | None = None) -> None:
        key = self._answer_key(question, page)
        now = self._clock()
        with self._lock:
            if len(self._answers) > 2000:
                self._answers.clear()
            self._answers[(kind, key)] = (now, value)
        self.store(kind, key, {"at": now, "value": value})

    def answer(self, kind: str, question: Any, compute: Any, *, valid_for: float | None = None,
               page: Page | None = None) -> Any:
        """An answer derived from pages (JSON-serialisable), kept so a warm plan does not derive it again: tied to
        ``page`` (valid while the page is the one it was derived from) or to a lifetime ``valid_for`` seconds."""
        got = self.recall(kind, question, valid_for=valid_for, page=page)
        if got is MISSING:
            got = compute()
            self.remember(kind, question, got, page=page)
        return got

    # ----------------------------------------------------------------------------------- metadata

    def metadata_or_read(self, url: str, read: Any) -> dict[str, Any]:
        """A wheel's METADATA fields: stored ones, else ``read()`` (which raises when it cannot), stored — and read
        once when several threads ask for the same wheel at the same time."""
        key = credentials.scrub(url.split("#")[0])
        got = self.metadata(url)
        if got is not None:
            return got
        wait = self._once("metadata", key)
        if wait is not None:
            wait.wait(timeout=60.0)
            got = self.metadata(url)
            if got is not None:
                return got
            fields = read()
            self.store_metadata(url, fields)
            return dict(fields)
        try:
            fields = read()
            self.store_metadata(url, fields)
            return dict(fields)
        finally:
            self._done("metadata", key)

    def metadata(self, url: str) -> dict[str, Any] | None:
        """A wheel's parsed METADATA fields stored earlier (files on an index never change under one URL)."""
        key = credentials.scrub(url.split("#")[0])
        with self._lock:
            hit = self.meta.get(key)
        if hit is not None:
            return hit
        got = self.load("metadata", key)
        if got is not None:
            with self._lock:
                self.meta[key] = got
        return got

    def store_metadata(self, url: str, fields: dict[str, Any]) -> None:
        key = credentials.scrub(url.split("#")[0])
        with self._lock:
            if len(self.meta) > 4000:
                self.meta.clear()
            self.meta[key] = fields
        self.store("metadata", key, fields)


_SHARED: IndexCache | None = None
_SHARED_LOCK = threading.Lock()


def shared() -> IndexCache:
    """The process's index cache (the live check and the download-size walk read the same pages once): on disk
    in :func:`default_folder`, in memory only when the live index check is off (``GPUSETUP_LIVE=off``, as the
    test suite runs)."""
    global _SHARED
    with _SHARED_LOCK:
        live = os.environ.get("GPUSETUP_LIVE", "on").strip().lower() not in ("0", "off", "no", "false")
        folder = default_folder() if live else None
        if _SHARED is None or _SHARED.folder != folder:
            _SHARED = IndexCache(folder=folder)
        return _SHARED


def forget() -> None:
    """Forget what the shared cache holds, in memory and on disk (a changed index; tests that change what their
    local index serves under the same URL)."""
    with _SHARED_LOCK:
        if _SHARED is not None:
            _SHARED.forget()
            if _SHARED.folder is not None and _SHARED.folder.is_dir():
                for f in _SHARED.folder.glob("*-*.json"):
                    with contextlib.suppress(OSError):
                        f.unlink()


def _private_tree(folder: Path) -> None:
    """Create ``folder`` 0700 (its missing parents too); tighten gpusetup's own folder if it was left open."""
    folder.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    if folder.stat().st_mode & 0o077:
        os.chmod(folder, PRIVATE_DIR)


def _rows(files: Sequence[Any]) -> list[list[Any]]:
    """The fields of each IndexFile kept on disk (compact: a list, not the page), every URL scrubbed of
    credentials. One scrub for the whole page: torch's page has ~7,000 files, and each scrub reads the
    environment for new secrets (per file that was 1.7 million environment reads, most of a cold plan's CPU)."""
    urls = [f.url for f in files]
    joined = credentials.scrub("\n".join(urls))
    clean = joined.split("\n")
    if len(clean) != len(urls):  # a secret with a line break in it: scrub one by one
        clean = [credentials.scrub(u) for u in urls]
    return [[f.filename, u, f.requires_python, f.size, f.upload_time, f.yanked, f.metadata_url is not None]
            for f, u in zip(files, clean, strict=True)]


def _unmasker(masked: str, real: str) -> Any:
    """Put the page's credentials back into the stored (masked) file URLs of the same host, in memory only."""

    m, r = urlsplit(masked), urlsplit(real)
    if m.netloc == r.netloc:
        return lambda u: u
    mp, rp = f"{m.scheme}://{m.netloc}", f"{r.scheme}://{r.netloc}"
    return lambda u: rp + u[len(mp):] if u.startswith(mp) else u


def _file(row: Sequence[Any], unmask: Any = None) -> Any:
    from gpusetup.compat import refresh as R  # lazy: see IndexCache.http

    name, url, requires_python, size, uploaded, yanked, meta = row
    if unmask is not None:
        url = unmask(url)
    return R.IndexFile(filename=name, url=url, requires_python=requires_python, size=size, upload_time=uploaded,
                       yanked=bool(yanked), metadata_url=url.split("#")[0] + ".metadata" if meta else None)
