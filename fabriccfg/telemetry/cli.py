"""CLI collectors: run each device's telemetry commands over SSH (netmiko) and parse the output.

Several devices run in threads (netmiko is blocking; the cost is paramiko crypto and netmiko's
read loops, ~40-50 ms of CPU per session, ``netmiko_pysnmp.md`` §7). One session per device runs all
of its commands. A device that cannot be reached, or a command whose output does not parse, is an
error on that device in the snapshot, never an exception.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fabriccfg import secrets
from fabriccfg.session import Session
from fabriccfg.targets import Endpoint
from fabriccfg.telemetry import batch
from fabriccfg.telemetry.model import Sample
from fabriccfg.telemetry.spec import CliCommand, CliContext

log = logging.getLogger(__name__)

_NOT_FOUND = re.compile(r"command not found|not recognized|Invalid input|% Unrecognized command|No such file",
                        re.IGNORECASE)


@dataclass
class CliJob:
    """One device's commands: ``(command line, spec, parser context)`` each."""

    endpoint: Endpoint
    commands: list[tuple[str, CliCommand, CliContext]]


@dataclass
class CliResult:
    device: str
    samples: list[Sample] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    finished: float = 0.0
    ok: set[str] = field(default_factory=set)
    """Names of the commands that ran and parsed."""
    by_command: dict[str, list[Sample]] = field(default_factory=dict)


Connect = Callable[..., Session]
"""How to open a :class:`~fabriccfg.session.Session` (default :func:`fabriccfg.connect.connect`)."""


def _command(conn: Any, line: str, timeout: float) -> str:
    """One command's output: the event-driven reader of :mod:`fabriccfg.connect` sessions (wakes on
    data; netmiko's ``send_command`` spends a prompt round trip and 25 ms read loops on each of a
    leaf's 64 per-port commands), ``send_command`` for other connection objects."""
    if len(line) > WIDE_LINE:
        _widen(conn, len(line))
    fast = getattr(conn, "fc_command", None)
    if fast is not None:
        return str(fast(line, timeout=timeout))
    return str(conn.send_command(line, read_timeout=timeout, strip_prompt=True, strip_command=True))


WIDE_LINE = 400
"""netmiko opens a 511-column terminal; a longer line (a batched per-port command is 3-5 kB) would come
back wrapped by the shell's line editor, and the echo the reader waits for would never match."""


def _widen(conn: Any, length: int) -> None:
    """Make the session's terminal wider than ``length`` (SSH window-change; once per session)."""
    chan = getattr(conn, "remote_conn", None)
    want = min(65535, max(511, length + 100))
    if chan is None or getattr(conn, "_fc_width", 511) >= want or not hasattr(chan, "resize_pty"):
        return
    with contextlib.suppress(Exception):  # a server that refuses it still gets the command
        chan.resize_pty(width=want, height=1000)
        conn._fc_width = want


