"""The asyncssh server core of the mock fabric: one SSH server per mock device.

Why not asyncssh's line editor: under load it echoes a newline at once while the prompt comes later,
so a burst of newlines can leave several prompts on one line and netmiko's ``find_prompt`` reads
garbage (netmiko_pysnmp.md §7). Here the session runs in raw mode and writes the echo, the output and
the next prompt in one write, so every prompt starts on a fresh line.

What a platform looks like (prompts, modes, commands, error texts) is a :class:`CliProfile` in
the platform package's ``mock`` module (``fabriccfg/platforms/<name>/mock.py``); the device's state
(running and saved config, files, command log) is a :class:`DeviceState` shared by all sessions of that
device.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import socket
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import asyncssh

from fabriccfg.mock.baseline import BaselineError

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric

FAULT_KINDS = ("auth-fail", "unreachable", "slow", "disconnect-after", "reject", "hostkey-changed",
               "snmp-timeout")


class FaultError(ValueError):
    """A ``--fault`` spec that cannot be parsed (message is safe to print)."""


@dataclass
class Faults:
    """The faults injected into one device."""

    auth_fail: bool = False
    unreachable: bool = False
    slow: float = 0.0
    disconnect_after: int | None = None
    reject: re.Pattern[str] | None = None
    hostkey_changed: bool = False
    snmp_timeout: bool = False

    def kinds(self) -> list[str]:
        out = []
        if self.auth_fail:
            out.append("auth-fail")
        if self.unreachable:
            out.append("unreachable")
        if self.slow:
            out.append(f"slow={self.slow:g}")
        if self.disconnect_after is not None:
            out.append(f"disconnect-after={self.disconnect_after}")
        if self.reject is not None:
            out.append(f"reject={self.reject.pattern}")
        if self.hostkey_changed:
            out.append("hostkey-changed")
        if self.snmp_timeout:
            out.append("snmp-timeout")
        return out


def parse_fault(spec: str) -> tuple[str, str, str | None]:
    """``DEVICE:KIND[=ARG]`` -> (device, kind, arg); raises :class:`FaultError`."""
    device, sep, rest = spec.partition(":")
    if not sep or not device or not rest:
        raise FaultError(f"fault {spec!r}: write DEVICE:KIND[=ARG] (kinds: {', '.join(FAULT_KINDS)})")
    kind, eq, arg = rest.partition("=")
    if kind not in FAULT_KINDS:
        raise FaultError(f"fault {spec!r}: unknown kind {kind!r} (kinds: {', '.join(FAULT_KINDS)})")
    needs_arg = kind in ("slow", "disconnect-after", "reject")
    if needs_arg and not arg:
        raise FaultError(f"fault {spec!r}: {kind} needs a value ({kind}=...)")
    if not needs_arg and eq:
        raise FaultError(f"fault {spec!r}: {kind} takes no value")
    return device, kind, (arg if needs_arg else None)


def faults_by_device(specs: list[str]) -> dict[str, Faults]:
    """Parse ``--fault`` specs into one :class:`Faults` per device (raises :class:`FaultError`)."""
    out: dict[str, Faults] = {}
    for spec in specs:
        device, kind, arg = parse_fault(spec)
        f = out.setdefault(device, Faults())
        try:
            if kind == "auth-fail":
                f.auth_fail = True
            elif kind == "unreachable":
                f.unreachable = True
            elif kind == "slow":
                f.slow = float(arg or 0)
                if f.slow < 0:
                    raise ValueError("negative")
            elif kind == "disconnect-after":
                f.disconnect_after = int(arg or 0)
                if f.disconnect_after < 1:
                    raise ValueError("must be >= 1")
            elif kind == "reject":
                f.reject = re.compile(arg or "")
            elif kind == "hostkey-changed":
                f.hostkey_changed = True
            elif kind == "snmp-timeout":
                f.snmp_timeout = True
        except (ValueError, re.error) as exc:
            raise FaultError(f"fault {spec!r}: bad value {arg!r} ({exc})") from None
    return out


@dataclass
class DeviceState:
    """Everything a device remembers across sessions."""

    name: str
    platform: str
    device: Device | None = None
    fabric: Fabric | None = None
    running: Any = None
    saved: Any = None
    files: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    log: deque[str] = field(default_factory=lambda: deque(maxlen=20000))
    telemetry: Callable[[str], tuple[str, int] | None] | None = None
    """Runs a telemetry command line (``perfquery -x``, ``nv show ...``): (output, status) or None."""
    faults: Faults = field(default_factory=Faults)
    disconnect_fired: bool = False
    on_session_end: Callable[[], None] | None = None
    """Called when an SSH session of the device ends (the mock fabric re-reads the running config)."""
    started: float = field(default_factory=time.time)


class CliSession:
    """One interactive session: the profile's state machine for a single SSH channel.

    Subclasses implement :meth:`prompt` and :meth:`execute`. Config-changing lines go through
    :meth:`config_gate` (``reject=`` fault) and :meth:`config_applied` (``disconnect-after=``).
    """

    error_format = "% Invalid input: {line}"

    def __init__(self, dev: DeviceState) -> None:
        self.dev = dev
        self.closing = False
        self.drop = False
        self.config_count = 0

    # -- to implement
    def banner(self) -> str:
        return ""

    def prompt(self) -> str:
        raise NotImplementedError

    def execute(self, line: str) -> str:
        """Run one input line; return its output (without the prompt)."""
        raise NotImplementedError

    # -- helpers
    def error(self, line: str) -> str:
        return self.error_format.format(line=line, word=(line.split() or [""])[0])

    def config_gate(self, line: str) -> str | None:
        """The error text when the ``reject=`` fault refuses ``line``, else None."""
        rx = self.dev.faults.reject
        if rx is not None and rx.search(line):
            return self.error(line)
        return None

    def run_telemetry(self, line: str) -> tuple[str, int] | None:
        """The device's telemetry hook on ``line``: (output, status), or None when it has no such command."""
        tel = self.dev.telemetry
        return tel(line) if tel is not None else None

    def config_applied(self, n: int = 1) -> None:
        """Count applied config lines; the ``disconnect-after`` fault drops the session (once per device)."""
        self.config_count += n
        limit = self.dev.faults.disconnect_after
        if limit is not None and not self.dev.disconnect_fired and self.config_count >= limit:
            self.dev.disconnect_fired = True
            self.drop = True

    def on_close(self) -> None:
        """Called when the channel closes (any reason)."""

    def exit_status(self) -> int:
        """The channel's exit status (exec requests: the command's status)."""
        return 0


