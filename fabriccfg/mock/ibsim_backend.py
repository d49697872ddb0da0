"""The mock fabric's ibsim backend: SM hosts whose shells and services are real.

On an SM host of a mock fabric started with ``--backend ibsim``:

- the infiniband-diags (:data:`fabriccfg.mock.ibsim.TOOLS`) run for real, attached to the host's HCA
  in the simulator (``dev.extra["real_tools"]``, consulted by :mod:`fabriccfg.mock.shell`);
- ``systemctl start|restart opensmd`` (re)starts the real OpenSM with the files ``push`` installed
  on the mock host (``/etc/opensm/*``), and ``stop`` stops it; ``is-active`` reports the process;
- ``/var/log/opensm.log`` reads the real OpenSM's log.

Faults (:class:`SimFaults`) go through ibsim's console: ``link-down`` (``Unlink``), ``cabling-swap``
(``Unlink`` both ends, ``Link`` them crossed), ``ib-rcv-errors`` (``Error`` rate 100 on the port while
a few direct-routed SMPs cross it, then 0: PortRcvErrors stays raised); ``sm-death`` kills the
host's OpenSM. ``clear`` re-cables what was changed and restarts killed SMs.
"""

from __future__ import annotations

import logging
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabriccfg.mock.ibsim import TOOLS, IbsimError, OpenSm, SimHandle, conf_priority, wait_master, which
from fabriccfg.mock.ibsim_embedded import embedded_sm_files
from fabriccfg.mock.ibsim_topology import SimNode, SimTopology
from fabriccfg.mock.scenarios import Scenario
from fabriccfg.mock.shell import ShellSession
from fabriccfg.mock.ssh import DeviceState

log = logging.getLogger(__name__)

OPENSM_UNIT = "opensmd"
READY_TIMEOUT_S = 60.0
ERROR_SMPS = 8
"""Direct-routed SMPs sent across a port while its error rate is 100 (each adds one PortRcvErrors)."""


def observer(topo: SimTopology, dev: DeviceState) -> SimNode | None:
    """A GPU NIC to ask ``sminfo`` from: a standby SM's own port does not answer reliably while its
    OpenSM starts (seen on ibsim), so readiness is judged from a port no SM binds."""
    fab = dev.fabric
    sms: set[str] = set()
    if fab is not None:
        sms = {m.name for m in fab.management_hosts}
        sms |= {s.device for s in fab.ib.subnet_managers} if fab.ib is not None else set()
    return next((n for n in topo.nodes if n.kind == "ca" and not n.is_an and n.device not in sms), None)


def real_tools(sim: SimHandle, node: SimNode, names: frozenset[str] = frozenset(TOOLS),
               ) -> Callable[[list[str]], tuple[str, int] | None]:
    """The shell hook: run ``argv`` for real when it names one of the infiniband-diags ``names``."""

    def run(argv: list[str]) -> tuple[str, int] | None:
        if not argv or argv[0].rsplit("/", 1)[-1] not in names:
            return None
        out, rc = sim.run_tool(node, argv)
        return (out if not out or out.endswith("\n") else out + "\n"), rc

    return run


def _priority(files: dict[str, str] | None) -> int:
    return conf_priority(files or {})


@dataclass
class SmGroup:
    """The real SMs of one worker (SM hosts and switches' embedded SMs).

    On ibsim an OpenSM that wins a *handover* (a higher-priority SM joining a subnet that has a master)
    enters MASTER but never finishes its sweep: no SUBNET UP, the ports keep the old SM LID (seen with
    OpenSM 3.3.23 / ibsim 0.10 for HCA- and switch-attached SMs alike; a takeover after the master
    dies works). So when an SM (re)starts, the running lower-priority SMs are stopped first and started
    again after it: the highest-priority SM always starts on a subnet without a master."""

    sms: dict[str, tuple[OpenSm, dict[str, str] | None]] = field(default_factory=dict)

    def add(self, sm: OpenSm) -> None:
        self.sms[sm.name] = (sm, None)

    def files(self, name: str) -> dict[str, str] | None:
        return self.sms[name][1]

    def apply(self, name: str, files: dict[str, str] | None) -> str | None:
        """Run ``name``'s SM with ``files`` (None: stop it); an error text, or None."""
        sm, _old = self.sms[name]
        self.sms[name] = (sm, files)
        mine = _priority(files)
        lower = [(s, f) for n, (s, f) in self.sms.items()
                 if n != name and f is not None and s.running() and _priority(f) < mine]
        for s, _f in lower:
            s.stop()
        err = None
        if files is None:
            sm.stop()
        else:
            err = self._start(sm, files)
        for s, f in sorted(lower, key=lambda x: -_priority(x[1])):
            assert f is not None
            self._start(s, f)
        return err

    @staticmethod
    def _start(sm: OpenSm, files: dict[str, str]) -> str | None:
        try:
            sm.start(files)
            wait_master(sm.sim, sm.observer or sm.node, READY_TIMEOUT_S, conf_priority(files))
        except IbsimError as exc:
            log.warning("%s: OpenSM did not come up: %s", sm.name, exc)
            return str(exc)
        if not sm.running():
            return f"opensm exited with status {sm.proc.returncode if sm.proc else '?'}"
        return None


