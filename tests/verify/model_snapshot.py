"""Snapshots straight from the mock's traffic model at explicit model times (no sockets, no sleeping).

This is the telemetry contract applied to :meth:`TrafficModel.port_counters`: canonical names with a
``.N`` suffix become the ``prio`` (PFC, watchdog) or ``tc`` (queues, ECN) label, 1/2 oper status
becomes "up"/"down", IB error counters saturate at their PortCounters width, LLDP and ibnetdiscover
neighbours come from :meth:`TrafficModel.neighbour` (so ``cabling-swap`` shows), buffer watermarks
(gauges) from :meth:`TrafficModel.watermarks`, sysUpTime from
:meth:`device_state` (so ``reboot`` shows). The end-to-end path (SSH/SNMP + collectors) is covered by
``test_verify_mockfabric.py``; this one lets every scenario run in milliseconds.
"""

from __future__ import annotations

from fabriccfg import catalog
from fabriccfg.inventory.models import Fabric, Host, ManagementHost, Switch
from fabriccfg.mock.traffic import IB_ERROR_BITS, TrafficModel
from fabriccfg.telemetry.model import Sample, Snapshot, labels

PRIO_METRICS = (
    "pfc_rx_pause",
    "pfc_tx_pause",
    "pfc_rx_pause_duration",
    "pfc_tx_pause_duration",
    "pfcwd_storm_detected",
    "pfcwd_storm_restored",
    "pfcwd_tx_drop",
)
TC_METRICS = ("tc_tx_pkts", "tc_tx_bytes", "tc_wred_discard", "tc_no_buffer_discard", "ecn_marked")
COUNTER32 = (
    "if_in_errors",
    "if_out_errors",
    "if_in_discards",
    "if_out_discards",
    "pfc_requests",
    "pfc_indications",
)
SKIP_PREFIX = ("rx_prio", "tx_prio", "tc_nobuffer_discard")


def _guid_port(fabric: Fabric, dev: str, port: str) -> tuple[str, str]:
    d = fabric.devices[dev]
    if isinstance(d, Switch):
        num = catalog.info(d.platform).fabric_port_number
        return d.guid or "", str(num(port) if num else port)
    if isinstance(d, Host):
        return next(n.guid or "" for n in d.nics if n.name == port), "1"
    assert isinstance(d, ManagementHost)
    return d.port_guid, "1"


def snapshot(model: TrafficModel, t: float) -> Snapshot:
    fabric = model.fabric
    snap = Snapshot(ts=t)
    ib = fabric.fabric.technology == "infiniband"
    for dev_name, dev in fabric.devices.items():
        state = model.device_state(dev_name, t)
        if not state.get("up", True):
            snap.error(dev_name, "timeout: no answer (rebooting)")
            continue
        snap.uptime[dev_name] = int(state["sys_uptime_ticks"])
        snap.device_ts[dev_name] = t
        for port in model.ports(dev_name):
            counters = model.port_counters(dev_name, port, t)
            p = model.lossless_prio
            if not ib and isinstance(dev, Switch) and f"pfcwd_storm_detected.{p}" in counters:
                # the watchdog's queue state as the switches show it (mock/cli_telemetry.py: stormed
                # while more storms were detected than restored)
                det, res = counters[f"pfcwd_storm_detected.{p}"], counters.get(f"pfcwd_storm_restored.{p}", 0)
                status = "stormed" if det > res else "operational"
                snap.add(Sample(dev_name, port, "pfcwd_status", labels(prio=p), status, "state"))
            for name, value in counters.items():
                if name.startswith(SKIP_PREFIX):
                    continue
                metric, _, idx = name.partition(".")
                lbl = (
                    labels(prio=idx)
                    if metric in PRIO_METRICS and idx
                    else labels(tc=idx)
                    if metric in TC_METRICS and idx
                    else ()
                )
                if metric == "oper_status":
                    snap.add(Sample(dev_name, port, metric, (), "up" if value == 1 else "down", "state"))
                elif metric == "speed_mbps":
                    snap.add(Sample(dev_name, port, metric, (), int(value), "gauge"))
                elif metric in IB_ERROR_BITS:
                    bits = IB_ERROR_BITS[metric]
                    kind = "sat8" if bits <= 8 else "sat16"
                    snap.add(Sample(dev_name, port, metric, (), min(int(value), (1 << bits) - 1), kind))
                elif metric.startswith("Port"):
                    snap.add(Sample(dev_name, port, metric, (), int(value), "sat64"))
                elif metric in COUNTER32:
                    snap.add(Sample(dev_name, port, metric, lbl, int(value) % (1 << 32), "counter32"))
                else:
                    snap.add(Sample(dev_name, port, metric, lbl, int(value) % (1 << 64), "counter64"))
            for name, value in model.watermarks(dev_name, port, t).items():
                metric, _, idx = name.partition(".")
                lbl = labels(tc=idx) if metric == "queue_watermark_bytes" else labels(prio=idx)
                snap.add(Sample(dev_name, port, metric, lbl, int(value), "gauge"))
            peer = model.neighbour(dev_name, port, t)
            if peer is None:
                continue
            if not ib and isinstance(dev, Switch):
                snap.add(
                    Sample(dev_name, port, "lldp_neighbor", labels(remote_port=peer[1]), peer[0], "info")
                )
            if ib:
                ga, pa = _guid_port(fabric, dev_name, port)
                gb, pb = _guid_port(fabric, *peer)
                snap.add(
                    Sample(
                        dev_name,
                        port,
                        "ib_link",
                        labels(
                            local_guid=ga,
                            local_port=pa,
                            remote_guid=gb,
                            remote_port=pb,
                            remote_device=peer[0],
                            remote_port_name=peer[1],
                            width="4x",
                            speed="HDR",
                        ),
                        f"{peer[0]}:{peer[1]}",
                        "info",
                    )
                )
    if ib:
        assert fabric.ib is not None
        for i, sw in enumerate(fabric.switches):
            snap.add(
                Sample(
                    sw.name,
                    "41",
                    "ib_link",
                    labels(
                        local_guid=sw.guid or "",
                        local_port="41",
                        remote_guid=f"0x00000000000a{i:04x}",
                        remote_port="1",
                        remote_desc="Mellanox Technologies Aggregation Node",
                        width="4x",
                        speed="HDR",
                    ),
                    "?:1",
                    "info",
                )
            )
        want = {s.device: s.priority for s in fabric.ib.subnet_managers}
        best = max(want, key=lambda d: want[d]) if want else None
        for sm in fabric.management_hosts:
            if sm.name in snap.errors:
                continue
            snap.add(
                Sample(
                    sm.name,
                    None,
                    "sm_state",
                    labels(guid=sm.port_guid, priority=want.get(sm.name, 0)),
                    "master" if sm.name == best else "standby",
                    "state",
                )
            )
            if fabric.ib.sharp.am_host == sm.name:
                snap.add(
                    Sample(sm.name, None, "service_state", labels(service="sharp_am"), "active", "state")
                )
    return snap
