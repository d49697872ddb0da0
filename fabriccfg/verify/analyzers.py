"""Checks that need code: cabling against the intent, SM and SHARP health, configuration drift.

Each is registered under the name its check file gives in ``analyzer:``; the check file still carries
the id, severity and hint, so users can disable or re-word them like any other check.
"""

from __future__ import annotations

from fabriccfg import catalog
from fabriccfg.inventory.models import Host, ManagementHost, Switch
from fabriccfg.render.derive import facts
from fabriccfg.telemetry.model import Sample
from fabriccfg.verify.model import Check, CheckResult, Context, Finding, analyzer, metric_index

AN_DESCRIPTION = "aggregation node"
"""The SHARP Aggregation Node's node description (lower case): the switch's internal CA port (41, or 81
when split-ready). It is not a cable and must not count in cabling checks (ib.md §1)."""


def _skip(check: Check, why: str) -> CheckResult:
    return CheckResult(check.id, "skipped", message=why)


# --------------------------------------------------------------------------- IB cabling
def _ib_end_names(ctx: Context) -> tuple[dict[str, tuple[str, str | None]], dict[tuple[str, str], str]]:
    """GUID -> (device, port or None for switch nodes); (device, fabric port number) -> inventory port."""
    by_guid: dict[str, tuple[str, str | None]] = {}
    port_name: dict[tuple[str, str], str] = {}
    for dev in ctx.fabric.devices.values():
        if isinstance(dev, Switch):
            if dev.guid:
                by_guid[dev.guid] = (dev.name, None)
            info = catalog.info(dev.platform)
            for link in ctx.fabric.device_links(dev.name):
                for d, p in link.ends:
                    if d == dev.name:
                        num = info.fabric_port_number(p) if info.fabric_port_number else None
                        port_name[(d, str(num) if num is not None else p)] = p
        elif isinstance(dev, Host):
            for nic in dev.nics:
                if nic.guid:
                    by_guid[nic.guid] = (dev.name, nic.name)
        elif isinstance(dev, ManagementHost):
            by_guid[dev.port_guid] = (dev.name, dev.hca)
    return by_guid, port_name


def _norm_guid(g: str | None) -> str | None:
    if not g:
        return None
    g = g.strip().lower()
    for prefix in ("s-", "h-", "r-"):
        if g.startswith(prefix):
            g = g[2:]
    g = g.removeprefix("0x")
    try:
        return f"0x{int(g, 16):016x}"
    except ValueError:
        return None


def _ib_end(sample: Sample, side: str, by_guid: dict[str, tuple[str, str | None]],
            port_name: dict[tuple[str, str], str], ctx: Context) -> tuple[str, str] | None:
    """The inventory (device, port) of one end of an ``ib_link`` sample, or None when unknown."""
    if side == "local" and sample.device in ctx.fabric.devices and sample.port is not None:
        dev = ctx.fabric.devices[sample.device]
        if isinstance(dev, Switch):
            return sample.device, port_name.get((sample.device, sample.port), sample.port)
        return sample.device, sample.port
    if side == "remote":  # the collector resolves the far end to inventory names when it can
        rdev, rport = sample.label("remote_device"), sample.label("remote_port_name")
        if rdev in ctx.fabric.devices and rport:
            return rdev, rport
    guid = _norm_guid(sample.label(f"{side}_guid"))
    port = sample.label(f"{side}_port")
    if guid is None or guid not in by_guid:
        return None
    dev_name, fixed_port = by_guid[guid]
    if fixed_port is not None:
        return dev_name, fixed_port
    if port is None:
        return None
    return dev_name, port_name.get((dev_name, port), port)


def _is_an(sample: Sample) -> bool:
    return any(AN_DESCRIPTION in (sample.label(k) or "").lower() for k in ("remote_desc", "local_desc"))


