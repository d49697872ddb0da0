"""fabriccfg: validated intent, rendered configs, guarded pushes and health checks for AI fabrics.

The public Python API (docs/api.md) is re-exported here from :mod:`fabriccfg.api`, loaded on first use
(PEP 562) so that ``import fabriccfg`` and the CLI's start stay light. Five API functions share their
name with a stage package (``render``, ``push``, ``verify``, ``advise``, ``mock``): those packages are
callable modules, so ``fabriccfg.render(fabric)`` calls the API whether or not the package
``fabriccfg.render`` was imported (importing a submodule binds its name on this package).
"""

from __future__ import annotations

import importlib
import types
from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:
    from fabriccfg.api import (
        CheckFinding as CheckFinding,
    )
    from fabriccfg.api import (
        CheckResult as CheckResult,
    )
    from fabriccfg.api import (
        DeviceDiff as DeviceDiff,
    )
    from fabriccfg.api import (
        DeviceResult as DeviceResult,
    )
    from fabriccfg.api import (
        DiffResult as DiffResult,
    )
    from fabriccfg.api import (
        Estimate as Estimate,
    )
    from fabriccfg.api import (
        Fabric as Fabric,
    )
    from fabriccfg.api import (
        Finding as Finding,
    )
    from fabriccfg.api import (
        InventoryError as InventoryError,
    )
    from fabriccfg.api import (
        Lab as Lab,
    )
    from fabriccfg.api import (
        LoadResult as LoadResult,
    )
    from fabriccfg.api import (
        RenderedDevice as RenderedDevice,
    )
    from fabriccfg.api import (
        Report as Report,
    )
    from fabriccfg.api import (
        RunReport as RunReport,
    )
    from fabriccfg.api import (
        UsageError as UsageError,
    )
    from fabriccfg.api import (
        Workload as Workload,
    )
    from fabriccfg.api import (
        advise as advise,
    )
    from fabriccfg.api import (
        diff as diff,
    )
    from fabriccfg.api import (
        load as load,
    )
    from fabriccfg.api import (
        mock as mock,
    )
    from fabriccfg.api import (
        push as push,
    )
    from fabriccfg.api import (
        render as render,
    )
    from fabriccfg.api import (
        validate as validate,
    )
    from fabriccfg.api import (
        verify as verify,
    )

API_NAMES = frozenset({
    "CheckFinding", "CheckResult", "DeviceDiff", "DeviceResult", "DiffResult", "Estimate", "Fabric",
    "Finding", "InventoryError", "Lab", "LoadResult", "RenderedDevice", "Report", "RunReport",
    "UsageError", "Workload", "advise", "diff", "load", "mock", "push", "render", "validate", "verify",
})


class _StagePackage(types.ModuleType):
    """A stage package that is also the API function of the same name."""

    def __call__(self, *args: object, **kwargs: object) -> object:
        # loaded on the first call, like __getattr__ below: fabriccfg.api imports every stage
        api = importlib.import_module("fabriccfg.api")
        return getattr(api, self.__name__.rpartition(".")[2])(*args, **kwargs)


for _stage in ("render", "push", "verify", "advise", "mock"):  # their __init__ modules are docstrings only
    importlib.import_module(f"fabriccfg.{_stage}").__class__ = _StagePackage


def __getattr__(name: str) -> object:
    if name in API_NAMES:
        return getattr(importlib.import_module("fabriccfg.api"), name)
    raise AttributeError(f"module 'fabriccfg' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *API_NAMES})
