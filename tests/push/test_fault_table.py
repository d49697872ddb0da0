"""The fault table of ``docs/push.md`` (fault -> device state -> exit code -> what ``--recover`` does),
produced by running each fault against the mock fabric. The test fails when the page differs from this run;
``FABRICCFG_UPDATE_DOCS=1`` rewrites the table.

Kills and SIGTERM use a real ``fabriccfg push`` subprocess stopped at a journal record (``killing.py``);
the device is made slow (mock fault ``slow``) so the signal lands while its change is in flight.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from killing import killed_push, reset

import fabriccfg
from fabriccfg.inventory.load import load_fabric
from fabriccfg.mock.fabric import MockFabric
from fabriccfg.push import api
from fabriccfg.push.recover import recover
from fabriccfg.push.report import RunReport, report_from_journal
from fabriccfg.push.runner import RunnerOptions

INVENTORIES = Path(fabriccfg.__file__).parent / "data" / "inventories"
DOC = Path(__file__).resolve().parents[2] / "docs" / "push.md"
BEGIN = "<!-- fault-table: made by tests/push/test_fault_table.py (FABRICCFG_UPDATE_DOCS=1 rewrites it) -->"
END = "<!-- /fault-table -->"
SLOW = 0.1
"""Seconds the slow device waits after each line: a journal-timed signal lands mid-change."""
MID = 6
"""Lines the device has received after the ``applying`` record when the signal goes: mid-change."""


@dataclass
class Row:
    fault: str
    platform: str
    state: str
    push_exit: str
    recover: str
    recover_exit: int


@pytest.fixture(scope="module")
def fabrics(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, MockFabric]]:
    roce = MockFabric(load_fabric(INVENTORIES / "roce-lab.yaml"), workdir=tmp_path_factory.mktemp("roce"),
                      snmp=False, processes=1,
                      faults=["spine2:unreachable", "spine1:hostkey-changed"])
    ib = MockFabric(load_fabric(INVENTORIES / "ib-lab-mqm8700.yaml"), workdir=tmp_path_factory.mktemp("ib"),
                    snmp=False, processes=1)
    roce.start()
    try:
        ib.start()
        try:
            yield {"roce": roce, "ib": ib}
        finally:
            ib.stop()
    finally:
        roce.stop()


def _state(report: RunReport, name: str) -> str:
    d = next(x for x in report.devices if x.name == name)
    return d.state + (f" (in flight: {d.in_flight})" if d.in_flight else "")


def _recover(run_dir: Path, mock: MockFabric, name: str) -> tuple[str, int]:
    out = recover(run_dir, mock.endpoints)
    if not out.devices:
        return "nothing in flight: changes nothing", out.exit_code
    d = out.devices[name]
    how = re.sub(r"^recovered: ", "", d.reason)
    return f"{d.state}: {how}", out.exit_code


def in_process(mock: MockFabric, name: str, tmp: Path, setup: Callable[[Any], None] | None = None) -> Row:
    dev = mock.device(name)
    if setup is not None:
        mock.call(lambda: setup(dev))
    try:
        jobs = api.plan_jobs(mock.fabric, mock.endpoints, [name])
        rep = api.push(mock.fabric, jobs, run_base=tmp, runner=RunnerOptions(workers=1, timeout=30),
                       confirm_timeout=120)
    finally:
        mock.call(lambda: _clear(dev))
    how, code = _recover(Path(rep.run_dir), mock, name)
    return Row("", dev.platform, _state(rep, name), str(rep.exit_code), how, code)


def _clear(dev: Any) -> None:
    dev.faults.auth_fail = False
    dev.faults.slow = 0.0
    dev.faults.reject = None
    dev.faults.disconnect_after = None


def _drop_after(n: int) -> Callable[[Any], None]:
    def setup(dev: Any) -> None:
        dev.faults.disconnect_after = n
        dev.disconnect_fired = False
    return setup


def signalled(mock: MockFabric, name: str, tmp: Path, after: str, sig: int, inventory: str,
              slow_from: str | None = "start", lines: int = 0, line: str | None = None) -> Row:
    """Push in a subprocess; the device is slow from the start (``slow_from="start"``) or from its
    ``slow_from`` record; ``sig`` once the device has received ``lines`` more lines after the ``after``
    record (counted in the mock's command log), or, with ``line``, once a line matching that regex."""
    dev = mock.device(name)
    mark: list[int] = []
    if slow_from == "start":
        # Slow before the push starts: a loaded CI box may not poll the journal before a fast push ends.
        mock.call(lambda: setattr(dev.faults, "slow", SLOW))

    def seen(states: list[str]) -> None:
        if slow_from is not None and slow_from in states and not dev.faults.slow:
            mock.call(lambda: setattr(dev.faults, "slow", SLOW))

    def ready(states: list[str]) -> bool:
        if after not in states:
            return False
        if line is not None:
            return bool(mock.call(lambda: any(re.fullmatch(line, x) for x in list(dev.log)[-20:])))
        if not mark:
            mark.append(mock.call(lambda: len(dev.log)))
        return bool(mock.call(lambda: len(dev.log)) >= mark[0] + lines)

    try:
        run_dir, _, _, code = killed_push(INVENTORIES / inventory, mock.endpoints_file, name, tmp, after,
                                          0.0, sig=sig, seen=seen, ready=ready)
    finally:
        mock.call(lambda: _clear(dev))
    had_report = (run_dir / "report.json").is_file()
    state = _state(report_from_journal(run_dir), name)
    state += "" if had_report else ", no report.json: from the journal"
    exit_text = "killed (SIGKILL)" if code == -signal.SIGKILL else str(code)
    how, rcode = _recover(run_dir, mock, name)
    return Row("", dev.platform, state, exit_text, how, rcode)


CONFIRM = r"configure session \S+ commit"
"""EOS's confirm of a session under a commit timer; the test's mock answers it slowly (see below)."""


def slow_confirm(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mock EOS answers its confirm 0.2 s late, so a kill sent when the device has it lands before the
    push can journal ``committed`` (the device has already committed by then)."""
    from fabriccfg.platforms.eos.mock import EosSession

    orig = EosSession.execute

    def execute(self: EosSession, line: str) -> str:
        if re.fullmatch(CONFIRM, " ".join(line.split())):
            self.dev.faults.slow = 2 * SLOW
        return orig(self, line)

    monkeypatch.setattr(EosSession, "execute", execute)


def build(fabrics: dict[str, MockFabric], tmp: Path) -> list[Row]:
    roce, ib = fabrics["roce"], fabrics["ib"]
    rows: list[tuple[str, Callable[[], Row]]] = [
        ("none", lambda: in_process(roce, "leaf-r3", tmp / "a")),
        ("device unreachable (connection refused)", lambda: in_process(roce, "spine2", tmp / "b")),
        ("SSH authentication fails", lambda: in_process(
            roce, "leaf-r0", tmp / "c", lambda d: setattr(d.faults, "auth_fail", True))),
        ("SSH host key changed", lambda: in_process(roce, "spine1", tmp / "d")),
        ("the device rejects a config line", lambda: in_process(
            roce, "leaf-r3", tmp / "e", lambda d: setattr(d.faults, "reject", re.compile("service-policy")))),
        ("SSH session drops after 3 config lines", lambda: in_process(
            ib, "ib8700-leaf1", tmp / "f", _drop_after(3))),
        ("SIGKILL while config lines are sent", lambda: signalled(
            roce, "leaf-r3", tmp / "g", "applying", signal.SIGKILL, "roce-lab.yaml", lines=MID)),
        ("SIGKILL while config lines are sent", lambda: signalled(
            ib, "ib8700-leaf1", tmp / "h", "applying", signal.SIGKILL, "ib-lab-mqm8700.yaml", lines=MID)),
        ("SIGKILL while config lines are sent", lambda: signalled(
            roce, "leaf-r2", tmp / "i", "applying", signal.SIGKILL, "roce-lab.yaml", lines=MID)),
        ("SIGKILL while config lines are sent", lambda: signalled(
            roce, "leaf-r1", tmp / "l", "applying", signal.SIGKILL, "roce-lab.yaml", lines=MID)),
        ("SIGKILL while config lines are sent", lambda: signalled(
            roce, "leaf-r0", tmp / "m", "applying", signal.SIGKILL, "roce-lab.yaml", lines=MID)),
        ("SIGKILL while the confirm runs", lambda: signalled(
            roce, "leaf-r2", tmp / "j", "confirming", signal.SIGKILL, "roce-lab.yaml", slow_from=None,
            line=CONFIRM)),
        ("SIGTERM while config lines are sent", lambda: signalled(
            roce, "leaf-r2", tmp / "k", "applying", signal.SIGTERM, "roce-lab.yaml", lines=MID)),
    ]
    out = []
    for fault, make in rows:
        for mock in (roce, ib):
            for name in mock.names:
                reset(mock, name, mock.device(name).platform)
        row = make()
        row.fault = fault
        out.append(row)
    return out


def render(rows: list[Row]) -> str:
    lines = [BEGIN, "| fault | platform | device state after the push (report.json) | push exit | "
                    "`push --recover RUN_DIR` | recover exit |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {r.fault} | {r.platform} | {r.state} | {r.push_exit} | {r.recover} | {r.recover_exit} |"
              for r in rows]
    return "\n".join([*lines, END])


def test_fault_table_in_docs_is_what_a_run_produces(fabrics: dict[str, MockFabric], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    slow_confirm(monkeypatch)
    table = render(build(fabrics, tmp_path))
    page = DOC.read_text(encoding="utf-8")
    m = re.search(re.escape(BEGIN) + r".*?" + re.escape(END), page, re.S)
    if os.environ.get("FABRICCFG_UPDATE_DOCS") == "1":
        new = page[:m.start()] + table + page[m.end():] if m else page.rstrip("\n") + "\n\n" + table + "\n"
        DOC.write_text(new, encoding="utf-8")
        return
    assert m is not None, f"{DOC} has no generated fault table; run with FABRICCFG_UPDATE_DOCS=1"
    assert m.group(0) == table, f"the fault table in {DOC} is not what this run produced:\n{table}"