@analyzer("ib_cabling")
def ib_cabling(check: Check, ctx: Context) -> list[Finding] | CheckResult:
    """ibnetdiscover links vs the inventory's links, ignoring each switch's SHARP Aggregation Node."""
    if ctx.fabric.fabric.technology != "infiniband":
        return _skip(check, "not an InfiniBand fabric")
    links = [s for s in ctx.latest if s.metric == "ib_link"]
    if not links:
        return _skip(check, "no ibnetdiscover data (needs an SM host with ibnetdiscover)")
    by_guid, port_name = _ib_end_names(ctx)
    observed: dict[tuple[str, str], tuple[str, str]] = {}
    unknown: list[str] = []
    degraded: list[tuple[tuple[str, str], str]] = []
    for s in links:
        if _is_an(s):
            continue
        a = _ib_end(s, "local", by_guid, port_name, ctx)
        b = _ib_end(s, "remote", by_guid, port_name, ctx)
        if a is None or b is None:
            here = s.label("local_desc") or s.label("local_guid") or s.device
            there = s.label("remote_desc") or s.label("remote_guid")
            unknown.append(f"{here}[{s.label('local_port')}] <-> {there}[{s.label('remote_port')}]")
            continue
        observed[a] = b
        observed.setdefault(b, a)
        width, speed = (s.label("width") or "").lower(), (s.label("speed") or "").upper()
        if width and width not in ("4x",) and (a, "width") not in degraded:
            degraded.append((a, f"width {width}"))
        if speed and speed not in ("HDR", "NDR", "XDR") and (a, "speed") not in degraded:
            degraded.append((a, f"speed {speed}"))
    return _compare_cabling(check, ctx, observed, unknown, degraded)


def _compare_cabling(check: Check, ctx: Context, observed: dict[tuple[str, str], tuple[str, str]],
                     unknown: list[str], degraded: list[tuple[tuple[str, str], str]]) -> list[Finding]:
    out: list[Finding] = []
    reported: set[frozenset[tuple[str, str]]] = set()
    tech = ctx.fabric.fabric.technology
    # switch ends first, so a swap is reported on the switch ports that were swapped
    ends = sorted(ctx.fabric.neighbours.items(), key=lambda kv: (ctx.kind(kv[0][0]) != "switch", kv[0]))
    for x, y in ends:
        got = observed.get(x)
        if got is None or got == y:
            continue
        pair = frozenset({x, got})
        if pair in reported:
            continue
        reported.add(pair)
        out.append(Finding(
            check.id, check.severity, x[0], x[1], value=f"{got[0]}:{got[1]}", threshold=f"{y[0]}:{y[1]}",
            hint=check.hint,
            message=f"miscabled: {x[0]}:{x[1]} is connected to {got[0]}:{got[1]}, intended {y[0]}:{y[1]}",
        ))
    for link in ctx.fabric.links:
        a, b = link.ends
        if a not in observed and b not in observed and tech == "infiniband":
            out.append(Finding(check.id, check.severity, a[0], a[1], value="missing",
                               threshold=f"{b[0]}:{b[1]}", hint=check.hint,
                               message=f"link {a[0]}:{a[1]} <-> {b[0]}:{b[1]} not seen"))
    intended = set(ctx.fabric.neighbours)
    for x, y in sorted(observed.items()):
        if x not in intended and y not in intended and x < y:
            out.append(Finding(check.id, "warning", x[0], x[1], value=f"{y[0]}:{y[1]}",
                               threshold="not in inventory", hint=check.hint,
                               message=f"unexpected link {x[0]}:{x[1]} <-> {y[0]}:{y[1]}"))
    for end, what in degraded:
        out.append(Finding(check.id, "warning", end[0], end[1], value=what, threshold="4x HDR",
                           hint="A link trained below its width or speed: reseat or replace the cable.",
                           message=f"link at {end[0]}:{end[1]} trained at {what}"))
    for text in unknown[:20]:
        out.append(Finding(check.id, "warning", None, None, value=text, threshold="inventory GUIDs",
                           hint="Add the node's GUID to the inventory (switch guid, NIC guid) "
                                "or remove the cable.",
                           message=f"link to a node the inventory does not know: {text}"))
    return out


# --------------------------------------------------------------------------- Ethernet cabling
def _lldp_names(ctx: Context, device: str, port: str) -> set[str]:
    """Names the intended peer port may advertise over LLDP (port, NIC and netdev names)."""
    names = {port}
    dev = ctx.fabric.devices.get(device)
    if isinstance(dev, Host):
        for nic in dev.nics:
            if port in (nic.name, nic.netdev):
                names |= {nic.name, *([nic.netdev] if nic.netdev else [])}
    return names


