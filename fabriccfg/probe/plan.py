"""The pair plan: which host NICs to measure between so every leaf is exercised with few runs.

For every leaf that has GPU-host NICs: one same-leaf pair (two hosts on that leaf, when it has two),
and every leaf appears in one cross-leaf pair. Cross-leaf pairs are formed rail by rail (same rail,
different leaves, interleaving pods so the pair crosses a pod when it can); leaves left over (a rail
with one leaf, or an odd count) pair with each other across rails, which in a rail-optimised fabric
is the only way to send through the spines. Size: at most ``leaves + ceil(leaves / 2)`` pairs, so
within ``2 x leaves`` whatever the fabric. Spines are exercised by the cross-leaf pairs; which spine
a single flow takes is the ECMP/adaptive-routing hash's choice, not the plan's.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from fabriccfg.inventory.models import Fabric, Host, Switch


@dataclass(frozen=True)
class Nic:
    host: str
    nic: str
    rail: int
    leaf: str
    index: int
    """Position of the NIC on its host (the perftest port offset, see commands.py)."""


@dataclass(frozen=True)
class Pair:
    kind: str  # same-leaf | cross-leaf | cross-pod | cross-rail
    server: Nic
    client: Nic

    @property
    def name(self) -> str:
        return f"{self.client.host}:{self.client.nic}->{self.server.host}:{self.server.nic}"

    @property
    def rail(self) -> int:
        return self.client.rail

    @property
    def leaves(self) -> tuple[str, str]:
        return self.client.leaf, self.server.leaf


class PlanError(ValueError):
    """The inventory has nothing to probe (one-line message)."""


def host_nics(fabric: Fabric) -> list[Nic]:
    """Every cabled GPU-host NIC with the leaf it lands on."""
    out: list[Nic] = []
    for host in fabric.hosts:
        for k, nic in enumerate(host.nics):
            peer = fabric.neighbours.get((host.name, nic.name))
            if peer is None or not isinstance(fabric.devices.get(peer[0]), Switch):
                continue
            out.append(Nic(host.name, nic.name, nic.rail, peer[0], k))
    return out


def _pod(fabric: Fabric, leaf: str) -> int:
    dev = fabric.devices.get(leaf)
    return dev.pod if isinstance(dev, Switch) and dev.pod is not None else 0


def plan(fabric: Fabric, hosts: list[str] | None = None) -> list[Pair]:
    """The pair plan (deterministic: same inventory, same plan). ``hosts`` limits it to those hosts."""
    nics = host_nics(fabric)
    if hosts is not None:
        wanted = set(hosts)
        unknown = wanted - {h.name for h in fabric.hosts}
        if unknown:
            raise PlanError(f"not GPU hosts of the inventory: {', '.join(sorted(unknown))}")
        nics = [n for n in nics if n.host in wanted]
    if not nics:
        raise PlanError("no cabled GPU-host NIC in the inventory: nothing to probe")
    by_leaf: dict[str, list[Nic]] = {}
    for n in nics:
        by_leaf.setdefault(n.leaf, []).append(n)
    pairs: list[Pair] = []
    used: dict[str, int] = {}  # host -> times used, to spread the load over hosts

    def pick(leaf: str, avoid: str | None = None) -> Nic:
        cands = [n for n in by_leaf[leaf] if n.host != avoid] or by_leaf[leaf]
        best = min(cands, key=lambda n: (used.get(n.host, 0), n.host, n.nic))
        used[best.host] = used.get(best.host, 0) + 1
        return best

    for leaf in sorted(by_leaf):
        if len({n.host for n in by_leaf[leaf]}) >= 2:
            a = pick(leaf)
            b = pick(leaf, avoid=a.host)
            pairs.append(Pair("same-leaf", a, b))
    # cross-leaf, rail by rail, pods interleaved
    leftovers: list[str] = []
    rails: dict[int, list[str]] = {}
    for leaf, members in by_leaf.items():
        rails.setdefault(min(n.rail for n in members), []).append(leaf)
    for rail in sorted(rails):
        by_pod: dict[int, list[str]] = {}
        for leaf in sorted(rails[rail]):
            by_pod.setdefault(_pod(fabric, leaf), []).append(leaf)
        order = [x for group in itertools.zip_longest(*by_pod.values()) for x in group if x is not None]
        while len(order) >= 2:
            la, lb = order.pop(0), order.pop(0)
            pairs.append(_cross(fabric, pick(la), pick(lb)))
        leftovers += order
    while len(leftovers) >= 2:
        la, lb = leftovers.pop(0), leftovers.pop(0)
        pairs.append(_cross(fabric, pick(la), pick(lb)))
    if leftovers and len(by_leaf) > 1:
        other = next(leaf for leaf in sorted(by_leaf) if leaf != leftovers[0])
        pairs.append(_cross(fabric, pick(leftovers[0]), pick(other)))
    return pairs


def _cross(fabric: Fabric, a: Nic, b: Nic) -> Pair:
    if a.rail != b.rail:
        kind = "cross-rail"
    elif _pod(fabric, a.leaf) != _pod(fabric, b.leaf):
        kind = "cross-pod"
    else:
        kind = "cross-leaf"
    return Pair(kind, a, b)


def covered_leaves(pairs: list[Pair]) -> set[str]:
    return {leaf for p in pairs for leaf in p.leaves}


def host_leaves(fabric: Fabric) -> set[str]:
    return {n.leaf for n in host_nics(fabric)}


def is_host(fabric: Fabric, name: str) -> bool:
    return isinstance(fabric.devices.get(name), Host)
