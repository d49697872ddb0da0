"""The demo's last act: a NIC starts a PFC pause storm; `verify` finds it and names where it starts.

Appended to :data:`fabriccfg.commands.demo.demo_steps` by :func:`install` (called when the verify
commands register). Uses the RoCE lab's mock fabric that an earlier step started (or starts it).
"""

from __future__ import annotations

import time
from typing import Any

LAB = "roce-lab"
SAMPLES = 3
INTERVAL_S = 2.0


def _pick_host(fabric: Any) -> str | None:
    hosts = [h.name for h in fabric.hosts if any((h.name, n.name) in fabric.neighbours for n in h.nics)]
    if not hosts:
        return None
    return "gpu03" if "gpu03" in hosts else hosts[len(hosts) // 2]


def step_pause_storm(demo: Any) -> None:
    """inject pause-storm:<host> -> verify -> show the storm, its origin and its path."""
    from fabriccfg.targets import load_endpoints
    from fabriccfg.verify import runner
    from fabriccfg.verify.engine import load_checks

    fabric = demo.fabrics.get(LAB)
    if fabric is None:
        return
    host = _pick_host(fabric)
    if host is None:
        return
    mock = demo.mocks.get(LAB)
    if mock is None:
        demo.header(f"{LAB}: mock up (for the pause-storm hunt)")
        demo.mock_up(LAB, fabric)
        mock = demo.mocks[LAB]
    targets = load_endpoints(demo.endpoints[LAB])
    checks = [c for c in load_checks() if c.id != "config-drift"]
    units = {c.id: c.unit for c in checks}

    demo.header(f"{LAB}: inject pause-storm:{host}, then fabriccfg verify "
                f"--samples {SAMPLES} --interval {INTERVAL_S:g}s")
    mock.inject(f"pause-storm:{host}")
    demo.say(f"{host}'s NIC now sends continuous PFC pause on the lossless priority; it spreads hop by hop")
    t = time.monotonic()
    try:
        report = runner.verify(fabric, targets, checks, runner.default_collector(), samples=SAMPLES,
                               interval=INTERVAL_S)
    finally:
        clear = getattr(mock, "clear_scenarios", None)
        if callable(clear):
            clear()
    wall = time.monotonic() - t
    for f in report.findings:
        style = {"critical": "bold red", "warning": "yellow"}.get(f.severity, "magenta")
        unit = units.get(f.check, "")
        if isinstance(f.value, float) and unit.startswith("of the"):
            value = f"{f.value:.0%}"
        else:
            value = f"{f.value:.3g}" if isinstance(f.value, float) else str(f.value)
        what = f"origin of a storm over {len(f.details.get('affected', []))} port(s)" if f.origin else \
            f"{value} {unit}".rstrip()
        demo.say(f"  [{style}]{f.severity.upper():<8}[/] {f.check:<18} {f.where:<22} {what}")
    demo.say(f"verify: {report.status.upper()} (exit {report.exit_code}) in {wall:.1f}s wall "
             f"({len(targets)} devices, {report.points} rate points)")
    origins = [f for f in report.findings if f.check == "pfc-storm-origin"]
    if not origins:
        demo.problem(f"{LAB}: verify found no pause-storm origin after injecting pause-storm:{host}")
        return
    first = origins[0]
    if first.device != host:
        demo.problem(f"{LAB}: storm origin traced to {first.origin}, expected {host}")
        return
    demo.say(f"[bold green]storm origin[/]: {first.origin} "
             f"({len(first.details.get('affected', []))} port(s) paused)")
    demo.say("[bold]path[/]: " + " -> ".join(first.path))


def install() -> None:
    """Append the pause-storm step to the demo (idempotent)."""
    from fabriccfg.commands import demo

    if step_pause_storm not in demo.demo_steps:
        demo.demo_steps.append(step_pause_storm)
