"""One show command per device where the NOS prints every interface (#14 "Bulk collection").

NX-OS: ``show queuing interface`` and ``show queuing pfc-queue detail`` take an optional interface (Cisco's
NX-API schema, tests/telemetry/fixtures/nxos_*/SOURCE): without it the switch answers every interface in
one reply. The collector runs that form; these tests pin that it does, and that the one reply carries
exactly what the per-port replies carried (same samples), so nothing is lost by the switch.
"""

from __future__ import annotations

from pathlib import Path

from fabriccfg.inventory.load import load_fabric
from fabriccfg.inventory.models import Fabric
from fabriccfg.mock import cli_telemetry as C
from fabriccfg.mock.fabric import MockFabric
from fabriccfg.mock.traffic import TrafficModel
from fabriccfg.platforms.nxos import parsers as nx
from fabriccfg.platforms.nxos import telemetry as nx_telemetry
from fabriccfg.telemetry.collect import Collector

INV = Path(__file__).resolve().parents[2] / "inventories"
T0 = 1_750_000_000.0


def test_nxos_runs_one_command_per_device_for_each_table() -> None:
    cmds = [(c.command, c.per) for c in nx_telemetry.TELEMETRY.cli]
    assert cmds == [("show queuing interface", "device"), ("show queuing pfc-queue detail", "device")]


def test_nxos_bulk_reply_equals_the_per_port_replies() -> None:
    model = TrafficModel(load_fabric(INV / "roce-lab.yaml"), ["pause-storm:gpu01:mlx5_3"], seed=1, t0=T0)
    ports = model.ports("leaf-r3")
    assert len(ports) > 1
    for bulk, one, parse in (
        ("show queuing interface", "show queuing interface {}", nx.queuing_samples),
        ("show queuing pfc-queue detail", "show queuing pfc-queue interface {} detail", nx.pfc_queue_samples),
    ):
        text, rc = C.run(model, "leaf-r3", bulk, T0 + 30) or ("", 1)
        assert rc == 0
        together = {(s.port, s.metric, s.labels, s.value) for s in parse("leaf-r3", text)}
        apart = set()
        for p in ports:
            t, rc = C.run(model, "leaf-r3", one.format(p), T0 + 30) or ("", 1)
            assert rc == 0
            apart |= {(s.port, s.metric, s.labels, s.value) for s in parse("leaf-r3", t)}
        assert {s[0] for s in together} == set(ports)
        assert together == apart, bulk


def test_bulk_replies_over_ssh(roce_fabric: Fabric, tmp_path: Path) -> None:
    """End to end on the mock's real SSH servers: NX-OS answers every cabled port from its two bulk commands
    (the SSH reader finds the prompt after a reply of many chunks), and EOS's LANZ reply becomes
    ``queue_watermark_bytes`` gauges."""
    nxos = next(s.name for s in roce_fabric.switches if s.platform == "nxos")
    eos = next(s.name for s in roce_fabric.switches if s.platform == "eos")
    with MockFabric(roce_fabric, workdir=tmp_path) as mock, Collector(timeout=30) as col:
        snap = col.collect(roce_fabric, mock.endpoints, devices=[nxos, eos])
    assert snap.errors == {}
    cabled = {p for (d, p) in roce_fabric.neighbours if d == nxos}
    for metric in ("tc_tx_pkts", "pfc_rx_pause", "pfcwd_status"):
        assert {s.port for s in snap.select(metric, nxos)} >= cabled, metric
    marks = snap.select("queue_watermark_bytes", eos)
    assert marks and all(s.kind == "gauge" and isinstance(s.value, int) and s.value > 0 for s in marks)


def test_nxos_pfc_row_with_a_64_bit_count() -> None:
    """The PFC table's columns are fixed-width (7, 10, 10, 20, 10, 20 in the published FX2 capture): a
    20-digit count leaves no blank after the state word, and the row must still parse."""
    big = 18446744073709551000
    text = "\n".join([
        "Ingress Queuing for Ethernet1/51",
        "PFC_COS QOS_Group   TxPause             TxCount   RxPause             RxCount",
        f"{5:>7}{5:>10}{'Active':>10}{big:>20}{'Inactive':>10}{7:>20}",
    ])
    assert nx.parse_queuing(text) == {"Ethernet1/51": {"queues": {}, "pfc": {"5": {"tx": big, "rx": 7}}}}


def test_nxos_parsers_on_an_error_reply() -> None:
    """An NX-OS error (or any unexpected text) parses to nothing; the collector reports the command."""
    err = "                  ^\n% Invalid command at '^' marker.\n"
    assert nx.parse_queuing(err) == {} and nx.parse_pfc_queue(err) == {}
    assert nx.queuing_samples("sw", "| Tx Pkts | 1 | 0 |\n") == []  # rows without any interface named
