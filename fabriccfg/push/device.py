"""One device's push (or live fetch): connect, back up, diff, and run its platform's transaction.

The runner calls :func:`push_device` / :func:`fetch_device` on a worker thread and enforces the
device's deadline through :class:`Watch` (it kills the session; reads then raise at once).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabriccfg import secrets
from fabriccfg.connect import ConnectError, SessionClosed, SessionHandle, SessionKilled, connect
from fabriccfg.push.journal import Journal, digest
from fabriccfg.push.report import DeviceResult, safe_part, write_text
from fabriccfg.push.transaction import (
    Differ,
    DiffLike,
    Transaction,
    TxContext,
    TxError,
    VerifyError,
    transaction_class,
)
from fabriccfg.targets import Endpoint


@dataclass
class DeviceJob:
    """What to do on one device: its access, its rendered intent, or why it is not pushed."""

    name: str
    platform: str
    endpoint: Endpoint | None = None
    intended: dict[str, str] = field(default_factory=dict)
    skip_reason: str = ""
    """Set for devices that are never push targets (no transaction, or nothing rendered): reported
    ``skipped`` with this reason; ``target`` is then False."""
    skip_label: str = ""
    """``skip_reason`` in a few words: displays fold all such devices into one line (``not_targets_line``)."""
    fail_reason: str = ""
    """Set for targets that cannot be tried (no endpoint, render failed): reported ``failed``."""

    @property
    def target(self) -> bool:
        return not self.skip_reason


@dataclass
class CheckContext:
    """What a post-push check sees (``post_push_checks`` of :func:`fabriccfg.push.api.push`)."""

    name: str
    platform: str
    conn: Any
    intended: Mapping[str, str]
    endpoint: Endpoint


PostPushCheck = Callable[[CheckContext], list[str]]
"""Returns problems (empty = fine); any problem rolls the device back like a failed verification."""


@dataclass
class PushOptions:
    run_dir: Path
    run_tag: str
    differ: Differ
    dry_run: bool = False
    confirm_timeout: float = 300.0
    insecure_host_keys: bool = False
    read_timeout: float = 60.0
    rollback_grace: float = 60.0
    """Extra time a device that timed out mid-change gets to roll back."""
    post_push_checks: list[PostPushCheck] = field(default_factory=list)
    session_logs: bool = True
    journal: Journal | None = None
    """The run journal: a ``started`` record before a device's change, a ``state`` record after each step."""


class Watch:
    """A device's deadline and kill switch, shared by its worker and the runner's watchdog."""

    def __init__(self, timeout: float | None) -> None:
        self.handle = SessionHandle()
        self.timeout = timeout
        self.started = time.monotonic()
        self.deadline: float | None = self.started + timeout if timeout else None
        self.timed_out = False
        self.reason = ""

    def fire(self, reason: str) -> None:
        self.timed_out = True
        self.reason = reason
        self.handle.kill(reason)

    def grace(self, seconds: float) -> None:
        """Give a device whose session was killed mid-change time to roll back on a fresh session."""
        self.handle.rearm()
        if self.deadline is not None:
            self.deadline = time.monotonic() + seconds


Progress = Callable[[str, str], None]
"""``progress(device, step)``."""


def describe(exc: BaseException, watch: Watch) -> str:
    """A one-line, safe explanation of a failure."""
    from netmiko.exceptions import ReadTimeout

    if isinstance(exc, SessionKilled) or (watch.timed_out and isinstance(exc, (EOFError, OSError))):
        return watch.reason or "session ended by the watchdog"
    if isinstance(exc, ConnectError | TxError):
        text = str(exc)
    elif isinstance(exc, SessionClosed):
        text = "the device closed the session"
    elif isinstance(exc, ReadTimeout):
        text = "no answer from the device within the read timeout"
    elif isinstance(exc, EOFError | OSError):
        text = f"session lost ({exc.__class__.__name__}: {str(exc).strip()[:100]})"
    else:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        text = f"{exc.__class__.__name__}: {first[:200]}"
    return secrets.redact(text)


