"""Fixtures for push tests: example fabrics and the real mock fabric (in-process, no SNMP)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import fabriccfg
from fabriccfg.inventory.models import Fabric
from fabriccfg.push import api
from fabriccfg.push.report import RunReport
from fabriccfg.push.runner import RunnerOptions

INVENTORIES = Path(fabriccfg.__file__).parent / "data" / "inventories"


class Lab:
    """A running mock fabric plus helpers to push to / diff against it."""

    def __init__(self, fabric: Fabric, mock: Any, tmp: Path) -> None:
        self.fabric = fabric
        self.mock = mock
        self.tmp = tmp
        self.runs = tmp / "runs"

    def jobs(self, names: Sequence[str]) -> list[Any]:
        return api.plan_jobs(self.fabric, self.mock.endpoints, list(names))

    def push(self, names: Sequence[str], *, workers: int = 8, timeout: float | None = 30.0,
             **kwargs: Any) -> RunReport:
        runner = kwargs.pop("runner", None) or RunnerOptions(workers=workers, timeout=timeout)
        kwargs.setdefault("confirm_timeout", 60.0)
        return api.push(self.fabric, self.jobs(names), run_base=self.runs, runner=runner, **kwargs)

    def diff(self, names: Sequence[str], **kwargs: Any) -> RunReport:
        return api.live_diff(self.fabric, self.jobs(names), run_base=self.runs,
                             runner=RunnerOptions(workers=8, timeout=30.0), **kwargs)

    def running(self, names: Sequence[str]) -> dict[str, dict[str, str]]:
        """Each device's running config as the push reads it (from a live diff's run folder)."""
        rep = self.diff(names)
        out: dict[str, dict[str, str]] = {}
        for d in rep.devices:
            assert d.state != "failed", d.reason
            out[d.name] = {Path(p).name: (Path(rep.run_dir) / p).read_text() for p in d.backup}
        return out


@pytest.fixture
def lab(tmp_path: Path) -> Callable[..., Any]:
    """``with lab(fabric, faults=[...]) as lb:`` starts the real mock fabric for ``fabric``."""
    from fabriccfg.mock.fabric import MockFabric

    @contextmanager
    def start(fabric: Fabric, faults: Sequence[str] = ()) -> Iterator[Lab]:
        work = tmp_path / f"mock-{fabric.fabric.name}"
        with MockFabric(fabric, faults=list(faults), workdir=work, snmp=False, processes=1) as mock:
            yield Lab(fabric, mock, tmp_path)

    return start