class CliProfile:
    """A platform's CLI: which session class to run and how to initialise device state."""

    name = "generic"
    session_class: type[CliSession] = CliSession

    def init_state(self, dev: DeviceState) -> None:
        """Fill ``dev.running``/``dev.saved``/``dev.files`` for a fresh device."""

    def new_session(self, dev: DeviceState) -> CliSession:
        return self.session_class(dev)

    def load_baseline(self, dev: DeviceState, files: Mapping[str, str]) -> None:
        """Start ``dev`` from the running config ``files`` ({file: text}; ``mock up --baseline``)."""
        raise BaselineError(f"the {self.name} mock cannot start from a baseline")

    def roce_class(self, dev: DeviceState, dscp: int) -> tuple[int | None, bool] | None:
        """Where ``dev``'s running config puts DSCP ``dscp``: (priority, PFC on that priority), None when
        this profile cannot tell (the traffic model then keeps the intended lossless class)."""
        return None


def to_crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


_session_ids = itertools.count(1)

WRITE_CHUNK = 16384
"""Largest piece of output written in one loop step (see :meth:`_Channel._send`)."""


class _Channel(asyncssh.SSHServerSession[str]):
    """Raw-mode PTY shell: split lines, run them in order, write echo + output + prompt at once."""

    def __init__(self, profile: CliProfile, dev: DeviceState) -> None:
        self._profile = profile
        self._dev = dev
        self._cli: CliSession | None = None
        self._chan: asyncssh.SSHServerChannel[str] | None = None
        self._buf = ""
        self._last_cr = False
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._sid = next(_session_ids)
        self._exec = False
        self._lost = False

    def connection_made(self, chan: asyncssh.SSHServerChannel[str]) -> None:
        self._chan = chan

    def pty_requested(self, term_type: str, term_size: tuple[int, int, int, int],
                      term_modes: Any) -> bool:
        return True

    def shell_requested(self) -> bool:
        return True

    def exec_requested(self, command: str) -> bool:
        # One-shot commands (ssh host CMD): run the line, print, close.
        self._queue.put_nowait(command)
        self._queue.put_nowait(None)
        self._exec = True
        return True

    def session_started(self) -> None:
        self._cli = self._profile.new_session(self._dev)
        self._task = asyncio.get_running_loop().create_task(self._run())

    def data_received(self, data: str, datatype: Any) -> None:
        for ch in data:
            if ch in "\r\n":
                if ch == "\n" and self._last_cr:
                    self._last_cr = False
                    continue
                self._last_cr = ch == "\r"
                self._queue.put_nowait(self._buf)
                self._buf = ""
                continue
            self._last_cr = False
            if ch == "\x00":
                continue
            if ch == "\x03":  # Ctrl-C: drop the partial line
                self._buf = ""
                continue
            if ch in "\x7f\x08":
                self._buf = self._buf[:-1]
                continue
            self._buf += ch

    def eof_received(self) -> bool:
        self._queue.put_nowait(None)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        if self._task is not None and not self._task.done():
            self._task.cancel()
        if self._cli is not None:
            self._cli.on_close()
        if self._dev.on_session_end is not None:
            self._dev.on_session_end()

    async def _send(self, chan: asyncssh.SSHServerChannel[str], text: str) -> bool:
        """Write ``text`` unless the client has gone; False once it has (the caller stops writing).

        A client may vanish mid-burst (netmiko's ``disconnect`` sends ``exit`` and closes at once, a
        watchdog kills a session): the first write then fails and asyncio schedules the transport's
        ``connection_lost``, but every further write in the same loop step still reaches the dead
        socket, and from the fifth on asyncio logs ``socket.send() raised exception.``. So yield
        before each write (that callback runs first and detaches asyncssh from the socket) and write
        in chunks of at most :data:`WRITE_CHUNK` (a big output is many SSH packets).
        """
        for start in range(0, max(len(text), 1), WRITE_CHUNK):
            await asyncio.sleep(0)
            if self._lost or chan.is_closing():
                return False
            chan.write(text[start:start + WRITE_CHUNK])
        return True

    async def _run(self) -> None:
        cli = self._cli
        chan = self._chan
        assert cli is not None and chan is not None
        faults = self._dev.faults  # read per line: a test may make a device slow mid-session
        exec_mode = self._exec
        try:
            if not exec_mode:
                if faults.slow:
                    await asyncio.sleep(faults.slow)
                if not await self._send(chan, to_crlf(cli.banner()) + cli.prompt()):
                    return
            while True:
                line = await self._queue.get()
                if line is None:
                    break
                self._dev.log.append(line)
                try:
                    out = cli.execute(line)
                except Exception as exc:  # a mock bug must not kill the server
                    out = f"mock internal error: {exc.__class__.__name__}: {exc}"
                if faults.slow:
                    await asyncio.sleep(faults.slow)
                text = "" if exec_mode else line + "\r\n"
                if out:
                    text += to_crlf(out if out.endswith("\n") else out + "\n")
                if cli.drop:
                    if await self._send(chan, text):
                        chan.get_extra_info("connection").close()
                    return
                if cli.closing:
                    if not await self._send(chan, text):
                        return
                    break
                if not await self._send(chan, text + ("" if exec_mode else cli.prompt())):
                    return
            await asyncio.sleep(0)  # as in _send: a client gone after our last write is noticed first
            if not (self._lost or chan.is_closing()):
                chan.exit(cli.exit_status() if exec_mode else 0)
        except (asyncssh.Error, OSError, BrokenPipeError):
            pass
        except asyncio.CancelledError:
            raise


