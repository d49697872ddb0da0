"""The fabric intent: what the operator wants, validated field by field.

Field-level checks live here (types, ranges, safe text, secret references); checks that relate
several objects (lossless class end to end, SM election, cabling) are rules in ``rules/``.
Every model forbids unknown keys so a typo is an error, not a silently ignored setting.
"""

from __future__ import annotations

from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from fabriccfg.inventory.types import (
    AbsPath,
    Address,
    Dscp,
    GpuHostPlatform,
    Guid,
    Name,
    Percent,
    Priority,
    SafeText,
    SecretRef,
    SmHostPlatform,
    Speed,
    SwitchPlatform,
)

Role = Literal["leaf", "spine", "core"]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


# --------------------------------------------------------------------------- fabric + credentials
class FabricInfo(Model):
    name: Name
    technology: Literal["infiniband", "roce"]
    link_speed: Speed = Field(description="Default port speed in Gb/s (HDR = 200, 400G RoCE = 400)")
    rail_optimized: bool = Field(True, description="Each NIC rail lands on its rail's leaf")
    description: SafeText = ""


class SshCredentials(Model):
    username: SafeText = "admin"
    password: SecretRef | None = None
    key_file: SecretRef | None = None
    enable_secret: SecretRef | None = None


class SnmpCredentials(Model):
    version: Literal["2c", "3"] = "3"
    community: SecretRef | None = None
    user: SafeText | None = None
    auth_protocol: Literal["sha", "sha224", "sha256", "sha384", "sha512"] = "sha"
    auth_key: SecretRef | None = None
    priv_protocol: Literal["aes", "aes192", "aes256"] = "aes"
    priv_key: SecretRef | None = None
    port: int = Field(161, ge=1, le=65535)

    @model_validator(mode="after")
    def _complete(self) -> SnmpCredentials:
        if self.version == "2c" and not self.community:
            raise ValueError("SNMP v2c needs 'community' (as env:NAME or file:PATH)")
        if self.version == "3" and not (self.user and self.auth_key and self.priv_key):
            raise ValueError("SNMP v3 needs 'user', 'auth_key' and 'priv_key' (authPriv only)")
        return self


class Credentials(Model):
    ssh: SshCredentials = SshCredentials()
    snmp: SnmpCredentials | None = None
    known_hosts: SafeText | None = Field(
        None,
        description="known_hosts file for strict host-key checking (default: <inventory dir>/known_hosts "
        "if it exists, else ~/.ssh/known_hosts; --known-hosts FILE overrides)",
    )


# --------------------------------------------------------------------------- devices
class SwitchQos(Model):
    """Per-switch deviations from the fabric RoCE intent (rules flag any that break the lossless class)."""

    roce_dscp: Dscp | None = None
    roce_priority: Priority | None = None
    cnp_dscp: Dscp | None = None
    cnp_priority: Priority | None = None
    ecn_enabled: bool | None = None
    pfc_enabled: bool | None = None


class Switch(Model):
    name: Name
    platform: SwitchPlatform
    model: SafeText = ""
    role: Role
    mgmt: Address | None = Field(None, description="Management address (none for MQM8790: no management CPU)")
    ports: int = Field(ge=1, le=256, description="Front-panel port count")
    port_speed: Speed | None = Field(None, description="Default port speed; fabric.link_speed when absent")
    breakouts: dict[SafeText, SafeText] = Field(
        default_factory=dict, description="port -> mode, e.g. '1/5': 2x100G (HDR split) or swp3: 4x100G"
    )
    asic: SafeText | None = Field(
        None, description="ASIC generation, e.g. spectrum-3, spectrum-4, quantum, tomahawk-4"
    )
    guid: Guid | None = Field(None, description="IB switch node GUID")
    rail: int | None = Field(
        None, ge=0, le=63, description="Rail served by this leaf in a rail-optimised fabric"
    )
    pod: int | None = Field(None, ge=0)
    os_release: SafeText | None = Field(
        None, description="Target OS release where syntax differs (SONiC: 202305; Cumulus: '5.9.2', "
                           "default 5.16: docs/inventory.md)"
    )
    description: SafeText = ""
    qos: SwitchQos | None = None

    @property
    def kind(self) -> str:
        return "switch"


class NicQos(Model):
    """Per-NIC deviations from the fabric RoCE intent."""

    trust: Literal["dscp", "pcp"] | None = None
    roce_dscp: Dscp | None = None
    pfc_priorities: list[Priority] | None = None
    cnp_dscp: Dscp | None = None
    cnp_priority: Priority | None = None
    mtu: int | None = Field(None, ge=576, le=9216)


