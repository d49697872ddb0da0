"""``fabriccfg push --recover RUN_DIR``: bring every device a dead push left mid-change to a known state.

From the run's journal (``fabriccfg.push.journal``) it finds the devices whose change began and never
finished, connects to each, re-reads its running config and compares it with the backup and the
intent kept in the run folder:

- the change never began (no ``backed-up`` record): nothing to undo; leftovers are cleaned up;
- the change was verified (``verified``/``confirming``/``committed``) and the device still holds the
  intent: confirm it (the platform's safe path: e.g. EOS commit timer, NVUE ``--confirm``);
- otherwise: the platform's rollback to the restore point the journal names, then re-read and
  compare with the backup.

Each outcome is appended to the journal (``recovered``) and ``report.json`` is rewritten from it.
A second ``--recover`` finds nothing in flight and changes nothing.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabriccfg.connect import connect
from fabriccfg.push.device import Watch, describe, same_config
from fabriccfg.push.journal import DeviceTrail, Journal, JournalError, read_run
from fabriccfg.push.report import DeviceResult, RunReport, report_from_journal, safe_part
from fabriccfg.push.transaction import Differ, Transaction, TxContext, transaction_class
from fabriccfg.targets import Endpoint

VERIFIED = ("verified", "confirming", "committed")


class RecoverError(Exception):
    """The run cannot be recovered at all (message is safe to print): exit 2."""


@dataclass
class RecoverOutcome:
    report: RunReport
    devices: dict[str, DeviceResult] = field(default_factory=dict)
    """Devices recovered by this call (empty: nothing was in flight)."""

    @property
    def exit_code(self) -> int:
        """0 when every recovered device ended at its backup or its intent, 1 otherwise."""
        return 0 if all(d.state in ("applied", "rolled-back") for d in self.devices.values()) else 1


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # an exited process nobody reaped yet (a container's PID 1 may never reap orphans) is not alive
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _read(run_dir: Path, paths: list[str]) -> dict[str, str]:
    out = {}
    for p in paths:
        path = (run_dir / p).resolve()
        if run_dir.resolve() not in path.parents:
            raise RecoverError(f"journal names a file outside the run folder: {p!r}")
        out[path.name] = path.read_text(encoding="utf-8")
    return out


def recover(run_dir: str | Path, endpoints: Mapping[str, Endpoint], *, differ: Differ | None = None,
            insecure_host_keys: bool = False, timeout: float = 120.0, workers: int = 8,
            progress: Callable[[str], None] = lambda _t: None) -> RecoverOutcome:
    """Recover every in-flight device of ``run_dir``; raises :class:`RecoverError` for usage problems."""
    run_path = Path(run_dir)
    try:
        trail = read_run(run_path)
    except (JournalError, OSError) as exc:
        raise RecoverError(str(exc)) from None
    pid = trail.start.get("pid")
    if trail.end is None and isinstance(pid, int) and pid != os.getpid() and _alive(pid):
        raise RecoverError(f"the push that wrote {run_path} (pid {pid}) is still running; stop it first")
    live = [p for r in trail.records if r.get("event") == "workers" for p in r.get("pids") or []
            if isinstance(p, int) and p != os.getpid() and _alive(p)]
    if live:  # a parent killed mid-run: its workers roll their devices back before they exit
        raise RecoverError(f"push worker process(es) of {run_path} still running (pid "
                           f"{', '.join(map(str, live))}); wait for them to exit first")
    todo = trail.in_flight()
    if not todo:
        return RecoverOutcome(report_from_journal(run_path))
    if differ is None:
        from fabriccfg.render.diff import diff_device

        differ = diff_device
    journal = Journal(run_path)
    try:
        journal.write("recover-start", devices=[d.name for d in todo], pid=os.getpid())
        results: dict[str, DeviceResult] = {}

        def one(dev: DeviceTrail) -> DeviceResult:
            progress(f"{dev.name}: recovering (last journal state: {dev.last_state})")
            res = recover_device(run_path, dev, endpoints.get(dev.name), differ=differ,
                                 insecure_host_keys=insecure_host_keys, timeout=timeout)
            journal.write("recovered", device=dev.name, state=res.state, result=res.journal_dict())
            progress(f"{dev.name}: {res.state} ({res.reason})")
            return res

        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            for res in pool.map(one, todo):
                results[res.name] = res
        outcome_code = 0 if all(r.state in ("applied", "rolled-back") for r in results.values()) else 1
        journal.write("recover-end", devices={n: r.state for n, r in results.items()}, exit_code=outcome_code)
    finally:
        journal.close()
    report = report_from_journal(run_path)
    report.write()
    return RecoverOutcome(report, results)


def recover_device(run_dir: Path, dev: DeviceTrail, endpoint: Endpoint | None, *, differ: Differ,
                   insecure_host_keys: bool = False, timeout: float = 120.0) -> DeviceResult:
    """One device's recovery; never raises."""
    started = dev.started or {}
    platform = str(started.get("platform") or dev.platform)
    result = DeviceResult(dev.name, platform, backup=[str(p) for p in started.get("backup", [])])
    result.recovered = True
    t0 = time.monotonic()
    watch = Watch(None)
    try:
        backup = _read(run_dir, result.backup)
        intent = _read(run_dir, [str(p) for p in started.get("intent", [])])
        tx_cls = transaction_class(platform)
        if tx_cls is None:
            raise RecoverError(f"platform {platform} has no push transaction")
        if endpoint is None:
            result.state = "failed"
            result.reason = "no endpoint for this device (pass --endpoints, or an inventory with its address)"
            return result
        ctx = TxContext(name=dev.name, platform=platform, tag=str(started.get("tag", "")), differ=differ,
                        read_timeout=min(timeout, 120.0))
        tx = tx_cls(ctx)
        if dev.began:  # before that, the defaults make cleanup touch only what this run's tag names
            tx.resume(dev.restore, backup)
        log = run_dir / "logs" / f"{safe_part(dev.name)}.recover.log"
        conn = connect(endpoint, insecure_host_keys=insecure_host_keys, timeout=min(timeout, 30.0),
                       session_log=log, handle=watch.handle)
        try:
            _decide(tx, conn, dev, result, backup=backup, intent=intent, differ=differ)
        finally:
            try:
                tx.cleanup(conn)
            except Exception as exc:  # best effort, as in the push
                ctx.note(f"cleanup failed: {describe(exc, watch)}")
            result.notes.extend(ctx.notes)
            with contextlib.suppress(Exception):  # a dead session may raise anything on disconnect
                conn.disconnect()
        return result
    except Exception as exc:
        result.state, result.reason = "failed", f"recovery failed: {describe(exc, watch)}"
        return result
    finally:
        result.timings["recover"] = round(time.monotonic() - t0, 3)


