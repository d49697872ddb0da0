"""Open netmiko sessions safely and quickly.

- Strict host-key checking by default (netmiko's own default accepts any key): a known_hosts
  file per fabric; ``insecure_host_keys=True`` is for labs and says so loudly.
- MLNX-OS session preparation by prompt pattern: netmiko's stock driver waits for 2 s of silence
  on every connect (netmiko_pysnmp.md §2); we wait for the prompt instead.
- Session logs pass through :func:`fabriccfg.secrets.redact` before they touch the disk.
- A :class:`SessionHandle` lets a watchdog thread end a session that is past its deadline: reads
  on a killed session raise at once instead of polling until netmiko's read timeout, and a session
  the device closed fails fast too (stock netmiko keeps polling a closed channel until timeout).
"""

from __future__ import annotations

import io
import logging
import os
import re
import select
import threading
import time
from pathlib import Path
from typing import Any

from fabriccfg import catalog, secrets
from fabriccfg.session import Session
from fabriccfg.targets import Endpoint
from fabriccfg.text import first_line_break

log = logging.getLogger(__name__)
# paramiko's transport thread logs "Socket exception: Broken pipe" at ERROR when a session we are closing
# (or that the device dropped) goes away; the push reports such failures itself, with the device name.
logging.getLogger("paramiko.transport").setLevel(logging.CRITICAL)


class ConnectError(Exception):
    """A device could not be reached or refused us (message is safe to print)."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind  # "auth" | "unreachable" | "hostkey" | "timeout" | "no-cli" | "killed"
        super().__init__(message)


class SessionKilled(EOFError):
    """The session was ended by its watchdog (deadline passed or the run was interrupted)."""


class SessionClosed(EOFError):
    """The device closed the session under us."""


class SessionHandle:
    """Shared between a device's worker and the runner's watchdog; ``kill`` is thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conns: list[Any] = []
        self.killed: str | None = None  # the reason, once killed

    def attach(self, conn: Any) -> None:
        with self._lock:
            self._conns.append(conn)
            killed = self.killed
        if killed:
            _close_transport(conn)

    def kill(self, reason: str) -> None:
        """End every session of this handle now; blocked reads and writes raise."""
        with self._lock:
            self.killed = reason
            conns = list(self._conns)
        for conn in conns:
            _close_transport(conn)

    def rearm(self) -> None:
        """Allow new sessions again (a rollback after a timeout gets its own deadline)."""
        with self._lock:
            self.killed = None
            self._conns = [c for c in self._conns if getattr(c, "remote_conn", None) is not None]


def _close_transport(conn: Any) -> None:
    for attr in ("remote_conn", "remote_conn_pre"):
        obj = getattr(conn, attr, None)
        if obj is not None:
            try:
                obj.close()
            except Exception:  # closing a half-dead transport may raise anything
                log.debug("closing %s failed", attr, exc_info=True)


def _session_log(path: Path) -> Any:
    """A netmiko ``SessionLog`` that keeps the transcript in memory and appends it, redacted, on close."""
    from netmiko.session_log import SessionLog

    class RedactingSessionLog(SessionLog):
        def __init__(self) -> None:
            super().__init__(file_name=None)
            self.session_log = io.StringIO()
            self._path = path
            self._written = False

        def open(self) -> None:
            return None

        def close(self) -> None:
            if self._written:
                return
            self._written = True
            self._flush_buffer(final=True)
            buf = self.session_log
            text = buf.getvalue() if isinstance(buf, io.StringIO) else ""
            self._path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)  # owner only
            with os.fdopen(fd, "a", encoding="utf-8") as fh:
                fh.write(secrets.redact(text))
                if text and not text.endswith("\n"):
                    fh.write("\n")

    return RedactingSessionLog()


_CLASS_CACHE: dict[str, Any] = {}
_CLASS_LOCK = threading.Lock()


_IMPORT_LOCK = threading.Lock()
_NETMIKO_LOADED = threading.Event()


def load_netmiko() -> None:
    """Import netmiko once, in one thread: it is imported on first use (``fabriccfg --help`` does not
    pay for it), and 32 collector threads importing it at once can meet its import cycles half-done
    ("cannot import name ... from partially initialized module")."""
    if _NETMIKO_LOADED.is_set():  # not sys.modules: a module is there while another thread still imports it
        return
    with _IMPORT_LOCK:
        import netmiko.ssh_dispatcher  # noqa: F401  (the whole package, drivers included)

        _NETMIKO_LOADED.set()


