from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from fabriccfg.verify.engine import Check, Context, Report, evaluate, load_checks

from .synth import Synth

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def checks() -> list[Check]:
    return load_checks()


def run(synth: Synth, checks: Sequence[Check], times: Sequence[float] = (10.0, 12.0, 14.0)) -> Report:
    return evaluate(checks, Context(synth.fabric, [synth.snapshot(t) for t in times]))


def ids(report: Report) -> set[str]:
    return {f.check for f in report.findings}
