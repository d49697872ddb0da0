"""Mock GPU-host answers to the probe's tools: perftest and nccl-tests in their real output formats.

The numbers come from the traffic model's topology and active scenarios (no randomness: a stable
hash of the path gives the small per-path spread). A path is the switches between two host NICs
(same leaf; else a shortest path, the ECMP choice among equals fixed by a hash of the two ends).

What widens the tail, and on which paths (severity s scales every tail term):

* ``pause-storm:HOST[:NIC]`` (s = 1 on paths that end on the storming NIC, 0.5 on every other path
  through its leaf). With the inventory's PFC watchdog disabled the pause spreads (traffic model):
  every path through a switch the storm reaches gets s = 0.2 as well.
* ``ecn-misconfig:SWITCH``: the switch's ECN thresholds sit above the buffer, DCQCN never slows
  the senders, queues run to Xoff: s = 0.3 on paths through SWITCH.
* ``congestion:HOST`` (incast): s = 0.3 on paths that end on HOST.
* ``ib-congestion:DEVICE:PORT`` and ``microburst:SWITCH:PORT`` (incast into that egress queue): s = 0.3
  on paths that leave DEVICE through PORT (the NIC cabled to it is an end of the path, or the path
  takes the hop DEVICE -> PORT's peer switch).

Healthy latency: host stack + per-switch latency (IB ~0.13 us per Quantum hop, analytics §5 [R];
Ethernet ~0.5 us per hop [S]); healthy p99.9 is a fraction of a microsecond above typical. These
magnitudes are a model for tests and demos, not measurements.
"""

from __future__ import annotations

import itertools
import shlex
from collections import deque

from fabriccfg.inventory.models import Host, Switch
from fabriccfg.mock.traffic import TrafficModel, _unit

TOOLS = ("ib_write_lat", "ib_send_lat", "ib_read_lat", "ib_write_bw", "ib_send_bw", "ib_read_bw", "mpirun")
BASE_PORT = 18515
TITLES = {
    "ib_write_lat": "RDMA_Write Latency Test",
    "ib_send_lat": "Send Latency Test",
    "ib_read_lat": "RDMA_Read Latency Test",
    "ib_write_bw": "RDMA_Write BW Test",
    "ib_send_bw": "Send BW Test",
    "ib_read_bw": "RDMA_Read BW Test",
}
RULE = "-" * 87
NCCL_HEADER = (
    "#" + " " * 62 + "out-of-place" + " " * 23 + "in-place          ",
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
    "busbw #wrong",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
    "(GB/s)       ",
)
"""nccl-tests' table header (src/common.cu), spacing as in the published outputs."""
Result = tuple[str, int]


def _leaf(model: TrafficModel, host: str, nic: str) -> str | None:
    peer = model.fabric.neighbours.get((host, nic))
    return peer[0] if peer else None


def _adjacent(model: TrafficModel) -> dict[str, set[str]]:
    cached: dict[str, set[str]] | None = getattr(model, "_probe_adj", None)
    if cached is not None:
        return cached
    adj: dict[str, set[str]] = {}
    devs = model.fabric.devices
    for link in model.fabric.links:
        (a, _), (b, _) = link.ends
        if isinstance(devs.get(a), Switch) and isinstance(devs.get(b), Switch):
            adj.setdefault(a, set()).add(b)
            adj.setdefault(b, set()).add(a)
    model._probe_adj = adj  # type: ignore[attr-defined]
    return adj


def path(model: TrafficModel, a: tuple[str, str], b: tuple[str, str]) -> list[str]:
    """Switches from NIC ``a`` to NIC ``b`` (empty when either is not cabled)."""
    la, lb = _leaf(model, *a), _leaf(model, *b)
    if la is None or lb is None:
        return []
    if la == lb:
        return [la]
    adj = _adjacent(model)
    dist = {la: 0}
    parents: dict[str, list[str]] = {la: []}
    queue = deque([la])
    while queue:
        cur = queue.popleft()
        for nxt in sorted(adj.get(cur, ())):
            if nxt not in dist:
                dist[nxt] = dist[cur] + 1
                parents[nxt] = [cur]
                queue.append(nxt)
            elif dist[nxt] == dist[cur] + 1:
                parents[nxt].append(cur)
    if lb not in dist:
        return [la, lb]
    out = [lb]
    while out[-1] != la:
        ps = sorted(parents[out[-1]])
        out.append(ps[int(_unit(model.seed, "ecmp", a, b, out[-1]) * len(ps))])
    return out[::-1]