def _fast_class(device_type: str, prompt: str | None = None) -> Any:
    """The netmiko class for ``device_type``: reads that fail fast; prepared by ``prompt`` (the platform's
    ``PlatformInfo.cli_prompt``) when netmiko's own prompt wait would stall."""
    key = f"{device_type}|{prompt or ''}"
    load_netmiko()
    with _CLASS_LOCK:
        cls = _CLASS_CACHE.get(key)
        if cls is not None:
            return cls
        from netmiko.ssh_dispatcher import CLASS_MAPPER

        base: Any = CLASS_MAPPER[device_type]
        # the fast paths below hold for these implementations only (a vendor override may do more); taken
        # from the classes at hand: importing netmiko submodules here raced the first import in other
        # threads ("partially initialized module")
        root: Any = base.__mro__[-2]  # BaseConnection (its base is object)
        nxos: Any = CLASS_MAPPER["cisco_nxos"]
        plain_lf = base.normalize_linefeeds in (root.normalize_linefeeds, nxos.normalize_linefeeds)
        plain_ansi = base.strip_ansi_escape_codes is root.strip_ansi_escape_codes

        class Guarded(base):  # type: ignore[misc]
            _fc_handle: SessionHandle | None = None

            def _build_ssh_client(self) -> Any:
                # stock parses the whole known_hosts file per connection: O(fabric) CPU per device
                client = self._get_ssh_client_instance()
                if self.system_host_keys:
                    client.load_system_host_keys()
                if self.alt_host_keys and self.alt_key_file:
                    name = self.host if int(self.port) == 22 else f"[{self.host}]:{self.port}"
                    keys = client.get_host_keys()
                    for keytype, key in known_host_keys(self.alt_key_file, name).items():
                        keys.add(name, keytype, key)
                client.set_missing_host_key_policy(self.key_policy)
                return client

            # --- netmiko internals without fixed sleeps (connect, enable, config mode use them) ---
            def _try_session_preparation(self, force_data: bool = True) -> None:
                try:
                    if force_data:
                        self.write_channel(self.RETURN)  # stock sleeps 0.1 s here; the prep waits for data
                    self.session_preparation()
                except Exception:
                    self.disconnect()
                    raise

            def clear_buffer(self, backoff: bool = True, backoff_max: float = 3.0,
                             delay_factor: float | None = None) -> str:
                # stock sleeps 0.1 s before each read; drain what arrives within a few ms instead
                out = ""
                for _ in range(10):
                    _wait_readable(self, 0.005)
                    data = self.strip_ansi_escape_codes(self.read_channel())
                    out += data
                    if not data:
                        break
                return out

            def read_until_pattern(self, pattern: str = "", read_timeout: float = 10.0, re_flags: int = 0,
                                   max_loops: int | None = None) -> str:
                return _read_until_pattern(self, pattern, read_timeout, re_flags)

            def fc_command(self, command: str, *, expect: str | None = None, timeout: float = 60.0) -> str:
                """Send one line and return its output (echo and prompt stripped), event-driven.

                netmiko's ``send_command`` polls with fixed sleeps (10 ms for the echo, 25 ms per read
                loop) and by default first spends a round trip on ``find_prompt``: about 35 ms per
                command on a loopback device. Here the read wakes up as soon as data arrives.
                """
                return fast_command(self, command, expect=expect, timeout=timeout)

            def fc_lines(self, lines: list[str], *, window: int = 16, timeout: float = 60.0) -> list[str]:
                """Config lines with type-ahead (see :func:`fast_lines`); one output per line."""
                return fast_lines(self, lines, window=window, timeout=timeout)

            def _open(self) -> None:
                handle = self._fc_handle
                if handle is not None:
                    if handle.killed:
                        raise SessionKilled(handle.killed)
                    handle.attach(self)
                super()._open()

            # netmiko runs both of these on every chunk read (a regex pass each; ~30 for the ANSI codes):
            # 8 % of a collector's CPU on a ~500 kB reply. Same results, skipping what cannot match.
            def normalize_linefeeds(self, a_string: str) -> str:
                if not plain_lf:
                    lf: str = super().normalize_linefeeds(a_string)
                    return lf
                if "\r" not in a_string:  # every pattern (base and NX-OS) rewrites a carriage return
                    return a_string
                plain = a_string.replace("\r\n", "\n")
                if "\r" not in plain:  # only CRLF line ends: what the patterns give (tested)
                    return plain
                out: str = super().normalize_linefeeds(a_string)
                return out

            def strip_ansi_escape_codes(self, string_buffer: str) -> str:
                if plain_ansi and "\x1b" not in string_buffer:  # every code netmiko strips starts with ESC
                    return string_buffer
                out: str = super().strip_ansi_escape_codes(string_buffer)
                return out

            def read_channel(self) -> str:
                handle = self._fc_handle
                if handle is not None and handle.killed:
                    raise SessionKilled(handle.killed)
                out: str = super().read_channel()
                if not out:
                    chan = self.remote_conn
                    if chan is not None and (chan.closed or chan.eof_received) and not chan.recv_ready():
                        raise SessionClosed("the device closed the session")
                return out

        if prompt is not None:
            either = prompt

            class PromptPrepared(Guarded):
                def session_preparation(self) -> None:
                    self._test_channel_read(pattern=either)
                    self.set_base_prompt()
                    self.disable_paging()

                def check_config_mode(self, check_string: str = "(config", pattern: str = either,
                                      force_regex: bool = False) -> bool:
                    # stock waits for '#': from the '>' exec prompt (e.g. in disconnect) that is a 10 s stall
                    ok: bool = super().check_config_mode(check_string=check_string, pattern=pattern)
                    return ok

            cls = PromptPrepared
        else:
            cls = Guarded
        _CLASS_CACHE[key] = cls
        return cls