def attach_sm_host(dev: DeviceState, sim: SimHandle, topo: SimTopology,
                   group: SmGroup | None = None) -> OpenSm | None:
    """Make ``dev`` (an SM host) real: tools, opensmd service, OpenSM log (:func:`start_sm` starts
    its OpenSM with the host's current files, as a booted host would)."""
    node = topo.ca(dev.name)
    if node is None:
        return None
    sm = OpenSm(sim, node, dev.name, observer=observer(topo, dev))
    dev.extra["real_tools"] = real_tools(sim, node)
    dev.extra["opensm"] = sm
    grp = group if group is not None else SmGroup()
    grp.add(sm)
    dev.extra["sm_group"] = grp

    def action(d: DeviceState, what: str) -> str | None:
        if what == "stop":
            return grp.apply(d.name, None)
        return start_sm(d, sm)

    def probe(d: DeviceState, state: str) -> str:
        if sm.running():
            return "active"
        return "failed" if sm.killed or state == "failed" else ("inactive" if state != "active" else "failed")

    dev.extra.setdefault("service_actions", {})[OPENSM_UNIT] = action
    dev.extra.setdefault("service_probes", {})[OPENSM_UNIT] = probe
    dev.extra.setdefault("dynamic_files", {})["/var/log/opensm.log"] = lambda d: sm.log_text()
    dev.extra["real_opensm"] = real_opensm_check
    return sm


def real_opensm_check(sh: ShellSession, argv: list[str]) -> tuple[str, int] | None:
    """``opensm -F FILE -c OUT`` (push's pre-check) run by the real OpenSM on a copy of the mock host's
    file: it parses the options and exits without touching the fabric. Only for the upstream flavour
    (ibsim runs upstream OpenSM; an MLNX-flavour host keeps the modelled MLNX key list)."""
    args = argv[1:]
    if "-F" not in args or "-c" not in args or args.index("-F") + 1 >= len(args) \
            or args.index("-c") + 1 >= len(args):
        return None
    fab = sh.dev.fabric
    if fab is None or fab.ib is None or fab.ib.opensm_flavour != "upstream":
        return None
    conf, out = args[args.index("-F") + 1], args[args.index("-c") + 1]
    text = sh.read(conf)
    opensm = which("opensm")
    if text is None or opensm is None:
        return None
    with tempfile.TemporaryDirectory(prefix="opensm-check-") as tmp:
        src, dst = Path(tmp) / "opensm.conf", Path(tmp) / "out.conf"
        src.write_text(text, encoding="utf-8")
        proc = subprocess.run([opensm, "-F", str(src), "-c", str(dst)], capture_output=True, text=True,
                              timeout=30, check=False, cwd=tmp)
        shown = (proc.stdout + proc.stderr).replace(str(src), conf).replace(str(dst), out)
        if dst.is_file():
            err = sh.write(out, dst.read_text(encoding="utf-8", errors="replace"))
            if err:
                return shown + err, 1
    return shown, proc.returncode


def attach_gpu_host(dev: DeviceState, sim: SimHandle, topo: SimTopology) -> None:
    """A GPU host of a fabric without SM hosts reads the fabric-wide view (ibnetdiscover, sminfo,
    ibqueryerrors ...) for real from its first NIC; its own ``perfquery`` (traffic counters) stays
    modelled: ibsim has no traffic."""
    node = topo.ca(dev.name)
    if node is not None:
        dev.extra["real_tools"] = real_tools(sim, node, frozenset(TOOLS) - {"perfquery"})


def attach_embedded_sm(dev: DeviceState, sim: SimHandle, topo: SimTopology,
                       group: SmGroup | None = None) -> OpenSm | None:
    """An MLNX-OS switch that runs the embedded SM: the real OpenSM, attached to the switch, follows
    the running ``ib sm`` / ``ib partition`` configuration (the session calls ``embedded_sm`` when it
    leaves configuration mode or switches configuration files)."""
    node = next((n for n in topo.nodes if n.kind == "switch" and n.device == dev.name), None)
    if node is None:
        return None
    sm = OpenSm(sim, node, dev.name, observer=observer(topo, dev))
    dev.extra["opensm"] = sm
    grp = group if group is not None else SmGroup()
    grp.add(sm)

    def follow(d: DeviceState) -> None:
        files = embedded_sm_files("\n".join(d.running.flat()), d.name)
        if files == grp.files(d.name) and (files is None or sm.running()):
            return
        grp.apply(d.name, files)

    dev.extra["embedded_sm"] = follow
    return sm


