"""Shared helpers for the SSH mock tests (imported by the test modules; no conftest so that the
traffic/SNMP tests in this folder keep their own fixtures)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fabriccfg.connect import connect
from fabriccfg.inventory.load import load_fabric
from fabriccfg.mock.fabric import MockFabric

ROOT = Path(__file__).resolve().parents[2]
ROCE_LAB = ROOT / "inventories" / "roce-lab.yaml"
IB_8700 = ROOT / "inventories" / "ib-lab-mqm8700.yaml"
IB_8790 = ROOT / "inventories" / "ib-lab-mqm8790.yaml"


def start_mock(tmp: Path, inventory: Path, faults: list[str] | None = None, **kw: Any) -> MockFabric:
    fabric = load_fabric(inventory)
    return MockFabric(fabric, faults=faults or [], workdir=tmp, **kw).start()


def mock_fixture(inventory: Path, faults: list[str] | None = None) -> Callable[..., Iterator[MockFabric]]:
    @pytest.fixture(scope="module")
    def _fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MockFabric]:
        mock = start_mock(tmp_path_factory.mktemp("mock"), inventory, faults)
        try:
            yield mock
        finally:
            mock.stop()
    return _fixture


def session(mock: MockFabric, name: str, **kw: Any) -> Any:
    return connect(mock.endpoints[name], **kw)


def wait_for(cond: Callable[[], bool], timeout: float = 10.0, interval: float = 0.05) -> bool:
    """Poll ``cond`` until it is true or the deadline passes (no fixed sleeps)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(interval)
    return cond()


def first_of(mock: MockFabric, platform: str) -> str:
    return next(n for n, ep in mock.endpoints.items() if ep.platform == platform)