_HOST_KEYS: dict[str, tuple[tuple[int, int, int], Any, dict[str, dict[str, Any]]]] = {}
_HOST_KEYS_LOCK = threading.Lock()


def known_host_keys(path: str, name: str) -> dict[str, Any]:
    """``{keytype: PKey}`` for ``name`` (``host`` or ``[host]:port``) from a known_hosts file, parsed once
    per file version (path, size, mtime, inode) and indexed by host name; hashed entries (``|1|``) are
    matched the way paramiko does. Missing file: no keys (strict checking then refuses the host)."""
    import paramiko

    try:
        st = Path(path).stat()
    except OSError:
        return {}
    version = (st.st_size, st.st_mtime_ns, st.st_ino)
    with _HOST_KEYS_LOCK:
        cached = _HOST_KEYS.get(path)
        if cached is None or cached[0] != version:
            hk = paramiko.HostKeys()
            hk.load(path)
            index: dict[str, dict[str, Any]] = {}
            for entry in getattr(hk, "_entries", []):
                for host in entry.hostnames:
                    if not host.startswith("|1|") and entry.key is not None:
                        index.setdefault(host, {})[entry.key.get_name()] = entry.key
            cached = _HOST_KEYS[path] = (version, hk, index)
    _, hk, index = cached
    found = index.get(name)
    if found is not None:
        return dict(found)
    hashed = hk.lookup(name)  # hashed names: paramiko's own matching
    return dict(hashed) if hashed else {}


def _wait_readable(conn: Any, timeout: float) -> None:
    chan = getattr(conn, "remote_conn", None)
    if chan is None or timeout <= 0:
        return
    try:
        wait_fd(chan, timeout)
    except (OSError, ValueError, TypeError):
        time.sleep(min(timeout, 0.01))


def wait_fd(chan: Any, timeout: float) -> None:
    """Wait until ``chan`` (anything with ``fileno()``) is readable or ``timeout`` s pass. ``poll``, not
    ``select``: with hundreds of sessions open (watch keeps them) descriptors pass 1024, which
    ``select()`` cannot watch."""
    poller = select.poll()
    poller.register(chan.fileno(), select.POLLIN | select.POLLPRI)
    poller.poll(max(0, int(timeout * 1000 + 0.999)))


def _read_until_pattern(conn: Any, pattern: str, read_timeout: float, re_flags: int) -> str:
    """netmiko's ``read_until_pattern`` (same contract: output up to and including the match, the rest
    kept in ``_read_buffer``) waking on data instead of sleeping 10 ms per loop."""
    from netmiko.exceptions import ReadTimeout

    if conn.read_timeout_override:
        read_timeout = conn.read_timeout_override
    rx = re.compile(pattern, re_flags)
    output = ""
    deadline = time.monotonic() + read_timeout
    while True:
        data: str = conn.read_channel()
        output += data
        m = rx.search(output)
        if m:
            conn._read_buffer += output[m.end():]
            return output[: m.end()]
        left = deadline - time.monotonic()
        if read_timeout and left <= 0:
            raise ReadTimeout(f"Pattern not detected: {pattern!r} in output.")
        _wait_readable(conn, min(left, 0.5) if read_timeout else 0.5)


