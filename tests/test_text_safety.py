"""Issue 10 §1: one definition of a line break, safe text on every inventory string, and a renderer that
refuses to put a line break into a one-line position.

Oracles: CPython's own ``str.splitlines`` and ``unicodedata`` tables (not our code) for what a line break and
a control/format character are; the sweep checks every separator code point through every text field of
every platform, through validation and, with validation bypassed, through render.
"""

from __future__ import annotations

import ast
import copy
import json
import sys
import types
import typing
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

import fabriccfg
from fabriccfg import text as fctext
from fabriccfg.inventory.load import loads
from fabriccfg.inventory.models import Fabric
from fabriccfg.render.engine import RenderError, render_fabric

ROOT = Path(fabriccfg.__file__).parent
BREAKS = sorted(fctext.LINE_BREAKS)
CATEGORIES = {"Cc", "Cf", "Zl", "Zp"}
ALL_UNSAFE = [chr(c) for c in range(sys.maxunicode + 1)
              if chr(c) in fctext.LINE_BREAKS or unicodedata.category(chr(c)) in CATEGORIES]
# render sweep: every separator, plus one of each other kind (the per-code-point check of the hook is
# exhaustive below; rendering 230 code points x every field x every platform would cost minutes)
RENDER_SWEEP = [*BREAKS, "\t", "\x00", "\x1b", "\x7f", "\u200b", "\u202e", "\u2066", "\ufeff", "\U000e0001"]
MARK = "injected-by-sweep"


# --------------------------------------------------------------------------- the definition
def test_line_breaks_are_exactly_what_str_splitlines_breaks_on() -> None:
    found = {chr(c) for c in range(sys.maxunicode + 1) if len(f"a{chr(c)}b".splitlines()) == 2}
    assert found == set(fctext.LINE_BREAKS)
    assert fctext.split_lines("a\r\nb\u2028c\x85d") == ["a", "b", "c", "d"]
    assert fctext.count_lines("a\nb") == 2


def test_unsafe_is_every_break_and_every_cc_cf_zl_zp_code_point() -> None:
    for c in range(sys.maxunicode + 1):
        ch = chr(c)
        want = ch in fctext.LINE_BREAKS or unicodedata.category(ch) in CATEGORIES | {"Cs"}
        got = fctext.first_unsafe(f"ab{ch}c")
        assert (got is not None) == want, f"U+{c:04X}"
        if got is not None:
            assert got.index == 2 and got.char == ch
    assert len(ALL_UNSAFE) > 200  # 65 Cc + Zl + Zp + 160-odd Cf in any recent Unicode


def test_code_points_are_named() -> None:
    assert fctext.first_unsafe("x\u2028").describe() == "U+2028 LINE SEPARATOR (a line break)"  # type: ignore[union-attr]
    assert fctext.first_unsafe("x\x85").describe() == "U+0085 NEXT LINE (NEL) (a line break)"  # type: ignore[union-attr]
    assert fctext.first_unsafe("\u202e").describe() == (  # type: ignore[union-attr]
        "U+202E RIGHT-TO-LEFT OVERRIDE (an invisible format character)")
    for ch in ALL_UNSAFE:
        name = fctext.first_unsafe(ch).name  # type: ignore[union-attr]
        assert name and (unicodedata.name(ch, "") in ("", name))


def test_text_module_is_floor_zero() -> None:
    tree = ast.parse((ROOT / "text.py").read_text())
    imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    imported += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert not [m for m in imported if m.split(".")[0] == "fabriccfg"], imported


# Splitting on "\n" alone disagrees with str.splitlines (the one definition). Each exception says why it is
# still right: it reads an SSH terminal stream, where only "\n" ends a line and nothing is split
# into commands.
_SPLIT_ALLOWED = {
    ("connect.py", "find"): "terminal stream: finds the end of a device echo; lines sent are one-line",
    ("connect.py", "rsplit"): "terminal stream: drops the prompt line from one command's output",
    ("connect.py", "rfind"): "terminal stream: the prompt is the last line of what the device sent",
    ("mock/shell.py", "count"): "the mock's `wc -l`, which counts newline characters as POSIX says",
    ("render/engine.py", "count"): "line number in an error message for a file whose only breaks are \\n",
}


