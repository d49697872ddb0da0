"""The house rules of issue 13, checked on the import graph (read with ``ast`` by ``imports.py``), not on
spellings: where platform knowledge may be imported from, and that nothing imports in a circle."""

from __future__ import annotations

from . import imports

PLATFORMS = "fabriccfg.platforms"
STAGES = ("render", "push", "telemetry", "verify", "mock", "probe", "advise")


def _platform_of(module: str) -> str | None:
    """``fabriccfg.platforms.sonic.mock`` -> ``sonic``; None outside a platform package."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["fabriccfg", "platforms"] else None


def test_the_graph_is_read() -> None:
    """The walker sees the edges it must (so that the tests below can fail)."""
    found = {(e.source, e.target) for e in imports.edges()}
    assert ("fabriccfg.platforms.sonic.telemetry", "fabriccfg.platforms.sonic.parsers") in found
    assert ("fabriccfg.render.engine", "fabriccfg.registry") in found
    assert ("fabriccfg.verify.engine", "fabriccfg.verify.storm") in found
    assert ("fabriccfg.inventory.types", "fabriccfg.catalog") in found
    assert len(imports.modules()) > 150


def test_only_a_platform_package_imports_that_platform() -> None:
    """No module outside ``fabriccfg/platforms/<name>/`` imports ``fabriccfg.platforms.<name>`` (nor the
    ``fabriccfg.platforms`` package itself): stages get a platform's pieces through the registry."""
    bad = []
    for e in imports.edges():
        target = _platform_of(e.target)
        outside = e.target == PLATFORMS and not e.source.startswith(PLATFORMS)
        if outside or (target is not None and _platform_of(e.source) != target):
            bad.append(f"{e.source}:{e.line} imports {e.target}")
    assert bad == [], "platform imports outside the platform's own package:\n" + "\n".join(bad)


def test_no_stage_imports_a_platform() -> None:
    stage_mods = [m for m in imports.modules() if m.split(".")[1:2] and m.split(".")[1] in STAGES]
    assert len(stage_mods) > 50
    bad = [f"{e.source}:{e.line} imports {e.target}" for e in imports.edges()
           if e.source in stage_mods and e.target.startswith(PLATFORMS)]
    assert bad == [], "\n".join(bad)


def test_the_catalogue_and_registry_import_no_stage() -> None:
    """The ground floor (catalogue of facts, registry of pieces) imports nothing of fabriccfg but itself,
    so the inventory reads platform facts without importing any stage."""
    for low in ("fabriccfg.catalog", "fabriccfg.registry"):
        targets = {e.target for e in imports.edges() if e.source == low}
        assert targets <= {"fabriccfg", "fabriccfg.catalog"}, (low, targets)


def test_platform_facts_import_only_the_catalogue() -> None:
    """A platform package's ``__init__`` (its facts) imports only the catalogue: reading facts never
    pulls in render, push, telemetry or the mock."""
    bad = [f"{e.source}:{e.line} imports {e.target}" for e in imports.edges()
           if _platform_of(e.source) and e.source.count(".") == 2
           and e.target not in ("fabriccfg", "fabriccfg.catalog", "fabriccfg.platforms")]
    assert bad == [], "\n".join(bad)


def test_no_import_cycles() -> None:
    """Every import counts, late (function-level) ones included: an import moved into a function to dodge
    a cycle still closes it. Imports under ``if TYPE_CHECKING:`` never run and do not count."""
    assert imports.cycles() == []


def test_no_late_import_inside_the_platform_packages_or_the_floor() -> None:
    """Platform packages and the ground floor import at module level only (ruff PLC0415 is kept for the
    command modules, whose late imports keep ``fabriccfg --help`` from loading netmiko and asyncssh)."""
    bad = [f"{e.source}:{e.line} imports {e.target}" for e in imports.edges()
           if e.late and (e.source.startswith(PLATFORMS) or e.source in (
               "fabriccfg.catalog", "fabriccfg.registry", "fabriccfg.inventory.types",
               "fabriccfg.inventory.load", "fabriccfg.telemetry.model", "fabriccfg.verify.engine"))]
    assert bad == [], "\n".join(bad)