class _Timer:
    def __init__(self, result: DeviceResult) -> None:
        self.result = result

    @contextmanager
    def __call__(self, phase: str) -> Iterator[None]:
        t0 = time.monotonic()
        try:
            yield
        finally:
            self.result.timings[phase] = round(self.result.timings.get(phase, 0.0) + time.monotonic() - t0, 3)


def _transaction_class(platform: str) -> type[Transaction] | None:
    return transaction_class(platform)


def _alive(conn: Any) -> bool:
    chan = getattr(conn, "remote_conn", None)
    if chan is None:
        return False
    try:
        return bool(chan.transport is not None and chan.transport.is_active() and not chan.closed
                    and not chan.eof_received)
    except Exception:  # a half-torn-down paramiko channel
        return False


def _disconnect(conn: Any) -> None:
    if conn is None:
        return
    try:
        conn.disconnect()
    except Exception:  # disconnect of a dead session may raise anything; nothing to do about it
        return


class _Session:
    """The device's current netmiko session; reconnects for a rollback."""

    def __init__(self, job: DeviceJob, opts: PushOptions, watch: Watch, result: DeviceResult,
                 timeout: float) -> None:
        self.job = job
        self.opts = opts
        self.watch = watch
        self.timeout = timeout
        self.conn: Any = None
        self.log: Path | None = None
        if opts.session_logs:
            self.log = opts.run_dir / "logs" / f"{safe_part(job.name)}.log"
            result.session_log = str(self.log.relative_to(opts.run_dir))

    def open(self) -> Any:
        assert self.job.endpoint is not None
        self.conn = connect(self.job.endpoint, insecure_host_keys=self.opts.insecure_host_keys,
                            timeout=self.timeout, session_log=self.log, handle=self.watch.handle)
        return self.conn

    def fresh(self) -> Any:
        self.close()
        return self.open()

    def close(self) -> None:
        conn, self.conn = self.conn, None
        _disconnect(conn)


def _context(job: DeviceJob, opts: PushOptions, index: int, progress: Progress) -> TxContext:
    return TxContext(name=job.name, platform=job.platform, tag=f"fc-{opts.run_tag}-{index}",
                     differ=opts.differ, confirm_timeout=opts.confirm_timeout, read_timeout=opts.read_timeout,
                     step=lambda s: progress(job.name, s))


def _record_diff(result: DeviceResult, diff: DiffLike) -> None:
    result.changed = diff.changed
    result.diff = secrets.redact(diff.text)
    result.commands = [secrets.redact(c) for c in diff.commands]
    result.patch = list(diff.patch)
    result.files = sorted(diff.files)


def _write_backup(result: DeviceResult, opts: PushOptions, running: Mapping[str, str]) -> None:
    for fname, text in running.items():
        path = opts.run_dir / "backups" / safe_part(result.name) / safe_part(fname)
        write_text(path, text)
        result.backup.append(str(path.relative_to(opts.run_dir)))


def _write_intent(opts: PushOptions, name: str, intended: Mapping[str, str]) -> list[str]:
    """The intent as pushed, next to the backups (``--recover`` compares the device with both)."""
    out = []
    for fname, text in intended.items():
        path = opts.run_dir / "intent" / safe_part(name) / safe_part(fname)
        write_text(path, text)
        out.append(str(path.relative_to(opts.run_dir)))
    return out


class _Marks:
    """Journal records of one device's transaction (no-ops without a journal)."""

    def __init__(self, journal: Journal | None, name: str, tx: Transaction) -> None:
        self.journal = journal
        self.name = name
        self.tx = tx

    def started(self, job: DeviceJob, ctx: TxContext, result: DeviceResult, opts: PushOptions,
                running: Mapping[str, str]) -> None:
        if self.journal is None:
            return
        self.journal.write("started", device=self.name, platform=job.platform,
                           kind=getattr(self.tx, "kind", type(self.tx).__name__), tag=ctx.tag,
                           commit_confirm=bool(getattr(self.tx, "commit_confirm", False)),
                           backup=list(result.backup), intent=_write_intent(opts, job.name, job.intended),
                           backup_sha256=digest(running), intent_sha256=digest(job.intended))

    def __call__(self, *states: str, **fields: Any) -> None:
        if self.journal is not None:
            self.journal.state(self.name, *states, restore=self.tx.restore_point(), **fields)