def _line_splits() -> Iterator[tuple[str, int, str, str]]:
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            arg = node.args[0] if node.args else None
            literal = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else ""
            if set(literal) & fctext.LINE_BREAKS and node.func.attr in (
                    "split", "rsplit", "partition", "rpartition", "count", "find", "rfind", "index"):
                yield rel, node.lineno, node.func.attr, ast.unparse(node)
            elif (node.func.attr == "split" and isinstance(node.func.value, ast.Name)
                  and node.func.value.id == "re"):
                pattern = literal if literal else (
                    node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else "")
                if "\\n" in str(pattern) or "\n" in str(pattern):
                    yield rel, node.lineno, "re.split", ast.unparse(node)


def test_every_line_split_uses_the_one_definition() -> None:
    """``str.splitlines`` / ``fabriccfg.text.split_lines`` everywhere; splits on ``"\\n"`` only as listed."""
    bad = [f"{rel}:{line}: {code}" for rel, line, attr, code in _line_splits()
           if (rel, attr) not in _SPLIT_ALLOWED]
    assert not bad, "split lines with fabriccfg.text.split_lines:\n" + "\n".join(bad)
    used = {(rel, attr) for rel, _, attr, _ in _line_splits()}
    assert set(_SPLIT_ALLOWED) <= used, "stale entries in _SPLIT_ALLOWED"


# --------------------------------------------------------------------------- every str field is safe text
def _models(root: type[BaseModel]) -> list[type[BaseModel]]:
    seen: list[type[BaseModel]] = []

    def visit(tp: Any) -> None:
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if tp in seen:
                return
            seen.append(tp)
            for info in tp.model_fields.values():
                visit(info.annotation)
        for arg in typing.get_args(tp):
            visit(arg)

    visit(root)
    return seen


