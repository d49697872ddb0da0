"""Device rules: each platform fits the fabric's technology and can be reached the way it is managed.

What a platform needs (a management address, a CLI) is read from its ``PlatformInfo``, so a new
platform module brings its own answers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from fabriccfg.catalog import PlatformInfo
from fabriccfg.catalog import info as platform_info
from fabriccfg.inventory.rules import Issue, rule
from fabriccfg.inventory.rules._util import iter_devices

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Fabric


_LABEL = {"infiniband": "an InfiniBand", "roce": "a RoCE"}


def _info(name: str) -> PlatformInfo | None:
    try:
        return platform_info(name)
    except (KeyError, ImportError):
        return None


@rule("platform-technology", "error", "Every device's platform supports the fabric's technology")
def platform_technology(fabric: Fabric) -> Iterator[Issue]:
    tech = fabric.fabric.technology
    for path, dev in iter_devices(fabric):
        plat = _info(dev.platform)
        if plat is None:
            yield Issue(f"unknown platform {dev.platform!r}", (*path, "platform"))
            continue
        if tech not in plat.technologies:
            yield Issue(
                f"{dev.name!r} uses platform {dev.platform!r}, which supports "
                f"{'/'.join(sorted(plat.technologies))}, in {_LABEL[tech]} fabric",
                (*path, "platform"),
            )
    if tech == "roce" and fabric.ib is not None:
        yield Issue("the 'ib' section is ignored in a RoCE fabric", ("ib",), "warning")
    if tech == "infiniband" and fabric.roce is not None:
        yield Issue("the 'roce' section is ignored in an InfiniBand fabric", ("roce",), "warning")


@rule("needs-mgmt", "error", "Managed devices (with a CLI) have a management address")
def needs_mgmt(fabric: Fabric) -> Iterator[Issue]:
    for path, dev in iter_devices(fabric):
        plat = _info(dev.platform)
        if plat is not None and plat.needs_mgmt and plat.device_type is not None and dev.mgmt is None:
            yield Issue(f"{dev.name!r} ({dev.platform}) is managed over SSH and needs a 'mgmt' address", path)


@rule(
    "unmanaged-push",
    "warning",
    "Unmanaged switches (MQM8790) have no management CPU and are never push targets",
)
def unmanaged_push(fabric: Fabric) -> Iterator[Issue]:
    for i, sw in enumerate(fabric.switches):
        plat = _info(sw.platform)
        if plat is not None and plat.device_type is None and sw.mgmt is not None:
            yield Issue(
                f"{sw.name!r} ({sw.platform}) has no CLI or management CPU: its 'mgmt' address is ignored "
                "and it can never be a push target (configure it through the subnet manager host)",
                ("switches", i, "mgmt"),
            )


@rule("credentials-missing", "warning", "An SSH password or key reference exists when managed devices do")
def credentials_missing(fabric: Fabric) -> Iterator[Issue]:
    ssh = fabric.credentials.ssh
    if ssh.password or ssh.key_file:
        return
    for path, dev in iter_devices(fabric):
        plat = _info(dev.platform)
        if plat is not None and plat.device_type is not None:
            yield Issue(
                f"{dev.name!r} and other devices are managed over SSH but credentials.ssh has neither "
                "'password' nor 'key_file' (write env:NAME or file:PATH)",
                ("credentials",) if "credentials" in fabric.model_fields_set else path,
            )
            return