def start_sm(dev: DeviceState, sm: OpenSm) -> str | None:
    """(Re)start the SM host's real OpenSM from its files; None once an SM of at least its priority is
    MASTER, else why not."""
    grp = dev.extra.get("sm_group")
    if not isinstance(grp, SmGroup):
        grp = SmGroup()
        grp.add(sm)
    return grp.apply(dev.name, dict(dev.files))


@dataclass
class SimFaults:
    """Console faults of one simulator, and how to undo them."""

    sim: SimHandle
    topo: SimTopology
    changed: list[tuple[str, int, str, int]] = field(default_factory=list)
    errored: list[tuple[str, int]] = field(default_factory=list)

    def _unlink(self, nodeid: str, port: int) -> tuple[str, int]:
        peer = self.topo.peer(nodeid, port)
        if peer is None:
            raise IbsimError(f"{nodeid}[{port}] is not cabled")
        self._console(f'Unlink "{nodeid}"[{port}]')
        return peer

    def _console(self, *cmds: str) -> None:
        out = self.sim.console(*cmds)
        bad = [ln for ln in out.splitlines() if ln.lstrip("sim> ").startswith("#") and "dumped" not in ln]
        if bad:
            raise IbsimError("ibsim: " + bad[0].lstrip("sim> ").strip())

    def apply(self, sc: Scenario) -> None:
        if sc.name == "link-down":
            assert sc.device is not None and sc.port is not None
            node, port = self.topo.end(sc.device, sc.port)
            peer = self._unlink(node.nodeid, port)
            self.changed.append((node.nodeid, port, *peer))
        elif sc.name == "cabling-swap":
            assert sc.device is not None and sc.port is not None and sc.other is not None
            a, pa = self.topo.end(sc.device, sc.port)
            b, pb = self.topo.end(*sc.other)
            ra = self._unlink(a.nodeid, pa)
            rb = self._unlink(b.nodeid, pb)
            self._console(f'Link "{a.nodeid}"[{pa}] "{rb[0]}"[{rb[1]}]',
                          f'Link "{b.nodeid}"[{pb}] "{ra[0]}"[{ra[1]}]')
            self.changed += [(a.nodeid, pa, *ra), (b.nodeid, pb, *rb)]
        elif sc.name == "ib-rcv-errors":
            assert sc.device is not None and sc.port is not None
            node, port = self.topo.end(sc.device, sc.port)
            self.raise_rcv_errors(node, port)

    def raise_rcv_errors(self, node: SimNode, port: int) -> None:
        """Drop (and count) packets entering ``node[port]`` while direct-routed SMPs are sent in."""
        peer = self.topo.peer(node.nodeid, port)
        if peer is None:
            raise IbsimError(f"{node.desc} port {port} is not cabled")
        sender, path = self._path_into(node, port, peer)
        self._console(f'Error "{node.nodeid}"[{port}] 100')
        try:
            for _ in range(ERROR_SMPS):
                self.sim.run_tool(sender, ["smpquery", "-t", "20", "-D", "nodeinfo", path], timeout=10)
        finally:
            self._console(f'Error "{node.nodeid}"[{port}] 0')
        self.errored.append((node.nodeid, port))

    def _path_into(self, node: SimNode, port: int, peer: tuple[str, int]) -> tuple[SimNode, str]:
        """A CA and a direct route whose last hop enters ``node[port]``."""
        pnode = self.topo.by_id[peer[0]]
        if node.kind == "ca":  # the answer to the CA's own SMP comes back into its port
            return node, "0,1"
        if pnode.kind == "ca" and not pnode.is_an:  # the CA on the far end sends into the switch
            return pnode, "0,1"
        for sw, via in ((pnode, None), (node, port)):  # a CA on the far switch, or on this one (out and back)
            for a, _pa, b, _pb in self.topo.links:
                for ca_id, sw_id in ((a, b), (b, a)):
                    ca = self.topo.by_id[ca_id]
                    if sw_id == sw.nodeid and ca.kind == "ca" and not ca.is_an:
                        if via is None:
                            return ca, f"0,1,{peer[1]}"
                        return ca, f"0,1,{port},{peer[1]}"
        raise IbsimError(f"no CA near {node.desc} port {port} to send traffic from")

    def clear(self) -> None:
        """Re-cable every link a fault changed (errors already counted stay, as on hardware)."""
        for nodeid, port, _peer, _pport in self.changed:
            if self.topo.peer(nodeid, port) is not None:
                self.sim.console(f'Unlink "{nodeid}"[{port}]')
        for nodeid, port, _peer, _pport in self.changed:
            peer = self.topo.peer(nodeid, port)
            if peer is not None:
                self.sim.console(f'Link "{nodeid}"[{port}] "{peer[0]}"[{peer[1]}]')
        self.changed.clear()
        self.errored.clear()


def sm_of(dev: DeviceState) -> OpenSm | None:
    sm: Any = dev.extra.get("opensm")
    return sm if isinstance(sm, OpenSm) else None