def _bad_values(tp: Any, bad: str) -> list[Any]:
    """One value of type ``tp`` per str position in it, with ``bad`` at that position."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is Annotated:
        return _bad_values(args[0], bad)
    if origin is Literal or (isinstance(tp, type) and issubclass(tp, BaseModel)):
        return []
    if origin in (typing.Union, types.UnionType):
        return [v for a in args if a is not type(None) for v in _bad_values(a, bad)]
    if origin in (list, tuple, set, frozenset):
        return [[v] for v in _bad_values(args[0], bad)]
    if origin is dict:
        return ([{k: "ok"} for k in _bad_values(args[0], bad)]
                + [{"ok": v} for v in _bad_values(args[1], bad)])
    if tp is str:
        return [bad]
    return []


def _field_type(info: Any) -> Any:
    return Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation


def _text_fields() -> list[tuple[type[BaseModel], str]]:
    return [(m, name) for m in _models(Fabric) for name, info in m.model_fields.items()
            if _bad_values(info.annotation, "x")]


def test_every_str_field_of_the_inventory_is_safe_text() -> None:
    """Walks the models: a future ``str`` field that is not safe text fails here."""
    checked = 0
    for model, name in _text_fields():
        info = model.model_fields[name]
        adapter: TypeAdapter[Any] = TypeAdapter(_field_type(info))
        for value in _bad_values(info.annotation, "ok\u2028x"):
            with pytest.raises(ValidationError) as err:
                adapter.validate_python(value)
            types_ = {e["type"] for e in err.value.errors()}
            assert "unsafe-text" in types_, f"{model.__name__}.{name} accepts {value!r} ({types_})"
            checked += 1
    assert checked >= 30


# --------------------------------------------------------------------------- the sweep fabrics
ROCE: dict[str, Any] = {
    "fabric": {"name": "t-roce", "technology": "roce", "link_speed": "400G", "description": "lab fabric"},
    "credentials": {
        "ssh": {"username": "admin", "password": "env:SSH_PW", "key_file": "file:/keys/id", "enable_secret":
                "env:EN"},
        "snmp": {"version": "3", "user": "mon", "auth_key": "env:SNMP_A", "priv_key": "env:SNMP_P"},
        "known_hosts": "/etc/fabriccfg/known_hosts",
    },
    "switches": [
        {"name": f"leaf{n}", "platform": platform, "model": model, "role": "leaf", "ports": 32, "rail": n - 1,
         "asic": asic, "os_release": release, "description": f"rail {n - 1} leaf", "mgmt": f"192.0.2.1{n}",
         "breakouts": {port: "2x200G"}}
        for n, platform, model, asic, release, port in (
            (1, "cumulus-nvue", "SN5600", "spectrum-4", "5.9", "swp32"),
            (2, "sonic", "SN5600", "spectrum-4", "202305", "Ethernet248"),
            (3, "eos", "7060X5-64", "tomahawk-4", "4.31", "Ethernet32/1"),
            (4, "nxos", "N9364D-GX2A", "cloudscale-gx2", "10.3", "Ethernet1/32"),
        )
    ],
    "hosts": [{"name": "gpu1", "platform": "connectx-host", "mgmt": "192.0.2.101", "description": "node",
               "nics": [{"name": f"mlx5_{r}", "netdev": f"ens{r + 1}f0np0", "rail": r} for r in range(4)]}],
    "links": [{"a": f"gpu1:mlx5_{r}", "b": f"leaf{r + 1}:{port}", "length_m": 3}
              for r, port in enumerate(("swp1", "Ethernet0", "Ethernet1/1", "Ethernet1/1"))],
}
IB: dict[str, Any] = {
    "fabric": {"name": "t-ib", "technology": "infiniband", "link_speed": "HDR", "description": "ib lab"},
    "credentials": {"ssh": {"username": "root", "key_file": "file:/keys/id"},
                    "snmp": {"version": "2c", "community": "env:COMM"}, "known_hosts": "/kh"},
    "ib": {"routing_engines": ["ftree"], "subnet_managers": [{"device": "sm1", "priority": 15}],
           "sharp": {"enabled": True, "am_host": "sm1"}, "log_file": "/var/log/opensm.log",
           "partitions": [{"name": "compute", "pkey": 257, "ipoib": True,
                           "members": [{"device": "ALL_CAS"}, {"device": "gpu1"}]}]},
    "management_hosts": [{"name": "sm1", "platform": "opensm-host", "mgmt": "198.51.100.2", "hca": "mlx5_0",
                          "port_guid": "0x1070fd0300aa0001", "description": "sm"}],
    "switches": [{"name": "ib1", "platform": "mlnxos-ib", "model": "MQM8700", "role": "leaf", "ports": 40,
                  "asic": "quantum", "guid": "0xb8599f0300fc0001", "mgmt": "198.51.100.9",
                  "os_release": "3.10",
                  "description": "ib leaf", "breakouts": {"1/9": "2x100G"}}],
    "hosts": [{"name": "gpu1", "platform": "connectx-host", "mgmt": "198.51.100.101", "description": "node",
               "nics": [{"name": "mlx5_0", "netdev": "ib0", "rail": 0, "guid": "0x1070fd0300010000"}]}],
    "links": [{"a": "gpu1:mlx5_0", "b": "ib1:1/1", "length_m": 3}, {"a": "sm1:mlx5_0", "b": "ib1:1/20"}],
}
FABRICS = {"roce": ROCE, "ib": IB}
PLATFORMS = {"cumulus-nvue", "sonic", "eos", "nxos", "connectx-host", "mlnxos-ib", "opensm-host"}

KEY = "<key>"
PathT = tuple[Any, ...]


def _is_text(info: Any) -> bool:
    return bool(_bad_values(info.annotation, "x"))


def _text_paths(obj: Any, path: PathT = ()) -> Iterator[tuple[PathT, type[BaseModel], str]]:
    """Every text value of a validated model: (path, owning model, field); dict keys as (..., key, KEY)."""
    for name, info in type(obj).model_fields.items():
        value = getattr(obj, name)
        here = (*path, name)
        if isinstance(value, BaseModel):
            yield from _text_paths(value, here)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, BaseModel):
                    yield from _text_paths(item, (*here, i))
                elif isinstance(item, str) and _is_text(info):
                    yield (*here, i), type(obj), name
        elif isinstance(value, dict) and _is_text(info):
            for k in value:
                yield (*here, k, KEY), type(obj), name
                yield (*here, k), type(obj), name
        elif isinstance(value, str) and _is_text(info):
            yield here, type(obj), name


def _spoil(value: str, ch: str) -> str:
    return f"{value[:1]}{ch}{MARK}{ch}{value[1:]}"


def _set_data(data: Any, path: PathT, ch: str) -> None:
    *parent, last = path
    for part in parent[:-1] if last == KEY else parent:
        data = data[part]
    if last == KEY:
        key = parent[-1]
        data[_spoil(key, ch)] = data.pop(key)
    else:
        data[last] = _spoil(data[last], ch)


def _get_model(obj: Any, path: PathT) -> Any:
    for part in path:
        obj = obj[part] if isinstance(part, int) or isinstance(obj, dict) else getattr(obj, part)
    return obj


def _set_model(obj: Any, path: PathT, ch: str) -> None:
    """The same change on a validated model, bypassing validation (as a buggy caller or plugin could)."""
    *parent, last = path
    for part in parent[:-1] if last == KEY else parent:
        obj = obj[part] if isinstance(part, int) or isinstance(obj, dict) else getattr(obj, part)
    if last == KEY:
        key = parent[-1]
        obj[_spoil(key, ch)] = obj.pop(key)
    elif isinstance(obj, (list, dict)):
        obj[last] = _spoil(obj[last], ch)
    else:
        setattr(obj, last, _spoil(getattr(obj, last), ch))


@pytest.fixture(scope="module")
def sweep_paths() -> dict[str, list[PathT]]:
    out: dict[str, list[PathT]] = {}
    for tech, data in FABRICS.items():
        fabric = Fabric.model_validate(copy.deepcopy(data))
        out[tech] = [p for p, _, _ in _text_paths(fabric)]
    return out


def test_sweep_fabrics_are_valid_and_cover_every_text_field_and_platform() -> None:
    covered: set[tuple[type[BaseModel], str]] = set()
    platforms: set[str] = set()
    for data in FABRICS.values():
        result = loads(__import__("yaml").safe_dump(data), "sweep.yaml")
        assert result.ok, [f.format() for f in result.findings if f.severity == "error"]
        assert result.fabric is not None
        covered |= {(m, f) for _, m, f in _text_paths(result.fabric)}
        platforms |= {d.name for d in render_fabric(result.fabric)} and {
            d.platform for d in render_fabric(result.fabric)}
    missing = [f"{m.__name__}.{f}" for m, f in _text_fields() if (m, f) not in covered]
    assert not missing, f"add a value for these text fields to the sweep fabrics: {missing}"
    assert platforms == PLATFORMS


@pytest.mark.parametrize("tech", sorted(FABRICS))
def test_validation_refuses_every_unsafe_code_point_in_every_text_field(
        tech: str, sweep_paths: dict[str, list[PathT]]) -> None:
    data = copy.deepcopy(FABRICS[tech])
    assert len(sweep_paths[tech]) >= 20
    for path in sweep_paths[tech]:
        for ch in ALL_UNSAFE:
            spoiled = copy.deepcopy(data) if path[-1] == KEY else data
            saved = None if path[-1] == KEY else _get(data, path)
            _set_data(spoiled, path, ch)
            try:
                Fabric.model_validate(spoiled)
            except ValidationError as exc:
                hits = [e for e in exc.errors() if e["type"] == "unsafe-text"]
                where = tuple(p for p in path if p != KEY)[:-1]
                assert hits and tuple(hits[0]["loc"][:len(where)]) == where, (path, f"U+{ord(ch):04X}")
                assert f"U+{ord(ch):04X}" in hits[0]["msg"]
            else:
                pytest.fail(f"{'.'.join(map(str, path))} accepted U+{ord(ch):04X}")
            finally:
                if saved is not None:
                    _put(data, path, saved)


def _get(data: Any, path: PathT) -> Any:
    for part in path:
        data = data[part]
    return data


def _put(data: Any, path: PathT, value: Any) -> None:
    _get(data, path[:-1])[path[-1]] = value


@pytest.mark.parametrize("tech", sorted(FABRICS))
def test_render_refuses_every_separator_when_validation_is_bypassed(
        tech: str, sweep_paths: dict[str, list[PathT]]) -> None:
    base = Fabric.model_validate(copy.deepcopy(FABRICS[tech]))
    baseline = {d.name: d.files for d in render_fabric(base)}
    refused: dict[str, set[PathT]] = {}
    for path in sweep_paths[tech]:
        for ch in RENDER_SWEEP:
            fabric = Fabric.model_validate(copy.deepcopy(FABRICS[tech]))
            devices = [*fabric.switches, *fabric.hosts, *fabric.management_hosts]
            original = {id(d): d.name for d in devices}
            _set_model(fabric, path, ch)
            for device in devices:
                try:
                    got = render_fabric(fabric, devices=[device.name])
                except RenderError as exc:
                    msg = str(exc)
                    assert "unsafe-text" in msg and f"U+{ord(ch):04X}" in msg, (path, msg)
                    assert fctext.first_unsafe(msg) is None, msg  # the error itself stays one line
                    refused.setdefault(device.platform, set()).add(path)
                    continue
                for rendered in got:
                    before = baseline[original[id(device)]]
                    for name, text in rendered.files.items():
                        lines = fctext.split_lines(text)
                        assert not [ln for ln in lines if ln.startswith(MARK)], (path, ch, name)
                        assert MARK not in text, (path, f"U+{ord(ch):04X}", name)
                        # a spoiled key or link end may match nothing (fewer lines); never an extra line
                        assert len(lines) <= len(fctext.split_lines(before[name])), (path, name)
    # the hook is really in every platform's path: each refused a spoiled field of its own device
    for dev in [*base.switches, *base.hosts, *base.management_hosts]:
        if dev.name not in baseline:
            continue
        section = {"switch": "switches", "host": "hosts", "sm-host": "management_hosts"}[dev.kind]
        index = [d.name for d in getattr(base, section)].index(dev.name)
        own = {p for p in refused.get(dev.platform, set()) if p[:2] == (section, index)}
        values = [_get_model(base, p) for p in sweep_paths[tech]
                  if p[:2] == (section, index) and p[-1] != KEY]
        shown = [v for v in values if len(v) >= 4 and any(v in text for text in baseline[dev.name].values())]
        # SONiC's CONFIG_DB carries no free text of the inventory: nothing to refuse there
        assert own or not shown, (dev.platform, shown, sorted(refused.get(dev.platform, set())))


def test_loader_names_the_code_point_with_its_position() -> None:
    for ch in BREAKS:
        data = copy.deepcopy(ROCE)
        data["switches"][2]["model"] = "MODEL"
        # JSON escapes are YAML double-quoted escapes: the value stays on one line of the file
        text = __import__("yaml").safe_dump(data, sort_keys=False).replace(
            "model: MODEL", "model: " + json.dumps(f"7060X5-64{ch}hostname PWNED{ch}!"))
        result = loads(text, "inv.yaml")
        errors = [f for f in result.findings if f.severity == "error"]
        assert [f.rule for f in errors] == ["unsafe-text"]
        line = next(n for n, ln in enumerate(text.splitlines(), 1) if "PWNED" in ln)
        want = f"U+{ord(ch):04X} {fctext.first_unsafe(ch).name}"  # type: ignore[union-attr]
        assert errors[0].format().startswith(f"inv.yaml:{line}:") and want in errors[0].format()
        assert fctext.first_unsafe(errors[0].format()) is None  # the message itself is one line


def test_profile_names_are_safe_text() -> None:
    data: dict[str, Any] = copy.deepcopy(ROCE)
    data["profiles"] = {"leaf\u2028x": {"role": "leaf"}}
    data["switches"][0]["profile"] = "leaf\u2028x"
    result = loads(__import__("yaml").safe_dump(data), "inv.yaml")
    hits = [f for f in result.findings if f.rule == "unsafe-text"]
    assert {f.path for f in hits} == {("profiles", "leaf\u2028x"), ("switches", 0, "profile")}
    assert all("U+2028 LINE SEPARATOR" in f.message for f in hits)


# --------------------------------------------------------------------------- bypass attempts
def test_a_context_value_injected_directly_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A platform plugin (or a bug) that puts unchecked text into the template context cannot add a line."""
    import dataclasses

    from fabriccfg import registry


    module = registry.submodule("eos", "render")
    spec = module.RENDER

    def context(fabric: Any, device: Any) -> dict[str, Any]:
        return {**spec.context(fabric, device), "fabric_name": "lab\u2029hostname PWNED"}

    monkeypatch.setattr(module, "RENDER", dataclasses.replace(spec, context=context))
    fabric = Fabric.model_validate(copy.deepcopy(ROCE))
    with pytest.raises(RenderError) as err:
        render_fabric(fabric, devices=["leaf3"])
    msg = str(err.value)
    assert msg.startswith("leaf3: eos/config.txt.j2:1: error[unsafe-text]:"), msg
    assert "U+2029 PARAGRAPH SEPARATOR" in msg


def test_a_user_template_cannot_emit_a_line_break_through_the_cli(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from fabriccfg.cli import app

    inv = tmp_path / "inv.yaml"
    inv.write_text(__import__("yaml").safe_dump(ROCE))
    (tmp_path / "tpl" / "eos").mkdir(parents=True)
    (tmp_path / "tpl" / "eos" / "config.txt.j2").write_text(
        'hostname {{ device.name }}\n! {{ device.model | replace("-", "\\u0085") }}\n')
    res = CliRunner().invoke(app, ["render", str(inv), "-o", str(tmp_path / "out"), "-d", "leaf3",
                                   "--templates", str(tmp_path / "tpl")])
    assert res.exit_code == 1, res.output
    assert "leaf3: eos/config.txt.j2:2: error[unsafe-text]" in res.output
    assert "U+0085 NEXT LINE (NEL)" in res.output
    assert not (tmp_path / "out" / "leaf3").exists()


def test_the_ssh_session_refuses_to_type_a_line_break() -> None:
    from fabriccfg.connect import one_line

    one_line("interface Ethernet1/1")
    for ch in BREAKS:
        with pytest.raises(ValueError, match=f"U\\+{ord(ch):04X}"):
            one_line(f"description a{ch}hostname PWNED")
