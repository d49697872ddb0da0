"""Command lines the probe runs on GPU hosts: perftest server/client and nccl-tests.

perftest flags (linux-rdma/perftest README / src/perftest_parameters.c usage): ``-d`` device,
``-i`` port, ``-p`` TCP port of the out-of-band exchange, ``-n`` iterations, ``-s`` size, ``-F``
(no CPU-frequency abort), ``-x`` GID index, ``--tclass`` Traffic Class in the GRH (RoCE without
RDMA-CM), ``--report_gbits``. The probe does not use RDMA-CM (``-R``), so the class comes from
``--tclass`` = the rendered ToS byte (DSCP << 2 | ECT(0): DSCP 26 -> 106, the same
``render.filters.tos`` the host template uses). InfiniBand: no ``-x``/``--tclass`` (no GRH on a
single subnet; the SL comes from the SM).

Ports: the server of a host's k-th NIC listens on ``base_port + k``. Servers for several NICs of a
host can then run at once (as NVIDIA's DGX Spark guide does with 12000/12001), and the TCP port
tells which NIC a client reached.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from fabriccfg.inventory.derive import effective_nic_qos
from fabriccfg.inventory.models import Fabric
from fabriccfg.probe.plan import Nic, Pair
from fabriccfg.render.filters import tos

DEFAULT_GID_INDEX = 3
"""mlx5 RoCE v2 GID of the NIC's IPv4 address is index 3 on a default setup (GID table in
ofiwg/libfabric#12673; perftest#44 uses ``-x 3``). ASSUMPTION for hosts with other GID tables:
pass ``--gid-index``."""
BASE_PORT = 18515
"""perftest's default TCP port (README: 'Default port 18515')."""


@dataclass(frozen=True)
class ProbeOptions:
    lat_iterations: int = 10_000
    lat_size: int = 2
    bw_iterations: int = 5_000
    bw_size: int = 65_536
    nccl_min: str = "8"
    nccl_max: str = "128M"
    nccl_iters: int = 20
    gid_index: int = DEFAULT_GID_INDEX
    tclass: int | None = None
    """Override of the traffic class (default: the rendered ToS of the NIC)."""
    base_port: int = BASE_PORT
    tools: tuple[str, ...] = ("ib_write_lat", "ib_write_bw", "all_reduce_perf")


def traffic_class(fabric: Fabric, nic: Nic, opts: ProbeOptions) -> int | None:
    """The class the probe runs in: the rendered ToS byte (RoCE), None on InfiniBand."""
    if fabric.fabric.technology != "roce":
        return None
    if opts.tclass is not None:
        return opts.tclass
    host = next(h for h in fabric.hosts if h.name == nic.host)
    model_nic = next(n for n in host.nics if n.name == nic.nic)
    return tos(effective_nic_qos(fabric, model_nic).roce_dscp)


def intended_class(fabric: Fabric, nic: Nic) -> int | None:
    """What the lossless class is for ``nic`` according to the inventory (for the probe-class check)."""
    return traffic_class(fabric, nic, ProbeOptions())


def perftest(tool: str, fabric: Fabric, nic: Nic, opts: ProbeOptions, server: Nic | None = None) -> str:
    """One perftest command line on ``nic``; with ``server`` it is the client of that server NIC."""
    port = opts.base_port + (server.index if server is not None else nic.index)
    args = [tool, "-d", nic.nic, "-i", "1", "-p", str(port), "-F"]
    if tool.endswith("_lat"):
        args += ["-n", str(opts.lat_iterations), "-s", str(opts.lat_size)]
    else:
        args += ["-n", str(opts.bw_iterations), "-s", str(opts.bw_size), "--report_gbits"]
    tc = traffic_class(fabric, nic, opts)
    if tc is not None:
        args += ["-x", str(opts.gid_index), f"--tclass={tc}"]
    if server is not None:
        args.append(address(fabric, server.host))
    return " ".join(shlex.quote(a) for a in args)


def address(fabric: Fabric, host: str) -> str:
    """How a client names the server host: its management address, else its name."""
    dev = fabric.devices[host]
    mgmt = getattr(dev, "mgmt", None)
    return str(mgmt) if mgmt is not None else host


def nccl(fabric: Fabric, pair: Pair, opts: ProbeOptions) -> str:
    """``all_reduce_perf`` over the pair, one GPU per host (``-g 1``), on the pair's NICs.

    Launched with Open MPI from the client host; ``NCCL_IB_HCA`` pins the rail's NIC (``=`` exact
    match, NCCL env docs) and ``NCCL_ALGO=Ring`` measures the network, not NVLS/tree (nccl-tests#196).
    """
    hosts = f"{address(fabric, pair.client.host)}:1,{address(fabric, pair.server.host)}:1"
    hca = (
        f"={pair.client.nic},{pair.server.nic}"
        if pair.client.nic != pair.server.nic
        else f"={pair.client.nic}"
    )
    env = ["-x", f"NCCL_IB_HCA={hca}", "-x", "NCCL_ALGO=Ring"]
    tc = traffic_class(fabric, pair.client, opts)
    if tc is not None:
        env += ["-x", f"NCCL_IB_TC={tc}", "-x", f"NCCL_IB_GID_INDEX={opts.gid_index}"]
    args = [
        "mpirun",
        "-np",
        "2",
        "-H",
        hosts,
        *env,
        "all_reduce_perf",
        "-b",
        opts.nccl_min,
        "-e",
        opts.nccl_max,
        "-f",
        "2",
        "-g",
        "1",
        "-n",
        str(opts.nccl_iters),
    ]
    return " ".join(shlex.quote(a) for a in args)
