"""Open netmiko sessions safely and quickly.

- Strict host-key checking by default (netmiko's own default accepts any key): a known_hosts
  file per fabric; ``insecure_host_keys=True`` is for labs and says so loudly.
- MLNX-OS session preparation by prompt pattern: netmiko's stock driver waits for 2 s of silence
  on every connect (netmiko_pysnmp.md §2); we wait for the prompt instead.
- Session logs pass through :func:`fabriccfg.secrets.redact` before they touch the disk.
"""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import Any

from fabriccfg import secrets
from fabriccfg.targets import Endpoint

log = logging.getLogger(__name__)


class ConnectError(Exception):
    """A device could not be reached or refused us (message is safe to print)."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind  # "auth" | "unreachable" | "hostkey" | "timeout" | "no-cli"
        super().__init__(message)


class RedactingLog(io.StringIO):
    """A netmiko ``session_log`` target that redacts secrets and writes to a file on close."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def close(self) -> None:
        if not self.closed:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(secrets.redact(self.getvalue()), encoding="utf-8")
        super().close()


def _fast_class(device_type: str) -> Any:
    """The netmiko class for ``device_type``, with MLNX-OS prepared by prompt pattern."""
    from netmiko.ssh_dispatcher import CLASS_MAPPER

    base = CLASS_MAPPER[device_type]
    if device_type.startswith("mellanox"):

        class FastMlnxos(base):  # type: ignore[misc,valid-type]
            def session_preparation(self) -> None:
                self._test_channel_read(pattern=r"[>#]")
                self.set_base_prompt()
                self.disable_paging()

        return FastMlnxos
    return base


def connect(ep: Endpoint, *, insecure_host_keys: bool = False, timeout: float = 30.0,
            session_log: Path | None = None) -> Any:
    """Connect to ``ep`` and return a prepared netmiko connection, or raise :class:`ConnectError`."""
    from netmiko.exceptions import NetmikoAuthenticationException, NetmikoTimeoutException, ReadTimeout

    if ep.device_type is None or ep.ssh_port is None:
        raise ConnectError("no-cli", f"{ep.name}: platform {ep.platform} has no CLI to connect to")
    if insecure_host_keys:
        log.warning("%s: host-key checking DISABLED (--insecure-host-keys); use only in a lab", ep.name)
    known_hosts = ep.known_hosts
    if not insecure_host_keys and not (known_hosts and Path(known_hosts).expanduser().is_file()):
        raise ConnectError("hostkey", f"{ep.name}: no known_hosts file ({known_hosts or 'not set'}); "
                                      "strict host-key checking needs one (or --insecure-host-keys in a lab)")
    kwargs: dict[str, Any] = dict(
        device_type=ep.device_type, host=ep.host, port=ep.ssh_port, username=ep.username,
        password=ep.password or "", secret=ep.password or "",
        ssh_strict=not insecure_host_keys, system_host_keys=False,
        alt_host_keys=not insecure_host_keys, alt_key_file=str(Path(known_hosts).expanduser()) if known_hosts else "",
        conn_timeout=min(timeout, 15.0), auth_timeout=min(timeout, 15.0), banner_timeout=min(timeout, 15.0),
        read_timeout_override=None, fast_cli=True, allow_agent=False,
    )
    if ep.key_file:
        kwargs.update(use_keys=True, key_file=str(Path(ep.key_file).expanduser()))
    if session_log is not None:
        kwargs["session_log"] = RedactingLog(session_log)
    cls = _fast_class(ep.device_type)
    try:
        return cls(**kwargs)
    except NetmikoAuthenticationException:
        raise ConnectError("auth", f"{ep.name}: authentication failed for user {ep.username!r}") from None
    except NetmikoTimeoutException as exc:
        text = str(exc)
        if "known_hosts" in text or "does not match" in text or "host key" in text.lower():
            raise ConnectError("hostkey", f"{ep.name}: host key rejected: {secrets.redact(text.splitlines()[0])}") from None
        raise ConnectError("unreachable", f"{ep.name}: cannot reach {ep.host}:{ep.ssh_port}") from None
    except ReadTimeout:
        raise ConnectError("timeout", f"{ep.name}: no prompt within the timeout") from None
    except (OSError, EOFError) as exc:
        raise ConnectError("unreachable", f"{ep.name}: connection failed: {exc.__class__.__name__}") from None