def _active(model: TrafficModel, t: float) -> list[tuple[str, str | None, str | None]]:
    return [
        (a.scenario.name, a.scenario.device, a.scenario.port)
        for a in model._activations
        if a.start <= t < a.end
    ]


def severity(model: TrafficModel, a: tuple[str, str], b: tuple[str, str], t: float) -> float:
    """How much the active scenarios widen the tail of path a -> b (0 = healthy)."""
    sw = path(model, a, b)
    s = 0.0
    fab = model.fabric
    for name, dev, port in _active(model, t):
        if name == "pause-storm" and dev is not None:
            host = fab.devices.get(dev)
            if not isinstance(host, Host):
                continue
            nic = port or next((n.name for n in host.nics if (dev, n.name) in fab.neighbours), None)
            storm_leaf = _leaf(model, dev, nic) if nic else None
            if storm_leaf is None:
                continue
            if (dev, nic) in (a, b):
                s = max(s, 1.0)
            elif storm_leaf in sw:
                s = max(s, 0.5)
            elif fab.roce is not None and not fab.roce.pfc_watchdog.enabled and sw:
                s = max(s, 0.2)
        elif (name == "ecn-misconfig" and dev in sw) or (name == "congestion" and dev in (a[0], b[0])):
            s = max(s, 0.3)
        elif name in ("ib-congestion", "microburst") and dev is not None and port is not None:
            peer = fab.neighbours.get((dev, port))
            if peer is None:
                continue
            if peer in (a, b) or any(x == dev and y == peer[0] for x, y in itertools.pairwise(sw)):
                s = max(s, 0.3)
    return s


def _link_gbps(model: TrafficModel, end: tuple[str, str]) -> float:
    return float(model._speed.get(end, model.fabric.fabric.link_speed))


# ----------------------------------------------------------------------------- argv
PERFTEST_VALUES = frozenset({"-d", "-i", "-p", "-n", "-s", "-x", "-D", "-q", "-T"})
NCCL_VALUES = frozenset({"-b", "-e", "-f", "-g", "-n", "-t", "-w", "-c", "-o", "-d", "-a"})


def _opts(argv: list[str], takes: frozenset[str] = PERFTEST_VALUES) -> tuple[dict[str, str], list[str]]:
    flags: dict[str, str] = {}
    pos: list[str] = []
    k = 1
    while k < len(argv):
        a = argv[k]
        if a.startswith("--"):
            key, _, val = a.partition("=")
            flags[key] = val
        elif a in takes and k + 1 < len(argv):
            flags[a] = argv[k + 1]
            k += 1
        elif a.startswith("-"):
            flags[a] = ""
        else:
            pos.append(a)
        k += 1
    return flags, pos


def _host_by_address(model: TrafficModel, addr: str) -> Host | None:
    for h in model.fabric.hosts:
        if h.name == addr or (h.mgmt is not None and str(h.mgmt) == addr):
            return h
    return None


def _preamble(model: TrafficModel, tool: str, flags: dict[str, str]) -> list[str]:
    roce = model.technology == "roce"
    lat = tool.endswith("_lat")
    lines = [
        RULE,
        f"                    {TITLES.get(tool, tool)}",
        f" Dual-port       : OFF\t\tDevice         : {flags.get('-d', 'mlx5_0')}",
        " Number of qps   : 1\t\tTransport type : IB",
        " Connection type : RC\t\tUsing SRQ      : OFF",
        " PCIe relax order: ON",
        " ibv_wr* API     : ON",
        f" TX depth        : {1 if lat else 128}",
    ]
    if not lat:
        lines.append(" CQ Moderation   : 1")
    lines.append(" Mtu             : 4096[B]")
    lines.append(f" Link type       : {'Ethernet' if roce else 'IB'}")
    if roce:
        lines.append(f" GID index       : {flags.get('-x', '0')}")
    lines += [
        f" Max inline data : {220 if lat else 0}[B]",
        " rdma_cm QPs\t : OFF",
        " Data ex. method : Ethernet",
        RULE,
    ]
    return lines


