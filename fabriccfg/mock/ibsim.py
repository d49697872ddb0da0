"""The ibsim backend: the real OpenSM and infiniband-diags on a fabric simulated by ibsim.

``ibsim`` (Debian ``ibsim-utils``) simulates the fabric of a topology file; the preload library
``libumad2sim.so`` (Debian ``libumad2sim0``) makes unmodified libibumad programs (``opensm``,
``ibnetdiscover``, ``perfquery``, ``sminfo``, ``smpquery`` ...) talk to it instead of ``/dev/umad``.
No root, no kernel module, no hardware. Facts this module relies on (``ib.md`` §9):

- clients attach as the node named by ``SIM_HOST`` (our node ids, :mod:`fabriccfg.mock.ibsim_topology`);
- ``IBSIM_SOCKNAME`` names the (abstract) sockets, so parallel fabrics (pytest-xdist) stay apart;
- clients write ``./sys-<pid>`` files: they run in a scratch directory;
- ``/usr/bin/ibsim-run`` is broken when ``LD_PRELOAD`` is set: we set ``LD_PRELOAD`` ourselves;
- ibsim reads console commands (``Unlink``, ``Link``, ``Error`` ...) on stdin and prints a ``sim> ``
  prompt after each: its stdin is a FIFO that any process of the mock may write to, and a command
  has been applied once the prompt count grew;
- OpenSM's ``-f`` log is block-buffered unless ``force_log_flush``: we run OpenSM with ``-f stdout``
  under ``stdbuf -oL`` (the log goes to a file, line-buffered) and poll readiness with ``sminfo``.

Process hygiene: ibsim leads a new process group; every OpenSM and tool joins it, so one
``killpg`` ends the fabric (:meth:`IbSim.stop`); each child also gets ``PR_SET_PDEATHSIG`` so a
crashed parent takes its simulator along.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import secrets
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from fabriccfg.mock.ibsim_topology import SimNode, SimTopology

PRELOAD_GLOB = "/usr/lib/*/umad2sim/libumad2sim.so"
TOOLS = ("ibnetdiscover", "perfquery", "ibqueryerrors", "sminfo", "smpquery", "iblinkinfo", "saquery",
         "ibroute", "ibstat", "ibaddr", "ibportstate", "ibswitches", "ibhosts", "ibping")
"""infiniband-diags the SM hosts' shells run for real under the preload library."""
PROMPT = b"sim> "
START_TIMEOUT_S = 20.0
TOOL_TIMEOUT_S = 60.0
_PR_SET_PDEATHSIG = 1


class IbsimError(Exception):
    """The simulator or a client of it failed (message is safe to print)."""


def preload_library() -> str | None:
    """Path of ``libumad2sim.so`` (the multiarch directory differs by architecture)."""
    found = sorted(Path("/").glob(PRELOAD_GLOB.lstrip("/")))
    return str(found[0]) if found else None


def which(name: str) -> str | None:
    """``name`` on PATH or in the sbin directories (opensm and the diags live in /usr/sbin)."""
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin:/usr/local/sbin")


def unavailable() -> str | None:
    """Why the ibsim backend cannot run here (None when it can)."""
    needed = ("ibsim", "opensm", "ibnetdiscover", "sminfo", "smpquery", "stdbuf")
    missing = [n for n in needed if not which(n)]
    if missing:
        return ("the ibsim backend needs " + ", ".join(missing) +
                " (Debian: apt-get install ibsim-utils opensm infiniband-diags)")
    if preload_library() is None:
        return f"the ibsim backend needs the preload library {PRELOAD_GLOB} (Debian: libumad2sim0)"
    return None


