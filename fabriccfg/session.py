"""The device CLI session that push, telemetry and probe use: a small typed protocol.

:func:`fabriccfg.connect.connect` returns a netmiko connection prepared for speed (event-driven reads, the
platform's prompt); that adapter is the only place that knows netmiko's internals, and
``tests/test_session_contract.py`` holds it to the pinned netmiko range. Everything else types its
connection as :class:`Session` and uses only these methods (netmiko's public API plus ``fc_command`` /
``fc_lines``, the adapter's fast paths).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class Session(Protocol):
    """What a stage may call on a device session (netmiko 4.x signatures, narrowed to what we pass)."""

    def send_command(self, command_string: str, *, expect_string: str | None = ..., read_timeout: float = ...,
                     strip_prompt: bool = ..., strip_command: bool = ..., cmd_verify: bool = ...) -> Any: ...

    def send_config_set(self, config_commands: Sequence[str] | None = ..., *, exit_config_mode: bool = ...,
                        read_timeout: float | None = ..., enter_config_mode: bool = ...,
                        cmd_verify: bool = ..., error_pattern: str = ...) -> str: ...

    def fc_command(self, command: str, *, expect: str | None = ..., timeout: float = ...) -> str: ...

    def fc_lines(self, lines: list[str], *, window: int = ..., timeout: float = ...) -> list[str]: ...

    def check_enable_mode(self, check_string: str = ...) -> bool: ...

    def enable(self, cmd: str = ..., pattern: str = ...) -> str: ...

    def check_config_mode(self, check_string: str = ..., pattern: str = ...) -> bool: ...

    def config_mode(self, config_command: str = ..., pattern: str = ...) -> str: ...

    def exit_config_mode(self, exit_config: str = ..., pattern: str = ...) -> str: ...

    def write_channel(self, out_data: str) -> None: ...

    def read_until_prompt(self, read_timeout: float = ...) -> str: ...

    def read_until_pattern(self, pattern: str = ..., read_timeout: float = ...) -> str: ...

    def disconnect(self) -> None: ...


SESSION_METHODS = tuple(sorted(name for name in vars(Session) if not name.startswith("_")))
"""The protocol's method names (the contract test checks each against netmiko)."""
