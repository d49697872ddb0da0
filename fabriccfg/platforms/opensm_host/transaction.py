"""The push transaction of the opensm_host platform (see the package docstring)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from fabriccfg.push.files import FilesTransaction, Precheck, last_line
from fabriccfg.push.transaction import TxError
from fabriccfg.session import Session


class OpensmHostTransaction(FilesTransaction):
    """OpenSM (and SHARP AM): each must parse its new config before it replaces the old one."""

    prechecks: ClassVar[Mapping[str, Precheck]] = {
        # opensm exits 0 on an unknown key and only prints it: that line is a failure too
        "opensm.conf": Precheck("opensm -F {path} -c /tmp/{tag}.opensm-check.conf",
                                fails=r'^\s*Unrecognized token: "'),
        "sharp_am.cfg": Precheck("sharp_am -O {path} --check"),
    }
    services: ClassVar[Mapping[str, str]] = {
        "opensm.conf": "opensmd",
        "partitions.conf": "opensmd",
        "root_guids.conf": "opensmd",
        "cn_guids.conf": "opensmd",
        "node-name-map": "opensmd",
        "sharp_am.cfg": "sharp_am",
    }


    enabled_services: ClassVar[frozenset[str]] = frozenset({"sharp_am"})
    """Services also enabled at boot when their file is installed (a standby AM must survive a reboot)."""

    def _activate(self, conn: Session, names: Sequence[str]) -> None:
        wanted = {self.services[n] for n in names if n in self.services} & self.enabled_services
        for service in sorted(wanted):
            code, out = self.status(conn, f"systemctl enable {service}", timeout=self.long)
            if code:
                raise TxError(f"systemctl enable {service} failed: {last_line(out)}")
        super()._activate(conn, names)


TRANSACTION = OpensmHostTransaction