def _die_with_parent() -> None:
    """preexec: SIGKILL this child when the thread that forked it dies (a crashed mock)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _pg_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class SimHandle:
    """What a client of a running simulator needs (picklable: worker processes get a copy)."""

    sockname: str
    workdir: str
    fifo: str
    log: str
    preload: str
    pgid: int

    def env(self, node: SimNode) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "SIM_HOST", "IBSIM_SOCKNAME")}
        env.update(LD_PRELOAD=self.preload, IBSIM_SOCKNAME=self.sockname, SIM_HOST=node.nodeid)
        return env

    def scratch(self) -> Path:
        path = Path(self.workdir) / "scratch"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def popen_kwargs(self) -> dict[str, object]:
        """Join the simulator's process group (one killpg ends everything) when it still exists."""
        kw: dict[str, object] = {"preexec_fn": _die_with_parent}  # prctl only: safe after fork
        if _pg_alive(self.pgid):
            kw["process_group"] = self.pgid
        return kw

    def run_tool(self, node: SimNode, argv: list[str], timeout: float = TOOL_TIMEOUT_S) -> tuple[str, int]:
        """Run an infiniband-diags tool as ``node`` (stdout+stderr, exit status)."""
        exe = which(argv[0])
        if exe is None or Path(argv[0]).name not in TOOLS:
            return f"bash: {argv[0]}: command not found\n", 127
        try:
            proc = subprocess.run([exe, *argv[1:]], env=self.env(node), cwd=self.scratch(),
                                  capture_output=True, timeout=timeout, check=False,
                                  **self.popen_kwargs())  # type: ignore[call-overload]
        except subprocess.TimeoutExpired:
            return f"{argv[0]}: timed out after {timeout:g} s\n", 124
        out = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
        return out, int(proc.returncode)

    # ----- console
    def prompts(self) -> int:
        try:
            return Path(self.log).read_bytes().count(PROMPT)
        except OSError:
            return 0

    def console(self, *commands: str, timeout: float = 10.0) -> str:
        """Send console commands and wait until ibsim has processed them; returns their output."""
        for c in commands:
            if "\n" in c or not c.strip():
                raise IbsimError(f"bad ibsim console command {c!r}")
        before_bytes = _size(self.log)
        before = self.prompts()
        try:
            fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            raise IbsimError(f"ibsim console {self.fifo}: {exc.strerror}") from None
        try:
            os.write(fd, "".join(c + "\n" for c in commands).encode())
        finally:
            os.close(fd)
        deadline = time.monotonic() + timeout
        while self.prompts() < before + len(commands):
            if time.monotonic() > deadline:
                raise IbsimError(f"ibsim did not process {commands!r} within {timeout:g} s")
            time.sleep(0.01)
        with open(self.log, "rb") as fh:
            fh.seek(before_bytes)
            return fh.read().decode("utf-8", "replace")


def _size(path: str) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0