def _prompt_rx(conn: Any) -> re.Pattern[str]:
    base = re.escape(str(conn.base_prompt).strip())
    return re.compile(rf"(?:^|\n)[^\n]*{base}[^\n]*[#>$]\s*$")


def ends_at_prompt(text: str, base: str) -> bool:
    """Whether ``_prompt_rx`` (for base prompt ``base``) matches ``text``: its last line holds ``base`` and
    then ends in ``#``, ``>`` or ``$`` (whitespace after it allowed).

    Only the last line is looked at. The regex tried every line of each new chunk (tens of kB per read of a
    bulk reply: 10 % of a collector's CPU)."""
    end = text.rstrip()
    if not end or end[-1] not in "#>$":
        return False
    return base in end[end.rfind("\n") + 1:-1]


def one_line(command: str) -> None:
    """Refuse to type a command holding a line break (``fabriccfg.text``): the device would run two."""
    bad = first_line_break(command)
    if bad is not None:
        raise ValueError(f"refusing to send a command holding {bad.describe()}: {command[:80]!r}")


PROMPT_WINDOW = 1024
"""How far before a new chunk ``fast_command`` looks for the prompt line's start (a prompt is far shorter)."""


def fast_command(conn: Any, command: str, *, expect: str | None = None, timeout: float = 60.0) -> str:
    """See ``fc_command``: write ``command``, wait for its echo, then for the prompt (or ``expect``)."""
    from netmiko.exceptions import ReadTimeout

    chan = conn.remote_conn
    one_line(command)
    conn.write_channel(command + conn.RETURN)
    done = re.compile(expect, re.M) if expect else None
    base = str(conn.base_prompt).strip()
    echo = command.strip()
    buf = ""
    body_at = -1
    deadline = time.monotonic() + timeout
    while True:
        data: str = conn.read_channel()
        if data:
            buf += data
            if body_at < 0:
                at = buf.find(echo) if echo else 0
                if at >= 0:
                    nl = buf.find("\n", at + len(echo))
                    body_at = nl + 1 if nl >= 0 else -1
            if body_at >= 0:
                if done is not None:
                    if done.search(buf):
                        break
                # the prompt is the reply's last line: look at the last PROMPT_WINDOW characters only (a
                # 530 KB bulk reply arrives in hundreds of chunks; rescanning it is quadratic)
                elif ends_at_prompt(buf[max(body_at, len(buf) - PROMPT_WINDOW):], base):
                    break
            continue
        left = deadline - time.monotonic()
        if left <= 0:
            raise ReadTimeout(f"no prompt within {timeout:g} s after {command[:60]!r}")
        wait_fd(chan, min(left, 0.5))
    body: str = buf[body_at:] if body_at >= 0 else buf
    if not expect:
        # the prompt ends the body: search its tail only (the whole ~500 kB body was 5 % of a round)
        m = _prompt_rx(conn).search(body, max(0, len(body) - PROMPT_WINDOW))
        if m:
            body = body[: m.start()]
    return body.rstrip("\n")


def fast_lines(conn: Any, lines: list[str], *, window: int = 16, timeout: float = 60.0) -> list[str]:
    """Send config lines ``window`` at a time (type-ahead) and return each line's output.

    The device still handles one line after another; only the waiting is batched. Each line's output is
    the text between its echo and the prompt that precedes the next echo. Callers run inside a
    transaction, so lines after a rejected one (same window) are undone with everything else.
    """
    from netmiko.exceptions import ReadTimeout

    for line in lines:
        one_line(line)
    outputs: list[str] = []
    prompt = _prompt_rx(conn)
    for start in range(0, len(lines), max(1, window)):
        batch = lines[start:start + max(1, window)]
        conn.write_channel("".join(line + conn.RETURN for line in batch))
        echoes = [line.strip() for line in batch]
        buf = ""
        deadline = time.monotonic() + timeout
        found: list[int] = []
        pos = 0
        while True:
            data: str = conn.read_channel()
            if data:
                buf += data
                while len(found) < len(echoes):
                    at = buf.find(echoes[len(found)], pos)
                    if at < 0:
                        break
                    found.append(at)
                    pos = at + len(echoes[len(found) - 1])
                if len(found) == len(echoes):
                    nl = buf.find("\n", pos)
                    if nl >= 0 and prompt.search(buf[nl + 1:]):
                        break
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                raise ReadTimeout(f"no prompt within {timeout:g} s after {batch[-1][:60]!r}")
            _wait_readable(conn, min(left, 0.5))
        for i, at in enumerate(found):
            nl = buf.find("\n", at)
            end = found[i + 1] if i + 1 < len(found) else len(buf)
            seg = buf[nl + 1:end] if 0 <= nl < end else ""
            outputs.append(seg.rsplit("\n", 1)[0] if "\n" in seg else "")
    return outputs


