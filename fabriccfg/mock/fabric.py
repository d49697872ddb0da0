"""Start a whole mock fabric: one SSH server per managed device and one SNMP agent per switch.

In-process (tests, the demo) everything runs in one asyncio loop on a background thread; for large
fabrics (``processes`` > 1, chosen automatically above :data:`DEVICES_PER_PROCESS` devices) the devices
are split over worker processes, each with its own loop and its own copy of the traffic model (same
``t0`` and seed, so both ends of a link agree).

Files written next to the endpoints file ``DIR/NAME.json`` (default ``mock-endpoints.json``):
``NAME.known_hosts`` (host keys), ``NAME.id_ed25519`` (a client key every device accepts),
``NAME.control.json`` (scenario injection: workers poll it and acknowledge in ``NAME.ack.<worker>``),
``NAME.state.json`` (what ``mock inject``/``mock down`` need) and, when detached, ``NAME.pid``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import secrets as pysecrets
import shutil
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncssh

from fabriccfg import catalog, registry
from fabriccfg.inventory.models import Fabric
from fabriccfg.mock import ibsim_backend
from fabriccfg.mock.baseline import BaselineError
from fabriccfg.mock.ibsim import IbSim, IbsimError, OpenSm, SimHandle, unavailable
from fabriccfg.mock.ibsim_topology import SimTopology
from fabriccfg.mock.ibsim_topology import build as build_topology
from fabriccfg.mock.scenarios import IBSIM_ONLY, ScenarioError
from fabriccfg.mock.scenarios import parse as parse_scenario
from fabriccfg.mock.ssh import (
    CliProfile,
    DeviceServer,
    DeviceState,
    FaultError,
    Faults,
    faults_by_device,
    public_key_line,
)
from fabriccfg.targets import Endpoint, SnmpAccess, write_endpoints

log = logging.getLogger(__name__)

DEVICES_PER_PROCESS = 40
BACKENDS = ("modelled", "ibsim")
CONTROL_POLL_S = 0.25


class MockError(Exception):
    """The mock fabric cannot start or be controlled (message is safe to print)."""


def profile_for(platform: str) -> CliProfile | None:
    """The mock CLI profile of ``platform`` (None for platforms without a CLI)."""
    info = catalog.info(platform)
    if info.device_type is None:
        return None
    module = registry.mock_profile(platform)
    if module is None:
        raise MockError(f"platform {platform} has a CLI but its package ships no mock.py (mock profile)")
    prof: CliProfile = module.PROFILE
    return prof


def managed_devices(fabric: Fabric) -> list[str]:
    """Devices that get an SSH server (platforms with a CLI), in inventory order."""
    return [name for name, dev in fabric.devices.items() if catalog.info(dev.platform).device_type]


def sidecar(endpoints_file: Path, suffix: str) -> Path:
    return endpoints_file.with_name(endpoints_file.stem + suffix)


# ---------------------------------------------------------------------------------------- worker
@dataclass
class WorkerSpec:
    """Everything one worker (thread or process) needs; picklable."""

    worker_id: int
    fabric: Fabric
    names: list[str]
    passwords: dict[str, str]
    username: str
    community: str
    v3_user: dict[str, str]
    fault_specs: list[str]
    scenarios: list[str]
    seed: int
    t0: float
    client_key: str
    control_path: str | None
    host: str = "127.0.0.1"
    snmp: bool = True
    baselines: dict[str, dict[str, str]] = field(default_factory=dict)
    """Device -> {file: running config text} to start from (``mock up --baseline``)."""
    ibsim: SimHandle | None = None
    """The simulator (``--backend ibsim``): SM hosts run the real OpenSM and diagnostics on it."""
    topology: SimTopology | None = None


@dataclass
class StartedDevice:
    name: str
    ssh_port: int | None
    snmp_port: int | None
    host_key: str
    """The public key line written to known_hosts."""
    faults: list[str] = field(default_factory=list)


class Worker:
    """A set of mock devices on one event loop."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self.devices: dict[str, DeviceState] = {}
        self.servers: dict[str, DeviceServer] = {}
        self.agents: dict[str, Any] = {}
        self.model: Any = None
        self._control_task: asyncio.Task[None] | None = None
        self._control_seen: tuple[float, int] = (0.0, -1)
        self._applied_ops = 0
        self.sms: dict[str, OpenSm] = {}
        self.sm_group = ibsim_backend.SmGroup()
        self.sim_faults = (ibsim_backend.SimFaults(spec.ibsim, spec.topology)
                           if spec.ibsim is not None and spec.topology is not None and spec.worker_id == 0
                           else None)

    def _make_model(self) -> Any:
        try:
            from fabriccfg.mock.traffic import TrafficModel
        except ImportError:
            return None
        try:
            return TrafficModel(self.spec.fabric, self.spec.scenarios, seed=self.spec.seed, t0=self.spec.t0)
        except Exception as exc:
            log.warning("traffic model unavailable: %s", exc)
            return None

    def _telemetry(self, name: str, down: frozenset[str]) -> Callable[[str], tuple[str, int] | None] | None:
        if self.model is None:
            return None
        try:
            from fabriccfg.mock import cli_telemetry
        except ImportError:
            return None
        model = self.model

        def run(line: str) -> tuple[str, int] | None:
            try:
                return cli_telemetry.run(model, name, line, down=down)
            except Exception as exc:  # the mock must answer, even when a renderer is unfinished
                log.debug("telemetry %r on %s failed: %s", line, name, exc)
                return None
        return run

    async def start(self) -> list[StartedDevice]:
        spec = self.spec
        fab = spec.fabric
        faults = faults_by_device(spec.fault_specs)
        down = frozenset(n for n, f in faults.items() if f.unreachable)
        self.model = self._make_model()
        client_keys = asyncssh.import_authorized_keys(spec.client_key)
        results: list[StartedDevice] = []

        async def one(name: str) -> StartedDevice:
            dev_model = fab.devices[name]
            profile = profile_for(dev_model.platform)
            assert profile is not None
            f = faults.get(name, Faults())
            dev = DeviceState(name=name, platform=dev_model.platform, device=dev_model, fabric=fab, faults=f)
            profile.init_state(dev)
            if name in spec.baselines:
                try:
                    profile.load_baseline(dev, spec.baselines[name])
                except BaselineError as exc:
                    raise MockError(f"baseline of {name}: {exc}") from None
            dev.telemetry = self._telemetry(name, down)
            dev.on_session_end = lambda: self.reconcile(name)
            sm_host = catalog.info(dev_model.platform).kind == "sm-host"
            sm_switch = fab.ib is not None and name in {s.device for s in fab.ib.subnet_managers} \
                and catalog.info(dev_model.platform).kind == "switch"
            if spec.ibsim is not None and spec.topology is not None and (sm_host or sm_switch):
                sm = (ibsim_backend.attach_sm_host(dev, spec.ibsim, spec.topology, self.sm_group) if sm_host
                      else ibsim_backend.attach_embedded_sm(dev, spec.ibsim, spec.topology, self.sm_group))
                if sm is not None:
                    self.sms[name] = sm
            elif spec.ibsim is not None and spec.topology is not None and not fab.management_hosts \
                    and catalog.info(dev_model.platform).kind == "gpu-host":
                ibsim_backend.attach_gpu_host(dev, spec.ibsim, spec.topology)
            key = asyncssh.generate_private_key("ssh-ed25519")
            alt = asyncssh.generate_private_key("ssh-ed25519") if f.hostkey_changed else None
            server = DeviceServer(dev, profile, username=spec.username, password=spec.passwords[name],
                                  host_key=key, alt_host_key=alt, client_keys=client_keys)
            ssh_port = await server.start(spec.host)
            self.devices[name] = dev
            self.servers[name] = server
            snmp_port = await self._start_agent(name, f)
            return StartedDevice(name, ssh_port, snmp_port, public_key_line(key), f.kinds())

        results = list(await asyncio.gather(*(one(n) for n in spec.names)))
        for name, sm in self.sms.items():  # booted SM hosts run opensmd with their factory config
            dev = self.devices[name]
            follow = dev.extra.get("embedded_sm")
            if follow is not None:  # a switch's embedded SM runs when its running config enables it
                await asyncio.get_running_loop().run_in_executor(None, follow, dev)
                continue
            err = await asyncio.get_running_loop().run_in_executor(None, ibsim_backend.start_sm, dev, sm)
            if err:
                raise MockError(f"{name}: OpenSM did not come up on the simulated fabric: {err}")
        self.reconcile(t=self.spec.t0 - 1.0)
        if spec.control_path:
            loop = asyncio.get_running_loop()
            self._control_task = loop.create_task(self._control_loop(Path(spec.control_path)))
        return results

    async def _start_agent(self, name: str, f: Faults) -> int | None:
        spec = self.spec
        if not spec.snmp or self.model is None:
            return None
        info = catalog.info(spec.fabric.devices[name].platform)
        if not info.has_snmp or info.kind != "switch":
            return None
        try:
            from fabriccfg.mock.snmp import start_agent
            agent = await start_agent(self.model, name, host=spec.host, community=spec.community,
                                      v3_user=spec.v3_user, faults=["snmp-timeout"] if f.snmp_timeout else [])
        except Exception as exc:
            log.warning("%s: no SNMP agent: %s", name, exc)
            return None
        self.agents[name] = agent
        return int(agent.port)

    def reconcile(self, *names: str, t: float | None = None) -> None:
        """Let the traffic model follow the running configs of ``names`` (default: all devices): where
        each puts the RoCE DSCP and whether PFC is on there (each profile's ``roce_class``)."""
        roce = self.spec.fabric.roce
        if self.model is None or roce is None:
            return
        for name in names or list(self.devices):
            dev = self.devices.get(name)
            profile = profile_for(dev.platform) if dev is not None else None
            if dev is None or profile is None:
                continue
            found = profile.roce_class(dev, roce.roce_dscp)
            if found is not None:
                self.model.set_roce_class(name, found[0], found[1], t=t)

    # ----- runtime scenario control
    def apply_op(self, op: dict[str, Any]) -> str | None:
        if op.get("op") == "inject":
            try:
                sc = parse_scenario(str(op["spec"]), self.spec.fabric)
            except ScenarioError as exc:
                return str(exc)
            if sc.name in IBSIM_ONLY and self.spec.ibsim is None:
                return f"scenario {sc}: needs the ibsim backend (mock up --backend ibsim)"
            try:
                self._ibsim_inject(sc)
            except (IbsimError, ValueError) as exc:
                return f"scenario {sc}: {exc}"
            if sc.name in IBSIM_ONLY:
                return None
        elif op.get("op") == "clear":
            try:
                self._ibsim_clear()
            except IbsimError as exc:
                return str(exc)
        if self.model is None:
            return "no traffic model"
        try:
            if op.get("op") == "sync":
                self.reconcile()
            elif op.get("op") == "inject":
                self.model.inject(str(op["spec"]), t=float(op.get("t") or time.time()))
            elif op.get("op") == "clear":
                self.model.clear(t=float(op.get("t") or time.time()))
        except Exception as exc:
            return str(exc)
        return None

    def _ibsim_inject(self, sc: Any) -> None:
        if self.spec.ibsim is None:
            return
        if sc.name == "sm-death":
            sm = self.sms.get(sc.device)
            if sm is not None:
                sm.kill()
            return
        if self.sim_faults is not None and sc.name in ("link-down", "cabling-swap", "ib-rcv-errors"):
            self.sim_faults.apply(sc)

    def _ibsim_clear(self) -> None:
        if self.sim_faults is not None:
            self.sim_faults.clear()
        for name, sm in self.sms.items():
            if sm.killed and "embedded_sm" in self.devices[name].extra:
                sm.killed = False
                self.devices[name].extra["embedded_sm"](self.devices[name])
            elif sm.killed:
                err = ibsim_backend.start_sm(self.devices[name], sm)
                if err:
                    raise IbsimError(f"{name}: {err}")

    async def _control_loop(self, path: Path) -> None:
        ack = _control_ack_name(path, self.spec.worker_id)
        while True:
            await asyncio.sleep(CONTROL_POLL_S)
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            stamp = (st.st_mtime, st.st_size)
            if stamp == self._control_seen:
                continue
            self._control_seen = stamp
            try:
                doc = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                continue
            ops = doc.get("ops", [])
            errors = []
            for op in ops[self._applied_ops:]:
                err = self.apply_op(op)
                if err:
                    errors.append(err)
            self._applied_ops = len(ops)
            tmp = ack.with_name(ack.name + ".tmp")
            tmp.write_text(json.dumps({"version": doc.get("version", 0), "errors": errors}), encoding="utf-8")
            tmp.replace(ack)

    def close(self) -> None:
        if self._control_task is not None:
            self._control_task.cancel()
        for sm in self.sms.values():
            with contextlib.suppress(Exception):
                sm.stop()
        for server in self.servers.values():
            server.close()
        for agent in self.agents.values():
            with contextlib.suppress(Exception):
                agent.close()