class IbSim:
    """A running ``ibsim`` for one topology (use as a context manager or start()/stop())."""

    def __init__(self, topology: SimTopology, workdir: Path, sockname: str | None = None) -> None:
        reason = unavailable()
        if reason:
            raise IbsimError(reason)
        self.topology = topology
        self.workdir = Path(workdir)
        self.sockname = sockname or f"fabriccfg-{os.getpid()}-{secrets.token_hex(4)}"
        self.proc: subprocess.Popen[bytes] | None = None
        self._wfd: int | None = None
        self.handle: SimHandle | None = None

    def __enter__(self) -> IbSim:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> SimHandle:
        self.workdir.mkdir(parents=True, exist_ok=True)
        net = self.workdir / "fabric.net"
        net.write_text(self.topology.netfile(), encoding="utf-8")
        fifo = self.workdir / "ibsim.console"
        log = self.workdir / "ibsim.log"
        with contextlib.suppress(FileNotFoundError):
            fifo.unlink()
        os.mkfifo(fifo, 0o600)
        rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        self._wfd = os.open(fifo, os.O_WRONLY)  # held open: ibsim's console never sees EOF while we live
        os.set_blocking(rfd, True)
        env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "SIM_HOST")}
        env["IBSIM_SOCKNAME"] = self.sockname
        exe = which("ibsim")
        assert exe is not None
        nodes = len(self.topology.nodes)
        nswitch = sum(1 for n in self.topology.nodes if n.kind == "switch")
        args = [exe, "-s", "-N", str(max(nodes + 16, 2048)), "-S", str(max(nswitch + 8, 256)),
                "-P", str(max(sum(n.nports + 1 for n in self.topology.nodes) + 64, 13312)), str(net)]
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(args, stdin=rfd, stdout=out, stderr=subprocess.STDOUT,
                                         cwd=self.workdir, env=env, process_group=0,
                                         preexec_fn=_die_with_parent)  # noqa: PLW1509 (fork of a
        # tiny C call; the mock's threads hold no locks the child needs)
        os.close(rfd)
        preload = preload_library()
        assert preload is not None
        self.handle = SimHandle(self.sockname, str(self.workdir), str(fifo), str(log), preload, self.proc.pid)
        deadline = time.monotonic() + START_TIMEOUT_S
        while self.handle.prompts() < 1:
            if self.proc.poll() is not None:
                tail = log.read_text(errors="replace").strip().splitlines()[-3:]
                self.stop()
                raise IbsimError("ibsim exited during start: " + " | ".join(tail))
            if time.monotonic() > deadline:
                self.stop()
                raise IbsimError(f"ibsim did not start within {START_TIMEOUT_S:g} s")
            time.sleep(0.01)
        return self.handle

    def stop(self) -> None:
        """End ibsim and every process of its group (OpenSMs, tools)."""
        proc = self.proc
        if proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
            deadline = time.monotonic() + 5
            while _pg_alive(proc.pid) and time.monotonic() < deadline:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                time.sleep(0.02)
        self.proc = None
        if self._wfd is not None:
            with contextlib.suppress(OSError):
                os.close(self._wfd)
            self._wfd = None


# --------------------------------------------------------------------------------------- OpenSM
_PATH_VALUE = re.compile(r"^(\s*)(\S+)(\s+)(/\S*)\s*$")


def sandbox_conf(text: str, root: Path) -> str:
    """``opensm.conf`` with every absolute-path value moved under ``root`` (the mock host's /)."""
    out = []
    for raw in text.splitlines():
        m = _PATH_VALUE.match(raw)
        if m and not raw.lstrip().startswith("#"):
            out.append(f"{m.group(1)}{m.group(2)}{m.group(3)}{root}{m.group(4)}")
        else:
            out.append(raw)
    return "\n".join(out) + "\n"


@dataclass
class OpenSm:
    """The real OpenSM of one SM host, started from the files its mock host holds."""

    sim: SimHandle
    node: SimNode
    name: str
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0
    killed: bool = False
    observer: SimNode | None = None
    """A CA from which ``sminfo`` judges readiness (None: the SM's own port)."""
    root: Path = field(init=False)

    def __post_init__(self) -> None:
        self.root = Path(self.sim.workdir) / "hosts" / self.name

    @property
    def log_path(self) -> Path:
        return self.root / "var/log/opensm.log"

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, files: dict[str, str], conf: str = "/etc/opensm/opensm.conf") -> None:
        """(Re)start OpenSM with the host's ``/etc`` files (paths inside opensm.conf sandboxed)."""
        self.stop()
        for path, text in files.items():
            if not path.startswith("/etc/"):
                continue
            dst = self.root / path.lstrip("/")
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_text(sandbox_conf(text, self.root) if path == conf else text, encoding="utf-8")
        if conf not in files:
            raise IbsimError(f"{self.name}: {conf} missing")
        for d in ("var/log", "var/cache/opensm", "tmp"):
            (self.root / d).mkdir(parents=True, exist_ok=True)
        env = self.sim.env(self.node)
        env.update(OSM_CACHE_DIR=str(self.root / "var/cache/opensm"), OSM_TMP_DIR=str(self.root / "tmp"))
        stdbuf, opensm = which("stdbuf"), which("opensm")
        assert stdbuf and opensm
        args = [stdbuf, "-oL", opensm, "-F", str(self.root / conf.lstrip("/")), "-f", "stdout"]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, cwd=self.sim.scratch(), env=env,
                                         **self.sim.popen_kwargs())  # type: ignore[call-overload]
        self.starts += 1
        self.killed = False

    def stop(self, sig: int = signal.SIGTERM) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(sig)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        self.proc = None

    def kill(self) -> None:
        """SM death: SIGKILL, as a crash (no handover)."""
        self.stop(signal.SIGKILL)
        self.killed = True

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""