class Nic(Model):
    name: Name = Field(description="RDMA device, e.g. mlx5_0")
    netdev: Name | None = Field(None, description="Linux netdev, e.g. ens1f0np0 (RoCE) or ib0 (IB)")
    rail: int = Field(0, ge=0, le=63)
    speed: Speed | None = None
    guid: Guid | None = Field(None, description="IB port GUID")
    qos: NicQos | None = None


class Host(Model):
    name: Name
    platform: GpuHostPlatform = "connectx-host"
    mgmt: Address | None = None
    role: Literal["gpu"] = "gpu"
    nics: list[Nic] = Field(min_length=1)
    description: SafeText = ""

    @property
    def kind(self) -> str:
        return "host"


class ManagementHost(Model):
    """A Linux host that runs OpenSM and/or the SHARP aggregation manager."""

    name: Name
    platform: SmHostPlatform = "opensm-host"
    mgmt: Address | None = None
    role: Literal["sm"] = "sm"
    hca: Name = Field("mlx5_0", description="HCA cabled into the fabric")
    port_guid: Guid
    description: SafeText = ""

    @property
    def kind(self) -> str:
        return "sm-host"


Device = Switch | Host | ManagementHost


class Link(Model):
    a: SafeText = Field(description="device:port")
    b: SafeText = Field(description="device:port")
    length_m: float | None = Field(None, gt=0, le=10000, description="Cable length in metres (PFC headroom)")
    speed: Speed | None = None

    @field_validator("a", "b")
    @classmethod
    def _endpoint(cls, value: str) -> str:
        device, sep, port = value.partition(":")
        if not sep or not device or not port:
            raise ValueError(f"{value!r} is not an endpoint; write 'device:port'")
        return value

    @property
    def ends(self) -> tuple[tuple[str, str], tuple[str, str]]:
        a_dev, _, a_port = self.a.partition(":")
        b_dev, _, b_port = self.b.partition(":")
        return (a_dev, a_port), (b_dev, b_port)


# --------------------------------------------------------------------------- RoCE intent
class Ecn(Model):
    kmin_bytes: int = Field(150_000, ge=1, description="ECN marking starts (NVIDIA default 150 KB)")
    kmax_bytes: int = Field(1_500_000, ge=1, description="ECN marking at Pmax (NVIDIA default 1.5 MB)")
    pmax_percent: int = Field(100, description="Marking probability at Kmax, 1..100")


class PfcWatchdog(Model):
    enabled: bool = True
    detection_ms: int = Field(200, ge=1, description="SONiC range 100-5000")
    restoration_ms: int = Field(400, ge=1, description="SONiC range 100-60000")
    poll_ms: int = Field(100, ge=1)
    action: Literal["drop", "forward", "alert"] = "drop"


class Dcqcn(Model):
    """ConnectX DCQCN parameters, MLNX_OFED sysfs names and units (roce.md §6.3)."""

    clamp_tgt_rate: int = Field(0, ge=0, le=1)
    clamp_tgt_rate_ati: int = Field(1, ge=0, le=1)
    rpg_time_reset: int = Field(300, ge=1, le=131071, description="us between rate increases")
    rpg_byte_reset: int = Field(32767, ge=0, le=32767, description="bytes between increases")
    rpg_threshold: int = Field(1, ge=1, le=31)
    rpg_max_rate: int = Field(0, ge=0, description="Mb/s, 0 = line rate")
    rpg_ai_rate: int = Field(5, ge=1, description="Mb/s additive increase")
    rpg_hai_rate: int = Field(50, ge=1, description="Mb/s hyper increase")
    rpg_gd: int = Field(11, ge=1, le=15)
    rpg_min_dec_fac: int = Field(50, ge=1, le=100, description="% max decrease per event")
    rpg_min_rate: int = Field(1, ge=1, description="Mb/s")
    rate_to_set_on_first_cnp: int = Field(0, ge=0, description="Mb/s, 0 = current rate")
    dce_tcp_g: int = Field(1019, ge=0, le=1023, description="alpha gain /1024")
    dce_tcp_rtt: int = Field(1, ge=1, le=131071, description="us alpha update period")
    rate_reduce_monitor_period: int = Field(4, ge=1, description="us between rate reductions")
    initial_alpha_value: int = Field(1023, ge=1, le=1023)
    min_time_between_cnps: int = Field(4, ge=0, description="us, NP CNP pacing")


class BufferPolicy(Model):
    model: Literal["dynamic", "static"] = "dynamic"
    headroom_budget_bytes: int | None = Field(
        None, ge=1, description="Per-port headroom budget; the ASIC table default when absent"
    )
    shared_headroom_pool: bool = False
    lossless_pool_percent: Percent = 60