def _addresses(model: TrafficModel, local: tuple[str, str], remote: tuple[str, str]) -> list[str]:
    def one(end: tuple[str, str]) -> str:
        q = int(_unit(model.seed, "qpn", *end) * 0xFFFF)
        if model.technology == "roce":
            return f" local address: LID 0000 QPN 0x{q:04x} PSN 0x{q * 7 & 0xFFFFFF:06x}"
        return f" local address: LID 0x{q % 0x3FF + 1:02x} QPN 0x{q:04x} PSN 0x{q * 7 & 0xFFFFFF:06x}"

    return [one(local), one(remote).replace("local", "remote"), RULE]


def perftest(model: TrafficModel, device: str, argv: list[str], t: float) -> Result:
    tool = argv[0]
    flags, pos = _opts(argv)
    host = model.fabric.devices.get(device)
    if not isinstance(host, Host):
        return f"{tool}: command not found\n", 127
    dev_name = flags.get("-d", host.nics[0].name)
    if dev_name not in {n.name for n in host.nics}:
        return f" IB device {dev_name} not found\n Unable to find the Infiniband/RoCE device\n", 1
    local = (device, dev_name)
    if not pos:  # server: listens, prints its banner; the client's report carries the results
        banner = ["", "*" * 36, "* Waiting for client to connect... *", "*" * 36]
        return "\n".join(banner + _preamble(model, tool, flags)) + "\n", 0
    port = int(flags.get("-p", str(BASE_PORT)))
    server = _host_by_address(model, pos[0])
    k = port - BASE_PORT
    if server is None or not 0 <= k < len(server.nics):
        return (
            f" Couldn't connect to {pos[0]}:{port}\n"
            "Unable to open file descriptor for socket connection Unable to init the socket connection\n",
            1,
        )
    remote = (server.name, server.nics[k].name)
    lines = _preamble(model, tool, flags) + _addresses(model, local, remote)
    s = severity(model, local, remote, t)
    hops = len(path(model, local, remote))
    u = _unit(model.seed, "lat", local, remote)
    if tool.endswith("_lat"):
        ib = model.technology == "infiniband"
        base = (0.85 if ib else 1.20) + hops * (0.13 if ib else 0.55) + 0.05 * u
        n = int(flags.get("-n", "1000"))
        size = int(flags.get("-s", "2"))
        t_min, typ = base - 0.04, base
        avg = base + 0.02 + 1.5 * s
        stdev = 0.03 + 4.0 * s
        p99 = base + 0.08 + 12.0 * s
        p999 = base + 0.25 + 60.0 * s
        t_max = base + 1.2 + 200.0 * s
        lines += [
            " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
            "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ",
            f" {size:<7d} {n:<7d}        {t_min:<7.2f}        {t_max:<7.2f}      {typ:<7.2f}     "
            f"       {avg:<7.2f}        {stdev:<7.2f}         {p99:<7.2f}                 {p999:<7.2f}",
            RULE,
        ]
    else:
        gbps = _link_gbps(model, local) * (0.965 + 0.01 * u) * (1.0 - 0.6 * s)
        size = int(flags.get("-s", "65536"))
        n = int(flags.get("-n", "5000"))
        unit_gb = "--report_gbits" in flags
        val = gbps if unit_gb else gbps * 1e9 / 8 / 2**20
        rate = gbps * 1e9 / 8 / size / 1e6
        lines += [
            f" #bytes     #iterations    BW peak[{'Gb' if unit_gb else 'MB'}/sec]    "
            f"BW average[{'Gb' if unit_gb else 'MB'}/sec]   MsgRate[Mpps]",
            f" {size:<10d} {n:<10d}       {val * 1.002:<7.2f}            {val:<7.2f}\t\t   {rate:.6f}",
            RULE,
        ]
    return "\n".join(lines) + "\n", 0


