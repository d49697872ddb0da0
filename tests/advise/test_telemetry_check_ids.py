"""The advise model's telemetry input names verify checks by id: every id it knows must be a check verify
really ships, or a renamed check would be skipped silently as 'unknown' (issue 13)."""

from __future__ import annotations

from fabriccfg.advise import telemetry_input as ti
from fabriccfg.verify.engine import load_checks


def test_every_check_id_the_model_reads_is_a_shipped_check() -> None:
    shipped = {c.id for c in load_checks()}
    assert len(shipped) > 10
    known = set(ti.FINDING_EFFECTS) | set(ti.VALUE_IS_PAUSE) | set(ti._CHECK_FAMILY)
    assert known - shipped == set(), f"advise reads checks verify does not ship: {sorted(known - shipped)}"


def test_every_family_bound_check_has_an_effect() -> None:
    assert set(ti._CHECK_FAMILY) <= set(ti.FINDING_EFFECTS)
    assert set(ti.VALUE_IS_PAUSE) <= set(ti.FINDING_EFFECTS)
    assert set(ti._CHECK_FAMILY.values()) <= {"roce", "ib"}
