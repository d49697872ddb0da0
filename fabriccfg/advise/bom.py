"""Bill of materials and capex of an inventory's fabric, priced from a user price file.

No vendor prices ship with fabriccfg: the price file (YAML) is the user's own quote. The BOM is
derived from the topology: switches by model, used ports, NIC ports, and per link its medium —
passive copper (DAC) when the link's ``length_m`` is within the DAC reach at its speed, optics
(two transceivers and fibre) otherwise; a link without ``length_m`` counts as optics (the 100 m
vendors assume for headroom, inventory/derive.py).

DAC reach (NVIDIA LinkX product specifications, docs.nvidia.com/networking):

* 400G, switch to switch: 2 m (MCP4Y10-Nxxx twin-port OSFP passive DAC: "0.5, 1, 1.5, and 2-meter");
* 400G, switch to host: 3 m (MCP7Y10-Nxxx OSFP to 2x400G QSFP112 splitter: "1-3m", 26AWG for 2-3 m);
* 200G (HDR / 200GbE): 2 m (MCP7Y60-Hxxx: "30AWG ... 1 and 1.5-meter ... 26AWG for 2-meters");
* other speeds: 2 m, an ASSUMPTION. ``dac_max_m`` in the price file overrides any of these.

Price file::

    currency: USD
    amortisation_years: 4          # straight-line, 24 x 365 h a year
    switches: {SN5600: 32000, MQM8790-HS2F: 18000}   # by inventory model
    nic_port: 1200                 # per host NIC port (or nics: {400: .., 200: ..} by Gb/s)
    dac: {400: 120, 200: 90}       # per cable, by link speed in Gb/s
    transceiver: {400: 900, 200: 450}  # per module; an optical link takes two
    fiber_per_m: 1.5               # per metre of an optical link
    dac_max_m: {400: 3}            # optional reach overrides, metres
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fabriccfg.inventory.derive import effective_cable_m, link_speed
from fabriccfg.inventory.models import Fabric, Switch

HOURS_PER_YEAR = 24 * 365
DAC_REACH_M: dict[tuple[int, str], float] = {
    (400, "switch"): 2.0,
    (400, "host"): 3.0,
    (200, "switch"): 2.0,
    (200, "host"): 2.0,
}
DAC_REACH_DEFAULT_M = 2.0


class BomError(ValueError):
    """A price file that cannot be read or lacks a price the fabric needs (one-line message)."""


@dataclass
class Line:
    item: str
    qty: float
    unit_price: float

    @property
    def total(self) -> float:
        return self.qty * self.unit_price


@dataclass
class Bom:
    fabric: str
    technology: str
    currency: str
    lines: list[Line] = field(default_factory=list)
    switches: dict[str, int] = field(default_factory=dict)
    ports_used: int = 0
    nic_ports: int = 0
    dac_links: int = 0
    optical_links: int = 0
    fiber_m: float = 0.0
    amortisation_years: float = 4.0

    @property
    def capex(self) -> float:
        return sum(x.total for x in self.lines)

    @property
    def per_hour(self) -> float:
        return self.capex / (self.amortisation_years * HOURS_PER_YEAR)

    @property
    def per_nic_port_hour(self) -> float:
        """Amortised capex per NIC port and hour: the advisor's ``port_cost`` (one NIC port per GPU)."""
        return self.per_hour / self.nic_ports if self.nic_ports else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "fabric": self.fabric,
            "technology": self.technology,
            "currency": self.currency,
            "switches": self.switches,
            "ports_used": self.ports_used,
            "nic_ports": self.nic_ports,
            "dac_links": self.dac_links,
            "optical_links": self.optical_links,
            "fiber_m": self.fiber_m,
            "lines": [
                {"item": x.item, "qty": x.qty, "unit_price": x.unit_price, "total": x.total}
                for x in self.lines
            ],
            "capex": self.capex,
            "amortisation_years": self.amortisation_years,
            "per_nic_port_hour": self.per_nic_port_hour,
        }


