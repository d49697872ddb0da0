"""Run the pair plan over SSH: perftest server then client, nccl-tests, collect and parse.

Sequencing of one perftest measurement (the server must listen before the client connects):

1. start the server on the server host's shell (``write_channel``: it keeps running),
2. wait for its ``Waiting for client to connect`` line, bounded by ``listen_timeout``,
3. run the client on the client host (``send_command``, bounded by ``run_timeout``),
4. read the server's remaining output up to its prompt (bounded); on any failure the server is
   interrupted (Ctrl-C) so no perftest process is left listening.

One pair at a time, one tool at a time: a probe never loads more than one link pair at once (the
safe default on a production fabric, docs/probe.md). A host that cannot be reached, a tool that
is missing or an output that does not parse is an error on that pair, never an exception.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fabriccfg import secrets
from fabriccfg.inventory.models import Fabric
from fabriccfg.probe import commands
from fabriccfg.probe.plan import Pair
from fabriccfg.targets import Endpoint
from fabriccfg.telemetry.parsers import nccl_tests, perftest

log = logging.getLogger(__name__)
Connect = Callable[..., Any]


@dataclass
class PairResult:
    pair: Pair
    latency: perftest.LatencyRow | None = None
    latency_tool: str = ""
    bw_gbps: float | None = None
    busbw_gbytes: float | None = None
    """Peak out-of-place busbw of all_reduce_perf over the pair (GB/s)."""
    nccl_rows: list[nccl_tests.NcclRow] = field(default_factory=list)
    tclass: int | None = None
    gid_index_seen: int | None = None
    link_type: str = ""
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0


class _Sessions:
    """One SSH session per host, opened on first use and closed at the end."""

    def __init__(
        self, targets: dict[str, Endpoint], connect: Connect, timeout: float, insecure: bool
    ) -> None:
        self.targets = targets
        self.connect = connect
        self.timeout = timeout
        self.insecure = insecure
        self.open: dict[str, Any] = {}
        self.failed: dict[str, str] = {}

    def get(self, host: str) -> Any:
        if host in self.failed:
            raise RuntimeError(self.failed[host])
        if host not in self.open:
            ep = self.targets.get(host)
            if ep is None:
                self.failed[host] = f"{host}: no endpoint (no management address and not in --endpoints)"
                raise RuntimeError(self.failed[host])
            try:
                self.open[host] = self.connect(ep, insecure_host_keys=self.insecure, timeout=self.timeout)
            except Exception as exc:  # ConnectError or a driver failure: an error on this host
                self.failed[host] = f"ssh {host}: {secrets.redact(str(exc))[:200]}"
                raise RuntimeError(self.failed[host]) from None
        return self.open[host]

    def drop(self, host: str) -> None:
        conn = self.open.pop(host, None)
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.disconnect()

    def close(self) -> None:
        for host in list(self.open):
            self.drop(host)


def perftest_pair(
    server_conn: Any,
    client_conn: Any,
    server_cmd: str,
    client_cmd: str,
    *,
    listen_timeout: float,
    run_timeout: float,
) -> tuple[str, str]:
    """Server, wait for it to listen, client, collect both; raises RuntimeError with a one-line reason."""
    server_conn.write_channel(server_cmd + "\n")
    try:
        head = server_conn.read_until_pattern(pattern=perftest.LISTENING.pattern, read_timeout=listen_timeout)
    except Exception:
        with contextlib.suppress(Exception):
            server_conn.write_channel("\x03")
            server_conn.read_until_prompt(read_timeout=5)
        raise RuntimeError(
            f"server did not listen within {listen_timeout:g} s ({server_cmd.split(maxsplit=1)[0]})"
        ) from None
    try:
        client_out = str(
            client_conn.send_command(
                client_cmd, read_timeout=run_timeout, strip_prompt=True, strip_command=True
            )
        )
    except Exception as exc:
        with contextlib.suppress(Exception):
            server_conn.write_channel("\x03")
            server_conn.read_until_prompt(read_timeout=5)
        raise RuntimeError(
            f"client did not finish within {run_timeout:g} s: {exc.__class__.__name__}"
        ) from None
    try:
        tail = server_conn.read_until_prompt(read_timeout=run_timeout)
    except Exception:
        with contextlib.suppress(Exception):
            server_conn.write_channel("\x03")
            server_conn.read_until_prompt(read_timeout=5)
        tail = ""
    return str(head) + str(tail), client_out


def run_pair(
    fabric: Fabric,
    pair: Pair,
    sessions: _Sessions,
    opts: commands.ProbeOptions,
    *,
    listen_timeout: float,
    run_timeout: float,
) -> PairResult:
    res = PairResult(pair, tclass=commands.traffic_class(fabric, pair.client, opts))
    start = time.monotonic()
    try:
        sconn = sessions.get(pair.server.host)
        cconn = sessions.get(pair.client.host)
    except RuntimeError as exc:
        res.errors.append(str(exc))
        return res
    for tool in opts.tools:
        try:
            if tool == "all_reduce_perf":
                out = str(
                    cconn.send_command(
                        commands.nccl(fabric, pair, opts),
                        read_timeout=run_timeout,
                        strip_prompt=True,
                        strip_command=True,
                    )
                )
                parsed = nccl_tests.parse(out)
                res.nccl_rows = parsed.rows
                res.busbw_gbytes = parsed.peak_busbw() if parsed.rows else None
                if not parsed.rows:
                    res.errors.append("all_reduce_perf: no result rows")
                continue
            scmd = commands.perftest(tool, fabric, pair.server, opts)
            ccmd = commands.perftest(tool, fabric, pair.client, opts, server=pair.server)
            _server_out, client_out = perftest_pair(
                sconn, cconn, scmd, ccmd, listen_timeout=listen_timeout, run_timeout=run_timeout
            )
            parsed_c = perftest.parse(client_out)
            res.gid_index_seen = parsed_c.gid_index
            res.link_type = parsed_c.link_type
            if tool.endswith("_lat"):
                if not parsed_c.latency:
                    res.errors.append(f"{tool}: no latency row in the client output")
                else:
                    res.latency, res.latency_tool = parsed_c.latency[-1], tool
            elif parsed_c.bandwidth:
                res.bw_gbps = parsed_c.bandwidth[-1].bw_avg_gbps
            else:
                res.errors.append(f"{tool}: no bandwidth row in the client output")
        except (perftest.PerftestError, nccl_tests.NcclTestsError) as exc:
            res.errors.append(f"{tool}: {exc}")
        except RuntimeError as exc:
            res.errors.append(f"{tool}: {exc}")
        except Exception as exc:  # a broken session: drop it, the next pair reconnects
            res.errors.append(f"{tool}: {exc.__class__.__name__}: {secrets.redact(str(exc))[:200]}")
            sessions.drop(pair.server.host)
            sessions.drop(pair.client.host)
            break
    res.seconds = time.monotonic() - start
    return res


def run(
    fabric: Fabric,
    pairs: list[Pair],
    targets: dict[str, Endpoint],
    opts: commands.ProbeOptions,
    *,
    connect: Connect | None = None,
    timeout: float = 15.0,
    listen_timeout: float = 10.0,
    run_timeout: float = 60.0,
    insecure_host_keys: bool = False,
) -> list[PairResult]:
    """Measure every pair, one after the other."""
    if connect is None:
        from fabriccfg.connect import connect as default_connect

        connect = default_connect
    sessions = _Sessions(targets, connect, timeout, insecure_host_keys)
    try:
        return [
            run_pair(fabric, p, sessions, opts, listen_timeout=listen_timeout, run_timeout=run_timeout)
            for p in pairs
        ]
    finally:
        sessions.close()