class RoceQos(Model):
    roce_dscp: Dscp = 26
    roce_priority: Priority = 3
    cnp_dscp: Dscp = 48
    cnp_priority: Priority = 6
    roce_bandwidth_percent: Percent = 50
    cnp_strict: bool = True
    ecn: Ecn = Ecn()
    pfc_watchdog: PfcWatchdog = PfcWatchdog()
    switch_mtu: int = Field(9216, ge=1500, le=9216)
    host_mtu: int = Field(4200, ge=1500, le=9216)
    dcqcn: Dcqcn = Dcqcn()
    buffer: BufferPolicy = BufferPolicy()
    mode: Literal["lossless", "lossy"] = "lossless"


# --------------------------------------------------------------------------- IB intent
class PartitionMember(Model):
    device: Name = Field(description="ALL, ALL_CAS, ALL_SWITCHES, SELF, a device name, or a port GUID")
    membership: Literal["full", "limited", "both"] = "full"


class Partition(Model):
    name: Name
    pkey: int = Field(ge=0x0001, le=0x7FFF)
    members: list[PartitionMember] = Field(min_length=1)
    ipoib: bool = False
    mtu: Literal[256, 512, 1024, 2048, 4096] | None = None
    rate: Speed | None = None
    sl: int | None = Field(None, ge=0, le=15)
    defmember: Literal["full", "limited", "both"] | None = None

    @field_validator("pkey", mode="before")
    @classmethod
    def _hex(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                return int(value, 0)
            except ValueError:
                return value
        return value


class SubnetManager(Model):
    device: Name = Field(description="An opensm-host management host, or an mlnxos-ib switch (embedded SM)")
    priority: int = Field(ge=0, le=15)


class Sharp(Model):
    enabled: bool = False
    am_host: Name | None = Field(None, description="Management host that runs sharp_am")


class IbIntent(Model):
    opensm_flavour: Literal["upstream", "mlnx"] = "mlnx"
    routing_engines: list[Name] = Field(default_factory=lambda: ["ftree"], min_length=1)
    lmc: int = Field(0, ge=0, le=7)
    subnet_managers: list[SubnetManager] = Field(default_factory=list)
    sharp: Sharp = Sharp()
    partitions: list[Partition] = Field(default_factory=list)
    node_name_map: bool = True
    sweep_interval_s: int = Field(10, ge=0)
    qos: bool = False
    mtu: Literal[2048, 4096] = 4096
    log_file: AbsPath = "/var/log/opensm.log"


# --------------------------------------------------------------------------- the fabric
class Fabric(Model):
    fabric: FabricInfo
    credentials: Credentials = Credentials()
    switches: list[Switch] = Field(default_factory=list)
    hosts: list[Host] = Field(default_factory=list)
    management_hosts: list[ManagementHost] = Field(default_factory=list)
    links: list[Link] = Field(default_factory=list)
    roce: RoceQos | None = None
    ib: IbIntent | None = None

    @model_validator(mode="after")
    def _intent_matches_technology(self) -> Fabric:
        if self.fabric.technology == "roce" and self.roce is None:
            self.roce = RoceQos()
        if self.fabric.technology == "infiniband" and self.ib is None:
            self.ib = IbIntent()
        return self

    # ----- indexes (built once; the model is treated as read-only after validation)
    @cached_property
    def devices(self) -> dict[str, Device]:
        """Every device by name; duplicates are reported by the ``unique-names`` rule (first wins)."""
        out: dict[str, Device] = {}
        every: list[Device] = [*self.switches, *self.hosts, *self.management_hosts]
        for dev in every:
            out.setdefault(dev.name, dev)
        return out

    def device(self, name: str) -> Device:
        return self.devices[name]

    @cached_property
    def neighbours(self) -> dict[tuple[str, str], tuple[str, str]]:
        """(device, port) -> (peer device, peer port), both directions."""
        out: dict[tuple[str, str], tuple[str, str]] = {}
        for end, link in self.link_by_end.items():
            a, b = link.ends
            out[end] = b if end == a else a
        return out

    @cached_property
    def link_by_end(self) -> dict[tuple[str, str], Link]:
        out: dict[tuple[str, str], Link] = {}
        for link in self.links:
            a, b = link.ends
            out.setdefault(a, link)
            out.setdefault(b, link)
        return out

    @cached_property
    def _links_by_device(self) -> dict[str, list[Link]]:
        out: dict[str, list[Link]] = {}
        for link in self.links:
            a, b = link.ends
            out.setdefault(a[0], []).append(link)
            if b[0] != a[0]:
                out.setdefault(b[0], []).append(link)
        return out

    def device_links(self, device: str) -> list[Link]:
        """Links touching ``device`` (indexed; use this in loops over large fabrics)."""
        return self._links_by_device.get(device, [])