def _startable(job: DeviceJob, result: DeviceResult, *, lacking: str) -> type[Transaction] | None:
    """The platform's transaction class, or None once ``result`` says why the device is skipped or failed.

    ``lacking``: what a platform without a transaction has none of (for the skip reason).
    """
    if job.skip_reason:
        result.state, result.reason, result.target = "skipped", job.skip_reason, False
        result.skip_label = job.skip_label or job.skip_reason
        return None
    if job.fail_reason or job.endpoint is None:
        result.state, result.reason = "failed", job.fail_reason or "no endpoint for this device"
        return None
    tx_cls = _transaction_class(job.platform)
    if tx_cls is None:
        result.state, result.target = "skipped", False
        result.reason = f"platform {job.platform} has no {lacking}"
        result.skip_label = f"no {lacking}"
    return tx_cls


def push_device(job: DeviceJob, opts: PushOptions, watch: Watch, progress: Progress,
                index: int = 0) -> DeviceResult:
    """Push ``job`` and return its result; never raises."""
    result = DeviceResult(job.name, job.platform)
    t0 = time.monotonic()
    try:
        tx_cls = _startable(job, result, lacking="push transaction")
        if tx_cls is None:
            return result
        _push(job, opts, watch, progress, index=index, tx_cls=tx_cls, result=result)
        return result
    except BaseException as exc:  # the worker must always report; KeyboardInterrupt only hits the main thread
        result.state, result.reason = "failed", f"internal error: {describe(exc, watch)}"
        return result
    finally:
        result.timings["total"] = round(time.monotonic() - t0, 3)
        result.notes = [secrets.redact(n) for n in result.notes]


def _push(job: DeviceJob, opts: PushOptions, watch: Watch, progress: Progress, *, index: int,
          tx_cls: type[Transaction], result: DeviceResult) -> None:
    ctx = _context(job, opts, index, progress)
    tx = tx_cls(ctx)
    timer = _Timer(result)
    session = _Session(job, opts, watch, result, timeout=min(watch.timeout or 30.0, 30.0))
    names = sorted(job.intended)
    started = touched = False
    running: dict[str, str] = {}
    mark = _Marks(opts.journal, job.name, tx)
    try:
        progress(job.name, "connecting")
        with timer("connect"):
            conn = session.open()
        progress(job.name, "fetching")
        with timer("fetch"):
            running = tx.fetch(conn, names)
        _write_backup(result, opts, running)
        diff = opts.differ(job.platform, dict(job.intended), running)
        _record_diff(result, diff)
        if not diff.changed:
            result.state = "unchanged"
            return
        if opts.dry_run:
            result.state, result.reason = "skipped", "dry-run: changes shown, not applied"
            return
        mark.started(job, ctx, result, opts, running)  # durable before anything on the device changes
        progress(job.name, "backing-up")
        touched = True
        with timer("backup"):
            tx.backup(conn, running)
        started = True  # from here on a failure means rollback
        mark("backed-up", "applying")
        progress(job.name, "applying")
        with timer("apply"):
            tx.apply(conn, diff, job.intended)
        mark("applied")
        progress(job.name, "verifying")
        with timer("verify"):
            problems = tx.verify(conn, job.intended)
            assert job.endpoint is not None
            for check in opts.post_push_checks:
                problems += check(CheckContext(job.name, job.platform, conn, job.intended, job.endpoint))
        if problems:
            raise VerifyError("verification failed: " + "; ".join(problems))
        mark("verified", "confirming")
        progress(job.name, "confirming")
        with timer("confirm"):
            tx.confirm(conn)
        mark("committed")
        result.state = "applied"
    except BaseException as exc:
        reason = describe(exc, watch)
        result.state, result.reason = "failed", reason
        if started:
            mark("rolling-back", reason=reason)
            _rollback(tx, session, job, opts=opts, watch=watch, progress=progress, timer=timer, result=result,
                      backup=running, reason=reason)
        if touched:
            mark(result.state, reason=result.reason)
        if not isinstance(exc, Exception):
            raise
    finally:
        conn = session.conn
        if touched and conn is not None and _alive(conn) and not watch.handle.killed:
            try:
                tx.cleanup(conn)
            except Exception as exc:  # cleanup is best effort; say so in the report
                ctx.note(f"cleanup failed: {describe(exc, watch)}")
        session.close()
        result.notes.extend(ctx.notes)