def _latest_rows(ctx: Context, metric: str) -> list[Sample]:
    """The latest round's per-port samples of ``metric``, from the point's metric index (a walk over
    every sample of a 2,000-device round cost ~0.2 s per check)."""
    if not ctx.points:
        return [s for s in ctx.latest if s.metric == metric and s.port is not None]
    pt = ctx.points[-1]
    return [s for d, p in metric_index(pt).get(metric, ()) if p is not None
            for s in pt.by_port[(d, p, metric)]]


@analyzer("eth_cabling")
def eth_cabling(check: Check, ctx: Context) -> list[Finding] | CheckResult:
    """LLDP neighbours vs the inventory's links (only where LLDP answered: hosts may not run it)."""
    if ctx.fabric.fabric.technology != "roce":
        return _skip(check, "not an Ethernet fabric")
    rows = _latest_rows(ctx, "lldp_neighbor")
    if not rows:
        return _skip(check, "no LLDP data")
    out: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for s in rows:
        assert s.port is not None
        seen.add((s.device, s.port))
        want = ctx.fabric.neighbours.get((s.device, s.port))
        remote = str(s.value)
        rport = s.label("remote_port") or ""
        if want is None:
            out.append(Finding(check.id, "warning", s.device, s.port, value=f"{remote}:{rport}",
                               threshold="not in inventory", hint=check.hint,
                               message=f"unexpected LLDP neighbour {remote}:{rport} on {s.device}:{s.port}"))
            continue
        if remote.split(".", maxsplit=1)[0] != want[0] or (rport and rport not in _lldp_names(ctx, *want)):
            out.append(Finding(
                check.id, check.severity, s.device, s.port, value=f"{remote}:{rport}",
                threshold=f"{want[0]}:{want[1]}", hint=check.hint,
                message=f"miscabled: {s.device}:{s.port} sees {remote}:{rport} over LLDP, "
                        f"intended {want[0]}:{want[1]}",
            ))
    reporting = {d for d, _ in seen}
    for (dev, port), (pdev, _pport) in sorted(ctx.fabric.neighbours.items()):
        if dev in reporting and ctx.kind(pdev) == "switch" and (dev, port) not in seen:
            out.append(Finding(check.id, "warning", dev, port, value="none", threshold=f"{pdev}",
                               hint="No LLDP neighbour on a switch-to-switch link: the link is down or LLDP "
                                    "is disabled on the peer.",
                               message=f"no LLDP neighbour on {dev}:{port} (intended {pdev})"))
    return out