def _decide(tx: Transaction, conn: Any, dev: DeviceTrail, result: DeviceResult, *, backup: dict[str, str],
            intent: dict[str, str], differ: Differ) -> None:
    platform = result.platform
    names = sorted(intent)
    running = tx.fetch(conn, names)
    at_backup = same_config(differ, platform, backup, running)
    at_intent = not differ(platform, intent, running).changed
    states = [str(s.get("state")) for s in dev.states]
    began = dev.began
    verified = any(s in VERIFIED for s in states) and "rolling-back" not in states
    last = dev.last_state
    if not began:
        if at_backup:
            result.state = "rolled-back"
            result.reason = f"recovered: the change had not begun ({last}); the running config is the backup"
            result.rollback_verified = True
        else:
            result.state = "failed"
            result.reason = (f"the change had not begun ({last}) but the running config differs from the "
                             "backup: changed by someone else? left as it is")
        return
    if verified and at_intent:
        try:
            tx.confirm(conn)
        except Exception as exc:  # e.g. the confirm had already gone through before the crash
            result.notes.append(f"confirm step: {describe(exc, Watch(None))[:120]} (the change holds: "
                                "the confirm had gone through before the run died)")
        how = "confirmed"
        if not differ(platform, intent, tx.fetch(conn, names)).changed:
            result.state = "applied"
            result.reason = f"recovered: the change had been verified ({last}) and the device holds it: {how}"
            return
    tx.rollback(conn)
    now = tx.fetch(conn, names)
    result.rollback_verified = same_config(differ, platform, backup, now)
    if result.rollback_verified:
        result.state = "rolled-back"
        result.reason = (f"recovered: rolled back to the backup (was {last}, running config was "
                         f"{'the backup' if at_backup else 'the intent' if at_intent else 'a mix'})")
    else:
        result.state = "failed"
        result.reason = f"recovery rolled back (was {last}) but the running config differs from the backup"
