"""What a platform renders: ``RENDER`` in a platform package's ``render`` module (:mod:`fabriccfg.registry`).

The spec is data plus one context function, so adding a platform never touches the engine:
``files`` names the outputs and their templates, ``context`` computes every derived value once in
Python (templates only format), and ``cli`` tells the shared diff how the device prints its
running config (hier-config platform, lines that are not config, last-value-wins commands).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric

Context = Mapping[str, Any]


@dataclass(frozen=True)
class CliDiffSpec:
    """How to compare a CLI platform's intended config with its running config (hier-config 3.x)."""

    hier_platform: str = "GENERIC"
    """Name of a ``hier_config.Platform`` member, e.g. ``ARISTA_EOS``, ``CISCO_NXOS``, ``GENERIC``."""
    ignore: tuple[str, ...] = ()
    """Regexes of printed lines that are not configuration (comments, headers); removed before diffing."""
    idempotent: tuple[tuple[str, ...], ...] = ()
    """Lineages of regexes (one per level); two lines whose captured groups match replace each other."""
    absent_negations: tuple[str, ...] = ()
    """Regexes of intended ``no ...`` lines the device does not print: satisfied when the positive
    form is absent from the running config (other negations, e.g. EOS ``no priority``, are printed
    and compared literally)."""


@dataclass(frozen=True)
class RenderSpec:
    """One platform's render package."""

    files: Mapping[str, str]
    """Output file name -> template path ``<folder>/<template>``, e.g. ``eos/config.txt.j2``: a user's
    ``--templates DIR`` overrides it with ``DIR/eos/config.txt.j2``."""
    context: Callable[[Fabric, Device], Context]
    """(fabric, device) -> the template context, with every derived value already computed."""
    applies: Callable[[Fabric, Device], bool] | None = None
    """Cheap pre-check: False means the device renders nothing and its context is never computed."""
    select: Callable[[Context], Iterable[str]] | None = None
    """Which of ``files`` this device gets (default: all); e.g. ``sharp_am.cfg`` only on the AM host."""
    install_paths: Mapping[str, str] = field(default_factory=dict)
    """For ``files``-style platforms: where each file goes on the device (used by push)."""
    cli: CliDiffSpec | None = None
    """For ``cli``-style platforms: how the shared diff reads the running config."""
    templates: Path | None = None
    """The shipped folder behind the ``<folder>/`` of ``files`` (the package's ``templates/``, package
    data); None when the platform reuses another platform's templates (that platform's folder serves)."""
