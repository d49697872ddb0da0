"""The exit-code contract table of docs/architecture.md ("Contracts"), run row by row.

Each row is a command line; the test runs it through the real CLI (typer's runner, the installed
command tree) against the RoCE lab inventory, saved configs, a dead endpoints file and the real mock
fabric, and checks the exit code and the text. Every command registered on the CLI must have a row, so
a new command cannot ship without stating its contract.
"""

from __future__ import annotations

import re
import shlex
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import fabriccfg
from fabriccfg.cli import app
from fabriccfg.inventory.load import load_fabric
from fabriccfg.render.engine import render_fabric
from fabriccfg.targets import Endpoint, write_endpoints

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
INV = Path(fabriccfg.__file__).parent / "data" / "inventories" / "roce-lab.yaml"


def contract_rows() -> list[tuple[str, str, str, int, str]]:
    """(command, case, command line, exit, says) for every row of the Contracts table."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("\n## Contracts\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not cells[2].startswith("`fabriccfg"):
            continue
        rows.append((cells[0], cells[1], cells[2].strip("`"), int(cells[3]), cells[4]))
    return rows


def registered_commands() -> set[str]:
    group = typer.main.get_group(app)
    return set(group.commands)


def test_every_command_has_a_contract_row() -> None:
    rows = contract_rows()
    assert len(rows) >= 30
    missing = registered_commands() - {r[0] for r in rows}
    assert not missing, f"commands without a row in docs/architecture.md Contracts: {sorted(missing)}"
    for command, _case, line, _code, _says in rows:
        assert shlex.split(line)[1] == command  # the row runs the command it documents


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed when the block ends: nothing listens there


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    from fabriccfg import catalog
    from fabriccfg.mock.fabric import MockFabric

    tmp = tmp_path_factory.mktemp("contracts")
    fabric = load_fabric(INV)
    same, drift, empty = tmp / "same", tmp / "drift", tmp / "empty"
    empty.mkdir()
    for dev in render_fabric(fabric):
        for name, text in dev.files.items():
            for base in (same, drift):
                (base / dev.name).mkdir(parents=True, exist_ok=True)
                (base / dev.name / name).write_text(text, encoding="utf-8")
    cfg = drift / "leaf-r0" / "config.txt"
    cfg.write_text("".join(ln for ln in cfg.read_text().splitlines(True) if "pfc" not in ln.lower()))
    bad = tmp / "bad.yaml"
    bad.write_text(INV.read_text().replace("link_speed: 400G", "link_speed: fast"), encoding="utf-8")
    port = _dead_port()
    dead = tmp / "dead.json"
    write_endpoints(dead, [Endpoint(name=n, platform=d.platform, host="127.0.0.1", ssh_port=port,
                                    device_type=catalog.info(d.platform).device_type, password="x")
                           for n, d in fabric.devices.items()])
    with MockFabric(fabric, workdir=tmp / "mock", snmp=False, processes=1) as mock:
        yield {"$INV": str(INV), "$BAD": str(bad), "$SAME": str(same), "$DRIFT": str(drift),
               "$EMPTY": str(empty), "$DEAD": str(dead), "$LIVE": str(mock.endpoints_file),
               "$OUT": str(tmp / "out")}


@pytest.mark.parametrize(("command", "case", "line", "code", "says"), contract_rows(),
                         ids=[f"{r[0]}: {r[1]}" for r in contract_rows()])
def test_contract_row(places: dict[str, str], command: str, case: str, line: str, code: int,
                      says: str) -> None:
    args = [re.sub(r"\$[A-Z]+", lambda m: places.get(m.group(0), m.group(0)), a)
            for a in shlex.split(line)[1:]]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == code, f"{line}\n-> {result.exit_code}\n{result.output}"
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert says in result.output, f"{line}: {says!r} not in\n{result.output}"
