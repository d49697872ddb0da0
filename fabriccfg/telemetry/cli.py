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
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from fabriccfg import secrets
from fabriccfg.session import Session
from fabriccfg.targets import Endpoint
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


def run_job(job: CliJob, *, timeout: float, insecure_host_keys: bool = False,
            connect: Connect | None = None) -> CliResult:
    """Connect once, run every command, parse. Never raises for device trouble."""
    from fabriccfg.connect import ConnectError
    from fabriccfg.connect import connect as default_connect

    ep = job.endpoint
    res = CliResult(ep.name)
    conn_fn = connect or default_connect
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
    try:
        queue = list(job.commands)
        done: set[str] = set()
        while queue:
            line, cmd, ctx = queue.pop(0)
            if line in done:
                continue
            done.add(line)
            try:
                output = conn.send_command(line, read_timeout=timeout, strip_prompt=True, strip_command=True)
            except Exception as exc:
                res.errors.append(f"{cmd.name}: {exc.__class__.__name__}: {secrets.redact(str(exc))[:200]}")
                if "Socket" in exc.__class__.__name__ or isinstance(exc, OSError | EOFError):
                    break
                continue
            text = str(output)
            try:
                samples = cmd.parser(text, ctx)
            except Exception as exc:
                res.errors.append(f"{cmd.name}: parser failed: {exc.__class__.__name__}: {exc}")
                continue
            if not samples and _NOT_FOUND.search(text):
                first = text.strip().splitlines()[0] if text.strip() else ""
                res.errors.append(f"{cmd.name}: {secrets.redact(first)[:200]}")
            else:
                res.ok.add(cmd.name)
            res.samples.extend(samples)
            res.by_command.setdefault(cmd.name, []).extend(samples)
            if cmd.followups is not None:
                queue.extend((extra, dataclasses.replace(cmd, followups=None), ctx)
                             for extra in cmd.followups(res.samples, ctx))
    finally:
        with contextlib.suppress(Exception):  # closing a broken session must not hide the results
            conn.disconnect()
    res.finished = time.time()
    return res