class _Server(asyncssh.SSHServer):
    def __init__(self, mock: DeviceServer) -> None:
        self._mock = mock
        self._conn: asyncssh.SSHServerConnection | None = None

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._conn = conn
        self._mock.connections.add(conn)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._conn is not None:
            self._mock.connections.discard(self._conn)

    def begin_auth(self, username: str) -> bool:
        mock = self._mock
        if self._conn is not None and mock.client_keys is not None and not mock.dev.faults.auth_fail \
                and username == mock.username:
            self._conn.set_authorized_keys(mock.client_keys)
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        if self._mock.dev.faults.auth_fail:
            return False
        return username == self._mock.username and password == self._mock.password

    def public_key_auth_supported(self) -> bool:
        return self._mock.client_keys is not None

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        # Reached only when no authorized keys were set (auth-fail): refuse every key.
        return False

    def session_requested(self) -> asyncssh.SSHServerSession[str]:
        return _Channel(self._mock.profile, self._mock.dev)


class DeviceServer:
    """One mock device's SSH server on ``host``: start with :meth:`start`, stop with :meth:`close`."""

    def __init__(self, dev: DeviceState, profile: CliProfile, *, username: str, password: str,
                 host_key: asyncssh.SSHKey, alt_host_key: asyncssh.SSHKey | None = None,
                 client_keys: asyncssh.SSHAuthorizedKeys | None = None) -> None:
        self.dev = dev
        self.profile = profile
        self.username = username
        self.password = password
        self.host_key = host_key
        self.alt_host_key = alt_host_key
        self.client_keys = client_keys
        self.port = 0
        self.connections: set[asyncssh.SSHServerConnection] = set()
        self._server: asyncssh.SSHAcceptor | None = None
        self._placeholder: socket.socket | None = None

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        if self.dev.faults.unreachable:
            # Bound but never listening: the port is ours and every connect is refused.
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((host, port))
            self._placeholder = sock
            self.port = sock.getsockname()[1]
            return self.port
        key = self.alt_host_key if (self.dev.faults.hostkey_changed and self.alt_host_key) else self.host_key
        self._server = await asyncssh.create_server(
            lambda: _Server(self), host, port, server_host_keys=[key], line_editor=False,
            encoding="utf-8", errors="replace", keepalive_interval=0, login_timeout=60,
            server_version="OpenSSH_8.9 fabriccfg-mock",
        )
        sockets = self._server.sockets
        self.port = int(sockets[0].getsockname()[1])
        return self.port

    def close(self) -> None:
        if self._placeholder is not None:
            self._placeholder.close()
            self._placeholder = None
        for conn in list(self.connections):
            conn.abort()
        self.connections.clear()
        if self._server is not None:
            self._server.close()
            self._server = None

    async def wait_closed(self) -> None:
        if self._server is not None:
            await self._server.wait_closed()


def public_key_line(key: asyncssh.SSHKey) -> str:
    """'ssh-ed25519 AAAA...' (no comment) for a known_hosts line."""
    text = key.export_public_key("openssh").decode().strip()
    parts = text.split()
    return " ".join(parts[:2])


def call_later(delay: float, fn: Callable[[], None]) -> asyncio.TimerHandle:
    """Schedule ``fn`` on the running loop (profiles use it for commit-confirm timers)."""
    return asyncio.get_running_loop().call_later(delay, fn)