# --------------------------------------------------------------------------- subnet managers
@analyzer("sm_health")
def sm_health(check: Check, ctx: Context) -> list[Finding] | CheckResult:
    """One master, the intended SMs present with their intended priorities, the rest standby."""
    ib = ctx.fabric.ib
    if ctx.fabric.fabric.technology != "infiniband" or ib is None:
        return _skip(check, "not an InfiniBand fabric")
    rows = [s for s in ctx.latest if s.metric == "sm_state"]
    if not rows:
        return _skip(check, "no SM state (needs sminfo on an SM host)")
    by_guid: dict[str, str] = {}
    for dev in ctx.fabric.devices.values():
        if isinstance(dev, ManagementHost):
            by_guid[dev.port_guid] = dev.name
        elif isinstance(dev, Switch) and dev.guid:
            by_guid[dev.guid] = dev.name
    states: dict[str, tuple[str, int | None]] = {}
    for s in rows:
        guid = _norm_guid(s.label("guid"))
        name = by_guid.get(guid or "", s.device if s.label("guid") is None else (guid or s.device))
        prio_txt = s.label("priority")
        prio = int(prio_txt) if prio_txt is not None and prio_txt.isdigit() else None
        state = str(s.value).lower().removeprefix("sminfo_")
        if name not in states or state == "master":
            states[name] = (state, prio)
    out: list[Finding] = []
    masters = sorted(n for n, (st, _) in states.items() if st == "master")
    intended = {sm.device: sm.priority for sm in ib.subnet_managers}
    if not masters:
        out.append(Finding(check.id, "critical", None, None, value=0, threshold="== 1 master",
                           hint=check.hint,
                           message="no master subnet manager: the subnet is not being managed"))
    elif len(masters) > 1:
        out.append(Finding(check.id, "critical", None, None, value=len(masters), threshold="== 1 master",
                           hint=check.hint,
                           message=f"{len(masters)} master subnet managers: {', '.join(masters)}"))
    if intended and masters and len(masters) == 1:
        best = max(intended, key=lambda d: intended[d])
        if masters[0] != best and best in states:
            out.append(Finding(check.id, "warning", masters[0], None, value=masters[0], threshold=best,
                               hint=check.hint,
                               message=f"master SM is {masters[0]}, intended {best} "
                                       f"(priority {intended[best]})"))
    for sm, want in sorted(intended.items()):
        if sm not in states:
            out.append(Finding(check.id, "warning", sm, None, value="absent", threshold="master/standby",
                               hint=check.hint, message=f"intended SM {sm} is not running"))
            continue
        st, prio = states[sm]
        if st not in ("master", "standby"):
            out.append(Finding(check.id, "warning", sm, None, value=st, threshold="master/standby",
                               hint=check.hint, message=f"SM {sm} is {st}"))
        if prio is not None and prio != want:
            out.append(Finding(check.id, "warning", sm, None, value=prio, threshold=f"== {want}",
                               hint=check.hint, message=f"SM {sm} runs priority {prio}, intended {want}"))
    for sm in sorted(set(states) - set(intended)):
        if intended and states[sm][0] in ("master", "standby"):
            out.append(Finding(check.id, "warning", sm, None, value=states[sm][0], threshold="not intended",
                               hint=check.hint, message=f"unexpected SM {sm} ({states[sm][0]})"))
    for s in ctx.latest:
        if s.metric == "service_state" and s.label("service") in ("opensmd", "opensm") \
                and s.value == "failed":
            out.append(Finding(check.id, "critical", s.device, None, value="failed", threshold="active",
                               hint=check.hint, message=f"{s.label('service')} failed on {s.device}"))
    return out


# --------------------------------------------------------------------------- what the SM applied
_ROOT_ENGINES = frozenset({"ftree", "updn", "ar_ftree", "ar_updn"})
NO_SM_LOG = ("no OpenSM routing lines (read from /var/log/opensm.log on the SM hosts; "
             "the modelled mock has no OpenSM, use mock up --backend ibsim)")


def _master(ctx: Context) -> str | None:
    masters = {s.device for s in ctx.latest if s.metric == "sm_state" and str(s.value) == "master"}
    return sorted(masters)[0] if len(masters) == 1 else None


@analyzer("sm_routing")
def sm_routing(check: Check, ctx: Context) -> list[Finding] | CheckResult:
    """The master SM routes with the first configured engine (no fallback) and ranks the intended roots."""
    ib = ctx.fabric.ib
    if ctx.fabric.fabric.technology != "infiniband" or ib is None:
        return _skip(check, "not an InfiniBand fabric")
    engines = {s.device: str(s.value) for s in ctx.latest if s.metric == "sm_routing_engine"}
    if not engines:
        return CheckResult(check.id, "unknown", message=NO_SM_LOG)
    master = _master(ctx)
    dev = master if master in engines else sorted(engines)[0]
    used, wanted = engines[dev], ib.routing_engines
    fallback = next((str(s.value) for s in ctx.latest
                     if s.metric == "sm_routing_fallback" and s.device == dev), None)
    out: list[Finding] = []
    if used != wanted[0]:
        out.append(Finding(check.id, check.severity, dev, None, value=used, threshold=wanted[0],
                           hint=check.hint,
                           message=f"SM on {dev} routes with {used}, configured {','.join(wanted)}"
                                   + (f" ({fallback})" if fallback else "")))
    roots = next((s.value for s in ctx.latest if s.metric == "sm_root_switches" and s.device == dev), None)
    intended = len(facts(ctx.fabric).ib.root_guids)
    if used in _ROOT_ENGINES and intended and roots is not None and int(str(roots)) != intended:
        out.append(Finding(check.id, check.severity, dev, None, value=roots, threshold=f"== {intended}",
                           hint=check.hint,
                           message=f"{used} on {dev} ranked {roots} root switches, intended {intended}"))
    return out