class Sessions:
    """Open SSH sessions kept between rounds (``watch``): a round reuses a device's session instead of
    paying the SSH handshake and session preparation again (~5 ms of CPU and a few round trips each).
    A session that failed in any way is closed and dropped; the next round opens a new one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[tuple[str, str, int], Any] = {}

    @staticmethod
    def key(ep: Endpoint) -> tuple[str, str, int]:
        return ep.name, ep.host, ep.ssh_port or 0

    def take(self, ep: Endpoint) -> Any | None:
        with self._lock:
            conn = self._open.pop(self.key(ep), None)
        if conn is not None:
            _check_every(conn, ACTIVE_CHECK_S)
        return conn

    def give(self, ep: Endpoint, conn: Any) -> None:
        _check_every(conn, IDLE_CHECK_S)
        with self._lock:
            old = self._open.pop(self.key(ep), None)
            self._open[self.key(ep)] = conn
        if old is not None:
            _close(old)

    def close(self) -> None:
        with self._lock:
            conns, self._open = list(self._open.values()), {}
        for conn in conns:
            _close(conn)

    def __len__(self) -> int:
        return len(self._open)


ACTIVE_CHECK_S = 0.1
"""paramiko's own: how often a session's transport thread wakes up with nothing to read."""
IDLE_CHECK_S = 15.0
"""The same for a kept, idle session: 2,000 idle sessions at 0.1 s were 20,000 thread wake-ups a second
(the collector's CPU grew with the fabric), and at 2 s the ~1,000 transport threads of a collector
process, all given back at the end of a round, woke in step (load average spikes of 200-300 on the
shared box). Data or the peer's close still wake the thread at once; the timeout only bounds how long a
thread lingers after we close its session. Spread by +-30 % so the threads do not wake together."""


def _check_every(conn: Any, seconds: float) -> None:
    chan = getattr(conn, "remote_conn", None)
    transport = chan.get_transport() if chan is not None and hasattr(chan, "get_transport") else None
    sock = getattr(transport, "sock", None)
    if sock is not None and hasattr(sock, "settimeout"):
        if seconds >= IDLE_CHECK_S:
            seconds *= random.uniform(0.7, 1.3)  # not for security: only to spread wake-ups
        with contextlib.suppress(OSError):
            sock.settimeout(seconds)


def _close(conn: Any) -> None:
    with contextlib.suppress(Exception):  # closing a broken session must not hide the results
        conn.disconnect()


def run_job(job: CliJob, *, timeout: float, insecure_host_keys: bool = False,
            connect: Connect | None = None, sessions: Sessions | None = None) -> CliResult:
    """Connect once (or reuse the session ``sessions`` kept), run every command, parse. Never raises
    for device trouble."""
    from fabriccfg.connect import ConnectError
    from fabriccfg.connect import connect as default_connect

    ep = job.endpoint
    res = CliResult(ep.name)
    conn_fn = connect or default_connect
    conn = sessions.take(ep) if sessions is not None else None
    if conn is not None:
        healthy = _run_commands(conn, job, res, timeout)
        if healthy:
            sessions.give(ep, conn)  # type: ignore[union-attr]
            res.finished = time.time()
            return res
        _close(conn)  # a kept session went stale (device restarted, idle timeout): start afresh
        res = CliResult(ep.name)
    try:
        conn = conn_fn(ep, insecure_host_keys=insecure_host_keys, timeout=timeout)
    except ConnectError as exc:
        res.errors.append(f"ssh: {exc}")
        res.finished = time.time()
        return res
    except Exception as exc:  # a driver bug must not abort the whole collection round
        res.errors.append(f"ssh: {exc.__class__.__name__}: {secrets.redact(str(exc))}")
        res.finished = time.time()
        return res
    healthy = False
    try:
        healthy = _run_commands(conn, job, res, timeout)
    finally:
        if healthy and sessions is not None:
            sessions.give(ep, conn)
        else:
            _close(conn)
    res.finished = time.time()
    return res


def _run_commands(conn: Any, job: CliJob, res: CliResult, timeout: float) -> bool:
    """Run the job's commands on ``conn`` into ``res``; False when the session itself broke."""
    queue = list(job.commands)
    done: set[str] = set()
    while queue:
        line, cmd, ctx = queue.pop(0)
        if line in done:
            continue
        done.add(line)
        try:
            output = _command(conn, line, timeout)
        except Exception as exc:
            res.errors.append(f"{cmd.name}: {exc.__class__.__name__}: {secrets.redact(str(exc))[:200]}")
            if "Socket" in exc.__class__.__name__ or isinstance(exc, OSError | EOFError):
                return False
            continue
        got: list[Sample] = []
        for item, text in batch.split(str(output)) if cmd.batch else [(None, str(output))]:
            name = cmd.name if item is None else f"{cmd.name} {item}"
            try:
                samples = cmd.parser(text, ctx if item is None else dataclasses.replace(ctx, port=item))
            except Exception as exc:
                res.errors.append(f"{name}: parser failed: {exc.__class__.__name__}: {exc}")
                continue
            if not samples and _NOT_FOUND.search(text):
                first = text.strip().splitlines()[0] if text.strip() else ""
                res.errors.append(f"{name}: {secrets.redact(first)[:200]}")
            else:
                res.ok.add(cmd.name)
            got.extend(samples)
        res.samples.extend(got)
        res.by_command.setdefault(cmd.name, []).extend(got)
        if cmd.followups is not None:
            queue.extend((extra, dataclasses.replace(cmd, followups=None), ctx)
                         for extra in cmd.followups(res.samples, ctx))
    return not any("Timeout" in e or "SessionClosed" in e or "SessionKilled" in e for e in res.errors)