def sminfo(sim: SimHandle, node: SimNode, lid: int | None = None, timeout: float = 10.0) -> tuple[str, int]:
    args = ["sminfo", "-t", "200"] + ([str(lid)] if lid is not None else [])
    return sim.run_tool(node, args, timeout=timeout)


def wait_until(check: Callable[[], bool], timeout: float, what: str, poll: float = 0.05) -> None:
    """Poll ``check`` until true (IbsimError naming ``what`` after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise IbsimError(f"{what}: not reached within {timeout:g} s")
        time.sleep(poll)


def wait_master(sim: SimHandle, node: SimNode, timeout: float = 60.0, min_priority: int = 0) -> str:
    """Wait until ``sminfo`` from ``node`` reports a MASTER SM of at least ``min_priority`` (a
    restarted SM that outranks the master has taken over by then); returns that sminfo line."""
    last = [""]

    def ok() -> bool:
        out, rc = sminfo(sim, node)
        last[0] = out
        m = re.search(r"priority (\d+) state 3 SMINFO_MASTER", out)
        return rc == 0 and m is not None and int(m.group(1)) >= min_priority

    wait_until(ok, timeout, f"a MASTER SM (priority >= {min_priority}) seen from {node.desc} "
                            f"(last sminfo: {last[0].strip()[:120]})")
    return last[0]


def conf_priority(files: dict[str, str], conf: str = "/etc/opensm/opensm.conf") -> int:
    """``sm_priority`` of an opensm.conf (0 when unset, as OpenSM)."""
    m = re.search(r"^\s*sm_priority\s+(\d+)", files.get(conf, ""), re.M)
    return min(15, int(m.group(1))) if m else 0


def wait_subnet_up(sm: OpenSm, timeout: float = 60.0, since: int = 0) -> None:
    """Wait until the SM's (line-buffered) log says ``SUBNET UP`` after byte offset ``since``."""
    def ok() -> bool:
        if sm.proc is not None and sm.proc.poll() is not None:
            raise IbsimError(f"OpenSM on {sm.name} exited with status {sm.proc.returncode}: "
                             + " | ".join(sm.log_text().strip().splitlines()[-3:]))
        return "SUBNET UP" in sm.log_text()[since:]

    wait_until(ok, timeout, f"SUBNET UP in {sm.name}'s OpenSM log")


_NOT_CONFIG = re.compile(r"log_trap_info: Received Generic Notice type:4 num:144 |ERR 5412: ")
"""ERROR-level lines that say nothing about the configuration: OpenSM logs every received trap at
ERROR level (osm_trap_rcv.c ``log_trap_info``) and a standby SM joining sends trap 144 ("SM priority
changed"); ERR 5412 is a reply that arrived after its MAD timed out (the simulator starved of CPU)."""


def error_lines(log: str) -> list[str]:
    """OpenSM log lines at ERROR level (``0x01 ->``), less the :data:`_NOT_CONFIG` ones."""
    return [ln for ln in log.splitlines() if re.search(r"\]\s+0x01\s+->", ln) and not _NOT_CONFIG.search(ln)]


def live(procs: Iterable[OpenSm]) -> list[str]:
    return [p.name for p in procs if p.running()]