def _num(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise BomError(f"{where}: expected a non-negative number, got {value!r}")
    return float(value)


def _by_speed(table: Any, speed: int, where: str) -> float:
    if isinstance(table, int | float) and not isinstance(table, bool):
        return _num(table, where)
    if not isinstance(table, dict):
        raise BomError(f"{where}: expected a number or a mapping of Gb/s to price")
    for key, val in table.items():
        if str(key) == str(speed):
            return _num(val, f"{where}.{key}")
    raise BomError(f"{where}: no price for {speed}G (give {where}: {{{speed}: PRICE}})")


def load_prices(path: Path) -> dict[str, Any]:
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BomError(f"{path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise BomError(f"{where}: not YAML ({getattr(exc, 'problem', None) or exc})") from None
    if not isinstance(doc, dict):
        raise BomError(f"{path}: expected a mapping (currency, switches, nic_port, dac, transceiver, ...)")
    known = {
        "currency",
        "amortisation_years",
        "switches",
        "nic_port",
        "nics",
        "dac",
        "transceiver",
        "fiber_per_m",
        "dac_max_m",
    }
    unknown = sorted(set(map(str, doc)) - known)
    if unknown:
        raise BomError(f"{path}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    return doc


def dac_reach(prices: dict[str, Any], speed: int, end: str) -> float:
    override = prices.get("dac_max_m") or {}
    for key, val in override.items() if isinstance(override, dict) else []:
        if str(key) == str(speed):
            return _num(val, f"dac_max_m.{key}")
    return DAC_REACH_M.get((speed, end), DAC_REACH_DEFAULT_M)


def build(fabric: Fabric, prices: dict[str, Any], source: str = "prices") -> Bom:
    """The BOM of ``fabric`` priced from ``prices``; BomError names any missing price."""
    years = _num(prices.get("amortisation_years", 4), f"{source}: amortisation_years")
    if years <= 0:
        raise BomError(f"{source}: amortisation_years must be > 0")
    bom = Bom(
        fabric.fabric.name,
        fabric.fabric.technology,
        str(prices.get("currency", "USD")),
        amortisation_years=years,
    )
    switch_prices = prices.get("switches") or {}
    if not isinstance(switch_prices, dict):
        raise BomError(f"{source}: switches must map a model to a price")
    for sw in fabric.switches:
        model = sw.model or sw.platform
        bom.switches[model] = bom.switches.get(model, 0) + 1
    for model, qty in sorted(bom.switches.items()):
        if model not in switch_prices:
            raise BomError(f"{source}: no price for switch model {model!r} (switches: {{{model}: PRICE}})")
        bom.lines.append(
            Line(f"switch {model}", qty, _num(switch_prices[model], f"{source}: switches.{model}"))
        )
    devices = fabric.devices
    nic_speeds: dict[int, int] = {}
    for host in fabric.hosts:
        for nic in host.nics:
            if (host.name, nic.name) in fabric.neighbours:
                speed = int(nic.speed or fabric.fabric.link_speed)
                nic_speeds[speed] = nic_speeds.get(speed, 0) + 1
    bom.nic_ports = sum(nic_speeds.values())
    for speed, qty in sorted(nic_speeds.items()):
        if "nics" in prices:
            price = _by_speed(prices["nics"], speed, f"{source}: nics")
        elif "nic_port" in prices:
            price = _num(prices["nic_port"], f"{source}: nic_port")
        else:
            raise BomError(f"{source}: no NIC price (nic_port: PRICE, or nics: {{{speed}: PRICE}})")
        bom.lines.append(Line(f"NIC port {speed}G", qty, price))
    dac: dict[int, int] = {}
    optics: dict[int, int] = {}
    for link in fabric.links:
        (a, _), (b, _) = link.ends
        kinds = {type(devices.get(a)), type(devices.get(b))}
        if Switch not in kinds:
            continue
        bom.ports_used += sum(1 for d in (a, b) if isinstance(devices.get(d), Switch))
        speed = int(link_speed(fabric, link))
        end = "switch" if kinds == {Switch} else "host"
        length = effective_cable_m(link)
        if length <= dac_reach(prices, speed, end):
            dac[speed] = dac.get(speed, 0) + 1
        else:
            optics[speed] = optics.get(speed, 0) + 1
            bom.fiber_m += length
    bom.dac_links = sum(dac.values())
    bom.optical_links = sum(optics.values())
    for speed, qty in sorted(dac.items()):
        bom.lines.append(Line(f"DAC {speed}G", qty, _by_speed(prices.get("dac"), speed, f"{source}: dac")))
    for speed, qty in sorted(optics.items()):
        bom.lines.append(
            Line(
                f"transceiver {speed}G",
                2 * qty,
                _by_speed(prices.get("transceiver"), speed, f"{source}: transceiver"),
            )
        )
    if bom.fiber_m:
        if "fiber_per_m" not in prices:
            raise BomError(
                f"{source}: no fibre price (fiber_per_m: PRICE) for {bom.optical_links} optical links"
            )
        bom.lines.append(
            Line("fibre (m)", round(bom.fiber_m, 1), _num(prices["fiber_per_m"], f"{source}: fiber_per_m"))
        )
    return bom