def _intended_pkeys(ctx: Context, device: str) -> dict[int, str]:
    """15-bit P_Key -> membership the intent gives ``device`` (Default 0x7fff: any membership)."""
    ib = ctx.fabric.ib
    want: dict[int, str] = {0x7FFF: "any"}
    dev = ctx.fabric.devices.get(device)
    is_ca = isinstance(dev, Host | ManagementHost)
    for p in ib.partitions if ib is not None else []:
        for m in p.members:
            if m.device in ("ALL", device) or (m.device == "ALL_CAS" and is_ca):
                want[p.pkey] = m.membership
    return want


@analyzer("ib_partitions")
def ib_partitions(check: Check, ctx: Context) -> list[Finding] | CheckResult:
    """P_Key tables read from sampled CA ports (``smpquery pkeys``) hold the intended partitions."""
    if ctx.fabric.fabric.technology != "infiniband" or ctx.fabric.ib is None:
        return _skip(check, "not an InfiniBand fabric")
    rows = [s for s in ctx.latest if s.metric == "ib_pkeys"]
    if not rows:
        return CheckResult(check.id, "unknown",
                           message="no P_Key tables read (smpquery pkeys runs where " + NO_SM_LOG[3:])
    out: list[Finding] = []
    for s in rows:
        have = {int(k, 16) & 0x7FFF: bool(int(k, 16) & 0x8000) for k in str(s.value).split()}
        for pkey, membership in sorted(_intended_pkeys(ctx, s.device).items()):
            where = f"{s.device}:{s.port}"
            if pkey not in have:
                out.append(Finding(check.id, check.severity, s.device, s.port, value="absent",
                                   threshold=f"0x{pkey:04x} {membership}", hint=check.hint,
                                   message=f"P_Key 0x{pkey:04x} ({membership}) not applied on {where}"))
            elif membership in ("full", "limited") and have[pkey] != (membership == "full"):
                got = "full" if have[pkey] else "limited"
                out.append(Finding(check.id, "warning", s.device, s.port, value=got,
                                   threshold=membership, hint=check.hint,
                                   message=f"P_Key 0x{pkey:04x} is {got} on {where}, intended {membership}"))
        extra = sorted(set(have) - set(_intended_pkeys(ctx, s.device)))
        if extra:
            text = " ".join(f"0x{k:04x}" for k in extra)
            out.append(Finding(check.id, "warning", s.device, s.port, value=text,
                               threshold="intended partitions only", hint=check.hint,
                               message=f"unexpected P_Key(s) on {s.device}:{s.port}: {text}"))
    return out


@analyzer("sm_standby")
def sm_standby(check: Check, ctx: Context) -> list[Finding] | CheckResult:
    """Every intended SM but the master answers sminfo as STANDBY with its intended priority, below the
    master's (so it takes over when the master dies and does not preempt it)."""
    ib = ctx.fabric.ib
    if ctx.fabric.fabric.technology != "infiniband" or ib is None:
        return _skip(check, "not an InfiniBand fabric")
    if len(ib.subnet_managers) < 2:
        return _skip(check, "the intent has no standby SM (one subnet manager)")
    states: dict[str, tuple[str, int | None]] = {}
    for s in ctx.latest:
        if s.metric == "sm_state":
            prio = s.label("priority")
            if s.device not in states or str(s.value) == "master":
                states[s.device] = (str(s.value), int(prio) if prio and prio.isdigit() else None)
    if not states:
        return CheckResult(check.id, "unknown", message="no sminfo answers (needs sminfo on an SM host)")
    master = _master(ctx)
    mprio = states[master][1] if master else None
    out: list[Finding] = []
    for sm in ib.subnet_managers:
        if sm.device == master:
            continue
        st, sprio = states.get(sm.device, ("absent", None))
        if st != "standby":
            out.append(Finding(check.id, check.severity, sm.device, None, value=st, threshold="standby",
                               hint=check.hint, message=f"standby SM {sm.device} is not ready: {st}"))
        elif mprio is not None and sprio is not None and sprio > mprio:
            out.append(Finding(check.id, check.severity, sm.device, None, value=sprio,
                               threshold=f"<= {mprio}", hint=check.hint,
                               message=f"standby SM {sm.device} has priority {sprio} above the "
                                       f"master's {mprio}"))
    return out