def _size(text: str) -> int:
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    return int(text[:-1]) * mult[text[-1]] if text and text[-1] in mult else int(text)


def nccl(model: TrafficModel, device: str, argv: list[str], t: float) -> Result:
    """``mpirun -np 2 -H A:1,B:1 -x NCCL_IB_HCA==nicA,nicB ... all_reduce_perf -b MIN -e MAX ...``."""
    if "all_reduce_perf" not in argv:
        return "mpirun: only all_reduce_perf is modelled\n", 1
    at = argv.index("all_reduce_perf")
    hosts_arg = argv[argv.index("-H") + 1] if "-H" in argv[:at] else device + ":1"
    env = {}
    for k, a in enumerate(argv[:at]):
        if a == "-x" and k + 1 < at:
            key, _, val = argv[k + 1].partition("=")
            env[key] = val
    hosts: list[Host] = []
    for item in hosts_arg.split(","):
        found = _host_by_address(model, item.split(":")[0])
        if found is None:
            return f"ssh: Could not resolve hostname {item.split(':')[0]}: Name or service not known\n", 1
        hosts.append(found)
    hca = env.get("NCCL_IB_HCA", "").lstrip("=^").split(",")
    ends = []
    for i, h in enumerate(hosts):
        want = hca[i] if i < len(hca) and hca[i] else (hca[0] if hca and hca[0] else h.nics[0].name)
        ends.append((h.name, want if want in {n.name for n in h.nics} else h.nics[0].name))
    flags, _ = _opts(["x", *argv[at + 1 :]], NCCL_VALUES)
    lo, hi = _size(flags.get("-b", "8")), _size(flags.get("-e", "128M"))
    iters = int(flags.get("-n", "20"))
    n = len(ends)
    s = max((severity(model, ends[i], ends[(i + 1) % n], t) for i in range(n)), default=0.0) if n > 1 else 0.0
    u = _unit(model.seed, "nccl", *ends)
    peak = min(_link_gbps(model, e) for e in ends) / 8 * (0.90 + 0.02 * u) * (1.0 - 0.6 * s)
    factor = 2 * (n - 1) / n if n > 1 else 1.0
    lines = [
        f"# nThread 1 nGpus 1 minBytes {lo} maxBytes {hi} step: 2(factor) warmup iters: 5 iters: {iters} "
        "agg iters: 1 validation: 1 graph: 0",
        "#",
        "# Using devices",
    ]
    for r, (hname, _) in enumerate(ends):
        lines.append(
            f"#  Rank {r:2d} Group  0 Pid {4000 + r:6d} on {hname:>10} device  0 [0000:1b:00] "
            "NVIDIA H100 80GB HBM3"
        )
    lines += ["#", *NCCL_HEADER]
    size = max(lo, 4)
    total = 0.0
    rows = 0
    alpha = 20.0 * (1.0 + 3.0 * s)  # us: ring latency of a small all-reduce over the network
    while size <= hi:
        busbw = peak * size / (size + 2**21)
        algbw = busbw / factor
        time_us = alpha + size / (algbw * 1e3) if algbw > 0 else alpha
        algbw = size / time_us / 1e3
        busbw = algbw * factor
        lines.append(
            f"{size:12d} {size // 4:13d}     float     sum      -1 {time_us:8.1f} {algbw:7.2f} {busbw:7.2f}"
            f"      0 {time_us * 1.01:8.1f} {algbw / 1.01:7.2f} {busbw / 1.01:7.2f}      0"
        )
        total += busbw
        rows += 1
        size *= 2
    lines += ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {total / max(rows, 1):.3f} ", "#"]
    return "\n".join(lines) + "\n", 0


def run(model: TrafficModel, device: str, line: str, t: float) -> Result | None:
    """Answer a probe tool command typed on GPU host ``device``; None when ``line`` is not one."""
    try:
        argv = shlex.split(line)
    except ValueError:
        return None
    if not argv or argv[0] not in TOOLS:
        return None
    if argv[0] == "mpirun":
        return nccl(model, device, argv, t)
    return perftest(model, device, argv, t)
