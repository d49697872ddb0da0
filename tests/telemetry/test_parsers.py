"""Parsers on real captures (``ib.md`` §5-§6) and the mock's formats: netutils-style fixtures.

Each ``fixtures/<tool>/<name>.txt`` is parsed and compared with ``<name>.json``. To add a case, drop
the capture in and write the JSON by hand (``REGEN=1`` writes the current output for review).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from fabriccfg.platforms.eos import parsers as eos
from fabriccfg.telemetry.parsers import all_parsers

PARSERS = all_parsers()

FIXTURES = Path(__file__).parent / "fixtures"
CASES = sorted(p for p in FIXTURES.glob("*/*.txt") if p.parent.name in PARSERS)


def _jsonable(obj: Any) -> Any:
    if hasattr(obj, "to_json"):
        return _jsonable(obj.to_json())
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    return obj


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fixture(case: Path) -> None:
    parsed = _jsonable(PARSERS[case.parent.name](case.read_text(encoding="utf-8")))
    expected_path = case.with_suffix(".json")
    if os.environ.get("REGEN"):
        expected_path.write_text(json.dumps(parsed, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    assert expected_path.exists(), f"write {expected_path.name} (REGEN=1 writes the output for review)"
    assert parsed == json.loads(expected_path.read_text(encoding="utf-8"))


def test_eos_json_parsers_on_bad_input() -> None:
    """An EOS error line parses to nothing (the collector reports the line); anything else that is not
    the expected JSON is a one-line ValueError with the position, never a traceback from deep inside."""
    assert eos.parse_pfc("% Invalid input (at token 1: 'priority-flow-control')\n") == {}
    assert eos.parse_watchdog('{"interfaces": {}}\n') == {}  # EOS before any watchdog event
    with pytest.raises(ValueError, match=r"^not EOS JSON \(line 2 col \d+: Expecting value\)$"):
        eos.parse_ecn('{\n    "intfQueueCounters": \n')
    with pytest.raises(ValueError, match="without a 'interfaceCounters' object"):
        eos.parse_pfc('{"interfaceCounters": []}')
    with pytest.raises(ValueError, match="without a 'interfaces' object"):
        eos.parse_watchdog("[1, 2]")
    assert eos.parse_ecn('{"intfQueueCounters": {"Ethernet1/1": {"queueCounters": {"3": "-"}}}}') == {}
