"""One bounded HTTP GET for every download of compatibility data (``db update``, the live index check, the
maintainers' refresh): a size limit and a wall-clock deadline for the *whole* request.

``requests``' ``timeout`` is per socket read: a server that drips one byte a second never trips it, and
``db update`` and the live index check hung past 90 s that way (issue 25). Here the request runs in a worker
thread and the caller waits at most until the deadline; then the connection is shut down (which wakes the
blocked read) and :class:`DeadlineExceeded` is raised. The worker ends with its socket.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any


class DeadlineExceeded(Exception):
    """The whole request took longer than its deadline (``seconds``)."""

    def __init__(self, url: str, seconds: float) -> None:
        self.url = url
        self.seconds = seconds
        super().__init__(f"{url}: no complete answer within {seconds:.0f} s")


class TooLarge(Exception):
    """The body is larger than the limit; nothing more of it was read."""

    def __init__(self, url: str, limit: int) -> None:
        self.url = url
        self.limit = limit
        super().__init__(f"{url}: larger than {limit} bytes, refused")


@dataclass
class Fetched:
    status: int
    reason: str
    url: str  # after redirects
    headers: Mapping[str, str]
    body: bytes  # empty when the status was not one of ``read_status``


def get(session: Any, url: str, *, limit: int, timeout: float, deadline: float | None = None,
        headers: Mapping[str, str] | None = None, read_status: Collection[int] = (200, 206),
        check_url: Callable[[str], object] | None = None) -> Fetched:
    """GET ``url`` through a requests ``session``: at most ``limit`` bytes of body, each read within ``timeout``
    seconds and the whole request before ``deadline`` (a ``time.monotonic()`` value; default: ``timeout``
    seconds from now). ``check_url`` sees the final URL before the body is read (a redirect that must not leave
    https). Raises :class:`DeadlineExceeded`, :class:`TooLarge`, or what requests or ``check_url`` raised."""
    deadline = time.monotonic() + timeout if deadline is None else deadline
    allowed = max(0.0, deadline - time.monotonic())
    box: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            box["result"] = _get(session, url, limit, timeout, deadline, headers, read_status, check_url, box)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=work, daemon=True, name="gpusetup-download")
    worker.start()
    if not done.wait(allowed):
        box["abandoned"] = True
        _abort(box.get("response"))
        raise DeadlineExceeded(url, allowed)
    if "error" in box:
        raise box["error"]
    return box["result"]


def _get(session: Any, url: str, limit: int, timeout: float, deadline: float, headers: Mapping[str, str] | None,
         read_status: Collection[int], check_url: Callable[[str], object] | None, box: dict[str, Any]) -> Fetched:
    read_timeout = max(0.1, min(timeout, deadline - time.monotonic()))
    with session.get(url, headers=dict(headers or {}), stream=True, timeout=read_timeout) as r:
        box["response"] = r
        if box.get("abandoned"):
            _abort(r)
            raise DeadlineExceeded(url, 0.0)
        if check_url is not None:
            check_url(r.url)
        body = b""
        if r.status_code in read_status:
            chunks, total = [], 0
            for chunk in r.iter_content(1 << 16):
                total += len(chunk)
                if total > limit:
                    raise TooLarge(url, limit)
                chunks.append(chunk)
                if time.monotonic() > deadline:
                    raise DeadlineExceeded(url, 0.0)
            body = b"".join(chunks)
        return Fetched(r.status_code, str(r.reason or ""), str(r.url), dict(r.headers), body)


def _abort(response: Any) -> None:
    """Wake a read blocked on this response's socket (shutdown) and close it; best effort."""
    if response is None:
        return
    raw = getattr(response, "raw", None)
    for path in (("_connection", "sock"), ("_fp", "fp", "raw", "_sock")):
        obj: Any = raw
        for attr in path:
            obj = getattr(obj, attr, None)
        if isinstance(obj, socket.socket):
            with contextlib.suppress(OSError):
                obj.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(Exception):
        response.close()
