"""Regression tests for the security audit: inventory values that would change the grammar of a rendered
file or a shell command are refused at load time with a rule id, and what is rendered is quoted."""

from __future__ import annotations

import copy
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from .conftest import IB, load_data, only


def _ib() -> dict[str, Any]:
    return copy.deepcopy(IB)


@pytest.mark.parametrize("value", [
    "/var/log/opensm.log guid 0x1",  # a second word: a space changes the opensm.conf line
    "/var/log/$(reboot).log",
    "/var/log/`id`.log",
    "/var/log/a;b.log",
    "/var/log/a'b.log",
    "/var/log/a#b.log",
    "var/log/opensm.log",  # relative
])
def test_opensm_log_file_must_be_a_plain_absolute_path(value: str) -> None:
    data = _ib()
    data["ib"]["log_file"] = value
    hits = only(load_data(data), "unsafe-path")
    assert len(hits) == 1 and hits[0].severity == "error"
    assert hits[0].path == ("ib", "log_file")


def test_opensm_log_file_plain_path_is_accepted() -> None:
    data = _ib()
    data["ib"]["log_file"] = "/var/log/opensm/opensm-fabric_1.log"
    assert not only(load_data(data), "unsafe-path")


@pytest.mark.parametrize("member", ["ALL=full,gpu1", "gpu1:full", "SELF;", "ALL_CAS=limited", "a b", "x,y"])
def test_partition_member_cannot_carry_partitions_conf_punctuation(member: str) -> None:
    data = _ib()
    data["ib"]["partitions"][0]["members"].append({"device": member, "membership": "full"})
    hits = only(load_data(data), "invalid-name")
    assert [h.path[:4] for h in hits] == [("ib", "partitions", 0, "members")]


def test_partition_member_guid_and_keywords_still_load() -> None:
    data = _ib()
    data["ib"]["partitions"][0]["members"] += [{"device": "0x1070fd0300010000"}, {"device": "SELF"},
                                               {"device": "gpu1", "membership": "limited"}]
    result = load_data(data)
    assert not [f for f in result.findings if f.severity == "error"], result.findings


@pytest.mark.parametrize("engine", ["ftree minhop", "ftree#", "ftree;updn", "$(id)"])
def test_routing_engine_is_a_word(engine: str) -> None:
    data = _ib()
    data["ib"]["routing_engines"] = [engine]
    hits = only(load_data(data), "invalid-name")
    assert hits and hits[0].path[:2] == ("ib", "routing_engines")


def test_shell_quote_filter() -> None:
    from fabriccfg.render.filters import FILTERS

    q = FILTERS["shell_quote"]
    assert q("ens1f0np0") == "ens1f0np0"  # plain names render unchanged (goldens stay put)
    assert q("a$(reboot)") == "'a$(reboot)'"
    assert q("x'; reboot; '") == "'x'\"'\"'; reboot; '\"'\"''"


def test_connectx_scripts_quote_nic_names_in_commands() -> None:
    """Every command-position NIC value in the RoCE scripts goes through shell_quote."""
    root = Path(__file__).resolve().parents[2] / "fabriccfg" / "platforms" / "connectx_host" / "templates"
    for name in ("roce-setup.sh.j2", "roce-readback.sh.j2"):
        for line in (root / name).read_text(encoding="utf-8").splitlines():
            if line.lstrip().startswith("#"):
                continue
            for field in ("nic.netdev }}", "nic.name }}"):
                if field in line:
                    # only inside a double-quoted log message (Name-validated, no '$' possible)
                    assert 'log "' in line, f"{name}: unquoted {field!r} in {line!r}"


def test_files_transaction_refuses_unsafe_install_paths() -> None:
    from fabriccfg import registry
    from fabriccfg.push.transaction import TxContext, TxError

    ctx = TxContext(name="sm1", platform="opensm-host", tag="fc-abc123-0", differ=lambda *a: None)
    tx = registry.transaction("opensm-host")(ctx)
    assert tx.path("opensm.conf") == "/etc/opensm/opensm.conf"
    tx.install_paths = {"opensm.conf": "/etc/opensm/x; reboot"}
    with pytest.raises(TxError, match="unsafe install path"):
        tx.path("opensm.conf")
    bad = registry.transaction("opensm-host")(
        TxContext(name="sm1", platform="opensm-host", tag="x$(id)", differ=lambda *a: None))
    with pytest.raises(TxError, match="unsafe install path"):
        bad.path("opensm.conf")


def test_upload_and_read_quote_the_path() -> None:
    from fabriccfg.push.transaction import read_file, upload

    sent: list[str] = []

    class Tx:
        def cmd(self, conn: Any, command: str, **_kw: Any) -> str:
            sent.append(command)
            if command.startswith("sha256sum"):
                import hashlib
                return hashlib.sha256(b"x\n").hexdigest()
            if "printf 'FC%s" in command:  # upload's writes report success explicitly
                return "FCWROTE\n"
            return "__FABRICCFG_MISSING__"

    upload(Tx(), None, "/tmp/a b;c", "x\n")  # type: ignore[arg-type]
    read_file(Tx(), None, "/tmp/a b;c")  # type: ignore[arg-type]
    assert sent and all("'/tmp/a b;c'" in c for c in sent), sent
    assert not any(" /tmp/a b;c" in c for c in sent)


def test_endpoints_file_is_private_from_the_start(tmp_path: Path) -> None:
    from fabriccfg.targets import Endpoint, SnmpAccess, write_endpoints

    path = tmp_path / "eps.json"
    stale = path.with_suffix(".json.tmp")
    stale.write_text("old", encoding="utf-8")
    stale.chmod(0o644)
    old = os.umask(0o000)
    try:
        write_endpoints(path, [Endpoint(name="d", platform="eos", device_type="arista_eos", host="127.0.0.1",
                                        password="pw-secret-1", snmp=SnmpAccess(version="2c",
                                                                                community="c-secret-1"))])
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not stale.exists()


def test_snmp_secrets_not_in_repr() -> None:
    from fabriccfg.targets import Endpoint, SnmpAccess

    acc = SnmpAccess(version="3", user="u", auth_key="auth-secret-1", priv_key="priv-secret-1",
                     community="comm-secret-1")
    ep = Endpoint(name="d", platform="eos", device_type="arista_eos", host="h", password="pw-secret-1",
                  snmp=acc)
    for text in (repr(acc), str(acc), repr(ep), str(ep)):
        assert "secret-1" not in text


def test_session_log_is_private_and_redacted(tmp_path: Path) -> None:
    pytest.importorskip("netmiko")
    from fabriccfg import secrets
    from fabriccfg.connect import _session_log

    secrets.remember("sessionlog-secret-9")
    path = tmp_path / "run" / "dev.log"
    old = os.umask(0o000)
    try:
        slog = _session_log(path)
        slog.session_log.write("login: admin\npassword: sessionlog-secret-9\n")
        slog.close()
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "sessionlog-secret-9" not in path.read_text(encoding="utf-8")