def _rollback(tx: Transaction, session: _Session, job: DeviceJob, *, opts: PushOptions, watch: Watch,
              progress: Progress, timer: _Timer, result: DeviceResult, backup: dict[str, str],
              reason: str) -> None:
    """Roll back on a fresh session (the old one may be dead or stuck in a config mode)."""
    if watch.handle.killed:
        if not watch.timed_out:  # interrupted twice: leave the device to its commit timer, if any
            result.reason = reason + _timer_hint(tx, opts)
            return
        watch.grace(opts.rollback_grace)
    progress(job.name, "rolling-back")
    try:
        with timer("rollback"):
            conn = session.fresh()
            tx.rollback(conn)
            now = tx.fetch(conn, sorted(job.intended))
        same = same_config(opts.differ, job.platform, backup, now)
        result.rollback_verified = same
        if same:
            result.state, result.reason = "rolled-back", reason
        else:
            result.state = "failed"
            result.reason = f"{reason}; rollback ran but the running config differs from the backup"
    except Exception as exc:
        result.state = "failed"
        result.rollback_verified = False
        result.reason = f"{reason}; rollback failed: {describe(exc, watch)}{_timer_hint(tx, opts)}"


def same_config(differ: Differ, platform: str, a: dict[str, str], b: dict[str, str]) -> bool:
    """Whether two configs are the same: the diff is merge-only, so compare both ways."""
    return not differ(platform, a, b).changed and not differ(platform, b, a).changed


def _timer_hint(tx: Transaction, opts: PushOptions) -> str:
    recover = f"fabriccfg push --recover {opts.run_dir}"
    if getattr(tx, "commit_confirm", False):
        return (f" (the platform's commit-confirm timer reverts the change within "
                f"{opts.confirm_timeout:g} s; or run '{recover}')")
    return f" (run '{recover}' to roll it back to the backup in the run folder)"


def fetch_device(job: DeviceJob, opts: PushOptions, watch: Watch, progress: Progress,
                 index: int = 0, *, keep: dict[str, dict[str, str]] | None = None) -> DeviceResult:
    """Live diff: connect, fetch the running config, back it up into the run folder, diff; never raises.

    ``keep``: also store the raw running files there (by device name) for callers that diff themselves.
    """
    result = DeviceResult(job.name, job.platform)
    t0 = time.monotonic()
    try:
        tx_cls = _startable(job, result, lacking="CLI to fetch from")
        if tx_cls is None:
            return result
        tx = tx_cls(_context(job, opts, index, progress))
        session = _Session(job, opts, watch, result, timeout=min(watch.timeout or 30.0, 30.0))
        try:
            progress(job.name, "connecting")
            conn = session.open()
            progress(job.name, "fetching")
            running = tx.fetch(conn, sorted(job.intended))
        finally:
            session.close()
        if keep is not None:
            keep[job.name] = running
        _write_backup(result, opts, running)
        diff = opts.differ(job.platform, dict(job.intended), running)
        _record_diff(result, diff)
        result.state = "unchanged"  # fetched; ``changed`` says whether it differs
        return result
    except BaseException as exc:
        result.state, result.reason = "failed", describe(exc, watch)
        return result
    finally:
        result.timings["total"] = round(time.monotonic() - t0, 3)