# --------------------------------------------------------------------------- SHARP
@analyzer("sharp_health")
def sharp_health(check: Check, ctx: Context) -> list[Finding] | CheckResult:
    """The aggregation manager runs, and each Quantum switch shows exactly one aggregation node."""
    ib = ctx.fabric.ib
    if ctx.fabric.fabric.technology != "infiniband" or ib is None or not ib.sharp.enabled:
        return _skip(check, "SHARP is not enabled in the intent")
    out: list[Finding] = []
    am = ib.sharp.am_host
    services = [s for s in ctx.latest if s.metric == "service_state" and s.label("service") == "sharp_am"]
    if am is not None and ctx.polls(am):  # with --shard, the AM host's shard reports it
        mine = [s for s in services if s.device == am]
        if not mine and am not in ctx.latest.samples:
            return CheckResult(check.id, "unknown", message=f"no telemetry from the AM host {am}")
        if not mine:
            out.append(Finding(check.id, "unknown", am, None, value=None, threshold="active", hint=check.hint,
                               message=f"sharp_am state on {am} not reported"))
        elif mine[0].value != "active":
            out.append(Finding(check.id, "critical", am, None, value=mine[0].value, threshold="active",
                               hint=check.hint, message=f"sharp_am is {mine[0].value} on {am}"))
    links = [s for s in ctx.latest if s.metric == "ib_link"]
    if links:
        by_guid, _ = _ib_end_names(ctx)
        count: dict[str, set[str]] = {sw.name: set() for sw in ctx.fabric.switches}
        for s in links:
            if not _is_an(s):
                continue
            local_is_an = AN_DESCRIPTION in (s.label("local_desc") or "").lower()
            side, an_side = ("remote", "local") if local_is_an else ("local", "remote")
            sw_guid = _norm_guid(s.label(f"{side}_guid"))
            sw = by_guid.get(sw_guid or "", (s.device, None))[0] if sw_guid else s.device
            if sw in count:
                count[sw].add(s.label(f"{an_side}_guid") or "?")
        for sw, ans in sorted(count.items()):
            if len(ans) != 1:
                out.append(Finding(check.id, "critical" if not ans else "warning", sw, None, value=len(ans),
                                   threshold="== 1", hint=check.hint,
                                   message=f"{sw} shows {len(ans)} SHARP aggregation node(s), expected 1"))
    return out


# --------------------------------------------------------------------------- configuration drift
@analyzer("config_drift")
def config_drift(check: Check, ctx: Context) -> list[Finding] | CheckResult:
    """Running configs (``--running DIR/<device>/<file>``) vs the rendered intent, with the same diff as
    ``fabriccfg diff`` and push (:func:`fabriccfg.render.diff.diff_device`)."""
    running = ctx.running_configs
    if not running:
        return CheckResult(check.id, "unknown",
                           message="no running configs available "
                                   "(pass --running DIR/<device>/<file>, e.g. a push run's backups)")
    try:
        from fabriccfg.render.diff import diff_device
        from fabriccfg.render.engine import render_device
    except ImportError as exc:
        return CheckResult(check.id, "unknown", message=f"config diff not available: {exc}")
    out: list[Finding] = []
    compared = 0
    for device, files in sorted(running.items()):
        dev = ctx.fabric.devices.get(device)
        if dev is None:
            continue
        try:
            intended = render_device(ctx.fabric, device).files
            if not intended:
                continue
            d = diff_device(dev.platform, intended, {k: v for k, v in files.items() if k in intended})
        except Exception as exc:  # one device's odd config must not stop the others
            out.append(Finding(check.id, "unknown", device, None, message=f"cannot diff: {exc}"[:300],
                               hint=check.hint))
            continue
        compared += 1
        if not d.changed:
            continue
        n = len(d.commands) or len(d.patch) or len(d.files) or 1
        what = "command(s)" if d.commands else "patch operation(s)" if d.patch else "file(s)"
        out.append(Finding(check.id, check.severity, device, None, value=n, threshold="== 0", hint=check.hint,
                           message=f"{device}: {n} {what} of the intent missing from the running config",
                           details={"diff": d.text.splitlines()[:40]}))
    if not compared and not out:
        return CheckResult(check.id, "unknown", message="no running config matched a rendered device")
    return out