def _cli_prompt(platform: str) -> str | None:
    try:
        return catalog.info(platform).cli_prompt
    except KeyError:  # an endpoints file naming a platform this install does not know
        return None


def connect(ep: Endpoint, *, insecure_host_keys: bool = False, timeout: float = 30.0,
            session_log: Path | None = None, handle: SessionHandle | None = None) -> Session:
    """Connect to ``ep`` and return a prepared netmiko connection, or raise :class:`ConnectError`.

    ``timeout`` bounds each connect phase (TCP, banner, auth); the whole-device deadline is the
    runner's job (it kills the session through ``handle``).
    """
    load_netmiko()
    from netmiko.exceptions import NetmikoAuthenticationException, NetmikoTimeoutException, ReadTimeout

    if ep.device_type is None or ep.ssh_port is None:
        raise ConnectError("no-cli", f"{ep.name}: platform {ep.platform} has no CLI to connect to")
    if insecure_host_keys:
        log.warning("%s: host-key checking DISABLED (--insecure-host-keys); use only in a lab", ep.name)
    known_hosts = ep.known_hosts
    if not insecure_host_keys and not (known_hosts and Path(known_hosts).expanduser().is_file()):
        raise ConnectError("hostkey", f"{ep.name}: no known_hosts file ({known_hosts or 'not set'}); "
                                      "strict host-key checking needs one (or --insecure-host-keys in a lab)")
    if ep.password:
        secrets.remember(ep.password)
    kwargs: dict[str, Any] = dict(
        device_type=ep.device_type, host=ep.host, port=ep.ssh_port, username=ep.username,
        password=ep.password or "", secret=ep.password or "",
        ssh_strict=not insecure_host_keys, system_host_keys=False,
        alt_host_keys=not insecure_host_keys,
        alt_key_file=str(Path(known_hosts).expanduser()) if known_hosts else "",
        conn_timeout=min(timeout, 15.0), auth_timeout=min(timeout, 15.0), banner_timeout=min(timeout, 15.0),
        read_timeout_override=None, fast_cli=True, allow_agent=False,
    )
    if ep.key_file:
        kwargs.update(use_keys=True, key_file=str(Path(ep.key_file).expanduser()))
    if session_log is not None:
        kwargs["session_log"] = _session_log(session_log)
    cls = _fast_class(ep.device_type, _cli_prompt(ep.platform))
    if handle is not None:
        cls = type(cls.__name__, (cls,), {"_fc_handle": handle})
    try:
        session: Session = cls(**kwargs)
        return session
    except SessionKilled as exc:
        raise ConnectError("killed", f"{ep.name}: {exc}") from None
    except NetmikoAuthenticationException:
        raise ConnectError("auth", f"{ep.name}: authentication failed for user {ep.username!r}") from None
    except NetmikoTimeoutException as exc:
        if handle is not None and handle.killed:
            raise ConnectError("killed", f"{ep.name}: {handle.killed}") from None
        text = str(exc)
        if "known_hosts" in text or "does not match" in text or "host key" in text.lower():
            first = secrets.redact(text.strip().splitlines()[0]) if text.strip() else "host key rejected"
            raise ConnectError("hostkey", f"{ep.name}: host key rejected: {first}") from None
        raise ConnectError("unreachable", f"{ep.name}: cannot reach {ep.host}:{ep.ssh_port}") from None
    except ReadTimeout:
        raise ConnectError("timeout", f"{ep.name}: no prompt within the timeout") from None
    except (OSError, EOFError, ValueError) as exc:
        if handle is not None and handle.killed:
            raise ConnectError("killed", f"{ep.name}: {handle.killed}") from None
        raise ConnectError("unreachable", f"{ep.name}: connection failed: {exc.__class__.__name__}") from None
    except Exception as exc:
        if handle is not None and handle.killed:
            raise ConnectError("killed", f"{ep.name}: {handle.killed}") from None
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        raise ConnectError("unreachable", f"{ep.name}: connection failed: {secrets.redact(first)}") from None