def _control_ack_name(control: Path, worker_id: int) -> Path:
    return control.with_name(control.name.removesuffix(".control.json") + f".ack.{worker_id}")


def worker_entry() -> None:
    """Entry point of a worker process (``python -c 'from fabriccfg.mock.fabric import worker_entry;
    worker_entry()'``): read a pickled :class:`WorkerSpec` on stdin, start, write the pickled result on
    stdout, then serve until stdin closes (the parent stopping or dying)."""
    import pickle
    import signal
    import sys

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    spec = pickle.load(sys.stdin.buffer)  # noqa: S301 - our own parent process wrote it
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    worker = Worker(spec)
    try:
        started: Any = ("ok", loop.run_until_complete(worker.start()))
    except Exception as exc:
        started = ("error", f"{exc.__class__.__name__}: {exc}")
    sys.stdout.buffer.write(pickle.dumps(started))
    sys.stdout.buffer.flush()
    if started[0] != "ok":
        return
    stop = asyncio.Event()
    loop.add_reader(sys.stdin.fileno(), stop.set)
    loop.run_until_complete(stop.wait())
    worker.close()
    loop.run_until_complete(asyncio.sleep(0))


# ---------------------------------------------------------------------------------------- fabric
class MockFabric:
    """A running mock fabric; use as a context manager or call :meth:`start`/:meth:`stop`.

    >>> with MockFabric(fabric, scenarios=["healthy"], workdir=tmp_path) as mock:
    ...     ep = mock.endpoints["leaf-r2"]          # fabriccfg.targets.Endpoint
    ...     mock.inject("pause-storm:gpu01")
    """

    def __init__(self, fabric: Fabric, scenarios: Iterable[str] = (), faults: Iterable[str] = (),
                 workdir: Path | None = None, seed: int = 0, *, endpoints_file: Path | None = None,
                 host: str = "127.0.0.1", processes: int | None = None, snmp: bool = True,
                 inventory_path: Path | None = None, backend: str = "modelled",
                 baselines: dict[str, dict[str, str]] | None = None) -> None:
        self.fabric = fabric
        self.scenarios = list(scenarios)
        self.fault_specs = list(faults)
        self.seed = seed
        self.host = host
        self.snmp = snmp
        self.inventory_path = inventory_path
        if endpoints_file is None:
            endpoints_file = (workdir or Path(".fabriccfg")) / "mock-endpoints.json"
        self.endpoints_file = Path(endpoints_file)
        self.workdir = self.endpoints_file.parent
        self.known_hosts = sidecar(self.endpoints_file, ".known_hosts")
        self.client_key_file = sidecar(self.endpoints_file, ".id_ed25519")
        self.control_file = sidecar(self.endpoints_file, ".control.json")
        self.state_file = sidecar(self.endpoints_file, ".state.json")
        self.names = managed_devices(fabric)
        self.baselines = dict(baselines or {})
        if backend not in BACKENDS:
            raise MockError(f"unknown backend {backend!r}; expected one of: {', '.join(BACKENDS)}")
        self.backend = backend
        self.fallback: str | None = None
        """Why ``--backend ibsim`` fell back to the modelled mock (None when it did not)."""
        self.topology: SimTopology | None = None
        if backend == "ibsim":
            self._prepare_ibsim()
        self.ibsim_dir = sidecar(self.endpoints_file, ".ibsim")
        self._sim: IbSim | None = None
        self._check_inputs()
        n = len(self.names)
        if processes is None:
            processes = 1 if n <= DEVICES_PER_PROCESS else min(max(2, os.cpu_count() or 2),
                                                                math.ceil(n / DEVICES_PER_PROCESS))
        self.processes = max(1, processes)
        self.endpoints: dict[str, Endpoint] = {}
        self.started: dict[str, StartedDevice] = {}
        self.start_seconds = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._worker: Worker | None = None
        self._procs: list[tuple[Any, Any]] = []
        self._version = 0
        self._ops: list[dict[str, Any]] = []

    def _prepare_ibsim(self) -> None:
        if self.fabric.fabric.technology != "infiniband":
            raise MockError("--backend ibsim simulates InfiniBand fabrics only; this inventory is "
                            f"{self.fabric.fabric.technology}")
        reason = unavailable()
        if reason:
            self.fallback = f"ibsim backend unavailable ({reason}): running the modelled mock instead"
            log.warning("%s", self.fallback)
            self.backend = "modelled"
            return
        try:
            self.topology = build_topology(self.fabric)
        except ValueError as exc:
            raise MockError(str(exc)) from None

    def _check_inputs(self) -> None:
        try:
            per_device = faults_by_device(self.fault_specs)
        except FaultError as exc:
            raise MockError(str(exc)) from None
        for name in per_device:
            if name not in self.fabric.devices:
                raise MockError(f"fault for unknown device {name!r}")
            if name not in self.names:
                raise MockError(f"fault for {name!r}: its platform has no CLI to mock")
        for name in self.baselines:
            if name not in self.names:
                raise MockError(f"baseline for {name!r}: no mock device of that name (a device with a CLI)")
        try:
            from fabriccfg.mock.scenarios import parse_all
        except ImportError:
            return
        try:
            parse_all(self.scenarios, self.fabric)
        except ValueError as exc:
            raise MockError(str(exc)) from None

    # ----- lifecycle
    def __enter__(self) -> MockFabric:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> MockFabric:
        t_start = time.perf_counter()
        self.workdir.mkdir(parents=True, exist_ok=True)
        creds = self.fabric.credentials
        username = creds.ssh.username or "admin"
        passwords = {n: pysecrets.token_urlsafe(12) for n in self.names}
        community = "mock-" + pysecrets.token_hex(6)
        v3_name = (creds.snmp.user if creds.snmp and creds.snmp.user else None) or "fabric"
        v3 = {"user": v3_name, "auth_key": pysecrets.token_urlsafe(12),
              "priv_key": pysecrets.token_urlsafe(12),
              "auth_protocol": "sha", "priv_protocol": "aes"}
        client = asyncssh.generate_private_key("ssh-ed25519")
        self.client_key_file.unlink(missing_ok=True)
        fd = os.open(self.client_key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # 0600 from the start
        with os.fdopen(fd, "wb") as fh:
            fh.write(client.export_private_key("openssh"))
        self.client_key_file.chmod(0o600)
        client_pub = client.export_public_key("openssh").decode()
        t0 = time.time()
        self._write_control()
        handle = None
        if self.backend == "ibsim" and self.topology is not None:
            shutil.rmtree(self.ibsim_dir, ignore_errors=True)
            self._sim = IbSim(self.topology, self.ibsim_dir)
            try:
                handle = self._sim.start()
            except IbsimError as exc:
                self._sim = None
                raise MockError(str(exc)) from None
        chunks = [self.names[i::self.processes] for i in range(self.processes)] if self.names else [[]]
        specs = [WorkerSpec(worker_id=i, fabric=self.fabric, names=chunk, passwords=passwords,
                            username=username,
                            community=community, v3_user=v3, fault_specs=self.fault_specs,
                            scenarios=self.scenarios, seed=self.seed, t0=t0, client_key=client_pub,
                            control_path=str(self.control_file), host=self.host, snmp=self.snmp,
                            ibsim=handle, topology=self.topology,
                            baselines={n: self.baselines[n] for n in chunk if n in self.baselines})
                 for i, chunk in enumerate(chunks)]
        try:
            started = self._start_thread(specs[0]) if self.processes == 1 else self._start_processes(specs)
        except BaseException:
            self.stop()
            raise
        self.started = {s.name: s for s in started}
        self._write_files(started, username, passwords, community, v3)
        self.start_seconds = time.perf_counter() - t_start
        return self

    def _start_thread(self, spec: WorkerSpec) -> list[StartedDevice]:
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="mock-fabric", daemon=True)
        self._thread.start()
        self._worker = Worker(spec)
        fut = asyncio.run_coroutine_threadsafe(self._worker.start(), loop)
        return fut.result(timeout=120)

    def _start_processes(self, specs: list[WorkerSpec]) -> list[StartedDevice]:
        import pickle
        import select
        import subprocess
        import sys

        # Plain subprocesses, not multiprocessing: works from any caller (no __main__ guard needed).
        for spec in specs:
            proc = subprocess.Popen(
                [sys.executable, "-c", "from fabriccfg.mock.fabric import worker_entry; worker_entry()"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            assert proc.stdin is not None
            proc.stdin.write(pickle.dumps(spec))
            proc.stdin.flush()
            self._procs.append((proc, spec.worker_id))
        out: list[StartedDevice] = []
        deadline = time.monotonic() + 120
        for proc, wid in self._procs:
            assert proc.stdout is not None
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise MockError(f"mock worker {wid} did not start within 120 s")
            try:
                status, payload = pickle.load(proc.stdout)  # noqa: S301 - our own child
            except EOFError:
                raise MockError(f"mock worker {wid} exited during start (status {proc.wait()})") from None
            if status != "ok":
                raise MockError(f"mock worker {wid}: {payload}")
            out.extend(payload)
        return out

    def stop(self) -> None:
        if self._worker is not None and self._loop is not None:
            worker, loop = self._worker, self._loop
            with contextlib.suppress(Exception):
                loop.call_soon_threadsafe(worker.close)

                async def _drain() -> None:
                    await asyncio.sleep(0)

                asyncio.run_coroutine_threadsafe(_drain(), loop).result(timeout=5)
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(timeout=5)
            with contextlib.suppress(Exception):
                loop.close()
        self._worker = None
        self._loop = None
        self._thread = None
        for proc, _ in self._procs:
            with contextlib.suppress(Exception):
                proc.stdin.close()
        for proc, _ in self._procs:
            try:
                proc.wait(timeout=5)
            except Exception:
                proc.terminate()
                with contextlib.suppress(Exception):
                    proc.wait(timeout=2)
            with contextlib.suppress(Exception):
                proc.stdout.close()
        self._procs = []
        if self._sim is not None:
            self._sim.stop()
            self._sim = None

    # ----- files
    def _write_files(self, started: list[StartedDevice], username: str, passwords: dict[str, str],
                     community: str, v3: dict[str, str]) -> None:
        kh_lines = []
        eps: list[Endpoint] = []
        version = self.fabric.credentials.snmp.version if self.fabric.credentials.snmp else "3"
        for s in sorted(started, key=lambda s: self.names.index(s.name)):
            dev = self.fabric.devices[s.name]
            info = catalog.info(dev.platform)
            kh_lines.append(f"[{self.host}]:{s.ssh_port} {s.host_key}")
            snmp = None
            if s.snmp_port is not None:
                snmp = (SnmpAccess(version="2c", community=community) if version == "2c" else
                        SnmpAccess(version="3", user=v3["user"], auth_protocol="sha", auth_key=v3["auth_key"],
                                   priv_protocol="aes", priv_key=v3["priv_key"]))
            eps.append(Endpoint(name=s.name, platform=dev.platform, device_type=info.device_type,
                                host=self.host,
                                ssh_port=s.ssh_port, snmp_port=s.snmp_port, username=username,
                                password=passwords[s.name], known_hosts=str(self.known_hosts.resolve()),
                                snmp=snmp))
        self.known_hosts.write_text("".join(x + "\n" for x in kh_lines), encoding="utf-8")
        write_endpoints(self.endpoints_file, eps)
        self.endpoints = {e.name: e for e in eps}
        state = {"inventory": str(self.inventory_path.resolve()) if self.inventory_path else None,
                 "workers": self.processes, "seed": self.seed, "scenarios": self.scenarios,
                 "faults": self.fault_specs, "pid": os.getpid(), "started": time.time(),
                 "control": str(self.control_file.resolve()), "backend": self.backend,
                 "ibsim": str(self.ibsim_dir.resolve()) if self.backend == "ibsim" else None,
                 "ibsim_pgid": self._sim.handle.pgid if self._sim is not None and self._sim.handle else None}
        self.state_file.write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")

    # ----- in-process access
    def device(self, name: str) -> DeviceState:
        """The live state of ``name`` (in-process mode only; read it, or change it via :meth:`call`)."""
        if self._worker is None:
            raise MockError("device state is only reachable in in-process mode (processes=1)")
        return self._worker.devices[name]

    def ssh_connections(self, name: str) -> int:
        """How many SSH connections ``name`` has open (in-process mode): a test waits for a session to end."""
        worker = self._worker
        if worker is None:
            raise MockError("device state is only reachable in in-process mode (processes=1)")
        return int(self.call(lambda: len(worker.servers[name].connections)))

    def call(self, fn: Callable[[], Any], timeout: float = 10.0) -> Any:
        """Run ``fn`` on the mock's event loop (in-process mode) and return its result."""
        if self._loop is None:
            raise MockError("no in-process loop")

        async def run() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(timeout)

    @property
    def model(self) -> Any:
        return self._worker.model if self._worker is not None else None

    # ----- scenarios at runtime
    def _write_control(self) -> None:
        doc = {"version": self._version, "ops": self._ops}
        tmp = self.control_file.with_name(self.control_file.name + ".tmp")
        tmp.write_text(json.dumps(doc), encoding="utf-8")
        tmp.replace(self.control_file)

    def inject(self, spec: str, timeout: float | None = None) -> None:
        """Start scenario ``spec`` now in every worker (waits for their acknowledgement)."""
        timeout = timeout if timeout is not None else (90.0 if self.backend == "ibsim" else 5.0)
        send_control(self.endpoints_file, {"op": "inject", "spec": spec}, self.processes, timeout,
                     fabric=self.fabric)

    def sync(self, timeout: float = 5.0) -> None:
        """Make every worker's traffic model follow the devices' running configs now (sessions that end
        do it too; call this before sampling so no sample predates a change)."""
        send_control(self.endpoints_file, {"op": "sync"}, self.processes, timeout)

    def clear_scenarios(self, timeout: float | None = None) -> None:
        timeout = timeout if timeout is not None else (90.0 if self.backend == "ibsim" else 5.0)
        send_control(self.endpoints_file, {"op": "clear"}, self.processes, timeout)


def send_control(endpoints_file: Path, op: dict[str, Any], workers: int, timeout: float = 5.0,
                 fabric: Fabric | None = None) -> None:
    """Append ``op`` to the control file and wait until every worker acknowledged it."""
    if op.get("op") == "inject" and fabric is not None:
        try:
            from fabriccfg.mock.scenarios import parse
            parse(str(op["spec"]), fabric)
        except ImportError:
            pass
        except ValueError as exc:
            raise MockError(str(exc)) from None
    control = sidecar(endpoints_file, ".control.json")
    try:
        doc = json.loads(control.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        raise MockError(f"{control}: no running mock fabric here") from None
    doc["version"] = int(doc.get("version", 0)) + 1
    doc.setdefault("ops", []).append({**op, "t": time.time()})
    tmp = control.with_name(control.name + ".tmp")
    tmp.write_text(json.dumps(doc), encoding="utf-8")
    tmp.replace(control)
    deadline = time.monotonic() + timeout
    pending = set(range(workers))
    errors: list[str] = []
    while pending and time.monotonic() < deadline:
        for w in list(pending):
            try:
                ack = json.loads(_control_ack_name(control, w).read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                continue
            if int(ack.get("version", -1)) >= doc["version"]:
                pending.discard(w)
                errors += ack.get("errors", [])
        if pending:
            time.sleep(0.05)
    if pending:
        raise MockError(f"mock workers {sorted(pending)} did not acknowledge within {timeout:g} s")
    if errors:
        raise MockError("; ".join(sorted(set(errors))))


def remove_files(endpoints_file: Path, workers: int = 64) -> None:
    for path in [endpoints_file, *(sidecar(endpoints_file, s) for s in
                                   (".known_hosts", ".id_ed25519", ".control.json", ".state.json", ".pid",
                                    ".log"))]:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    control = sidecar(endpoints_file, ".control.json")
    for w in range(workers):
        with contextlib.suppress(FileNotFoundError):
            _control_ack_name(control, w).unlink()
    shutil.rmtree(sidecar(endpoints_file, ".ibsim"), ignore_errors=True)
