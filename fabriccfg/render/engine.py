"""Render device configs from a validated fabric: one Jinja2 environment, one spec per platform.

The platform's ``RENDER`` spec (:class:`~fabriccfg.render.spec.RenderSpec`) names the files
and computes the context; the engine only picks templates (a user ``--templates`` folder first,
then the ``templates/`` each platform package ships), renders with StrictUndefined and returns the
texts. Output is deterministic: same fabric, byte-identical files.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import jinja2

from fabriccfg import catalog, registry
from fabriccfg.render.filters import FILTERS
from fabriccfg.render.spec import RenderSpec
from fabriccfg.text import LINE_BREAKS, count_lines, first_unsafe

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric



class RenderError(Exception):
    """A device cannot be rendered (unknown device, template error); the message says which."""


class UnsafeValueError(jinja2.TemplateRuntimeError):
    """A ``{{ }}`` expression produced text with a line break, control or format character.

    Defence in depth behind the inventory's safe-text type: every expression of every template lands on
    one line, so a value that would start a new line (a new device command) is refused, whatever field or
    context entry it came from.
    """


def one_line(value: Any) -> Any:
    """Jinja ``finalize`` hook: pass every expression's value through unless its text is unsafe."""
    if isinstance(value, str):
        bad = first_unsafe(value)
        if bad is not None:
            raise UnsafeValueError(
                f"error[unsafe-text]: refusing to render {bad.describe()} from the value {value[:80]!r}; "
                "every template expression must stay on one line")
    return value


def _label(name: str) -> str:
    """A device name for a message: quoted when it holds unsafe text (only if validation was bypassed)."""
    return name if first_unsafe(name) is None else repr(name)


def _template_line(tb: TracebackType | None, template: str) -> str:
    """``eos/config.txt.j2:1``: the innermost template frame of a render traceback (Jinja rewrites them),
    named as the spec names ``template`` (a package's folder is ``templates/``, not ``eos/``)."""
    where = ""
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.endswith(".j2"):
            shown = template if Path(name).name == Path(template).name else Path(name).name
            where = f"{shown}:{tb.tb_lineno}"
        tb = tb.tb_next
    return where


def check_output(device: str, name: str, text: str) -> None:
    """Rendered files may break lines only with ``\\n``: then every consumer (``str.splitlines``,
    hier-config, netmiko, the device) sees the same lines as the template author did."""
    bad = first_unsafe(text.replace("\n", ""))
    if bad is not None:
        line = text.count("\n", 0, text.find(bad.char)) + 1
        what = "line break" if bad.char in LINE_BREAKS else "character"
        raise RenderError(f"{device}: {name}:{line}: error[unsafe-text]: rendered text holds "
                          f"{bad.describe()}; refusing a {what} that some consumers would split on or hide")


@dataclass(frozen=True)
class RenderedDevice:
    name: str
    platform: str
    files: dict[str, str]

    @property
    def lines(self) -> int:
        return sum(count_lines(text) for text in self.files.values())


@lru_cache(maxsize=8)
def environment(templates_dir: str | None = None) -> jinja2.Environment:
    """The Jinja2 environment: user templates first, shipped ones second; cached per folder."""
    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader(str(templates_dir))] if templates_dir else []
    loaders.append(jinja2.PrefixLoader(dict(shipped_templates())))
    # configs, not HTML: autoescaping would corrupt them (values are validated SafeText instead)
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        finalize=one_line,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # noqa: S701
        auto_reload=False,
    )
    env.filters.update(FILTERS)
    return env


def render_spec(platform: str) -> RenderSpec | None:
    """The platform's render spec, or None when it renders nothing (MQM8790, unknown platform)."""
    try:
        spec = registry.render(platform)
    except KeyError:
        return None
    return spec if isinstance(spec, RenderSpec) else None


@lru_cache(maxsize=1)
def shipped_templates() -> tuple[tuple[str, jinja2.FileSystemLoader], ...]:
    """Template folder name (``eos`` of ``eos/config.txt.j2``) -> the shipping package's ``templates/``,
    for every registered platform; the first platform to ship a folder owns it."""
    folders: dict[str, jinja2.FileSystemLoader] = {}
    for name in catalog.names():
        spec = render_spec(name)
        if spec is None or spec.templates is None:
            continue
        for template in spec.files.values():
            folders.setdefault(template.split("/", 1)[0], jinja2.FileSystemLoader(str(spec.templates)))
    return tuple(folders.items())


def _render(env: jinja2.Environment, fabric: Fabric, device: Device,
            spec: RenderSpec | None) -> RenderedDevice | None:
    if spec is None or (spec.applies is not None and not spec.applies(fabric, device)):
        return None
    ctx = spec.context(fabric, device)
    wanted = list(spec.select(ctx)) if spec.select is not None else list(spec.files)
    files: dict[str, str] = {}
    for name in wanted:
        try:
            text = env.get_template(spec.files[name]).render(ctx)
        except UnsafeValueError as exc:
            where = _template_line(exc.__traceback__, spec.files[name]) or spec.files[name]
            raise RenderError(f"{_label(device.name)}: {where}: {exc}") from None
        except jinja2.TemplateError as exc:
            where = f" ({exc.filename}:{exc.lineno})" if isinstance(exc, jinja2.TemplateSyntaxError) else ""
            raise RenderError(f"{_label(device.name)}: template {spec.files[name]}{where}: {exc}") from exc
        check_output(_label(device.name), name, text)
        files[name] = text
    if not files:
        return None
    return RenderedDevice(device.name, device.platform, files)


def render_device(fabric: Fabric, name: str, templates_dir: str | Path | None = None) -> RenderedDevice:
    """Render one device; a device whose platform has no config gets an empty ``files``."""
    device = fabric.devices.get(name)
    if device is None:
        raise RenderError(f"no device named {name!r} in the inventory")
    env = environment(str(templates_dir) if templates_dir else None)
    got = _render(env, fabric, device, render_spec(device.platform))
    return got if got is not None else RenderedDevice(device.name, device.platform, {})


def render_fabric(
    fabric: Fabric,
    devices: Iterable[str] | None = None,
    role: str | None = None,
    templates_dir: str | Path | None = None,
) -> list[RenderedDevice]:
    """Render every device that has a config (optionally only ``devices`` and/or ``role``), by name."""
    env = environment(str(templates_dir) if templates_dir else None)
    if devices is not None:
        wanted = list(dict.fromkeys(devices))
        missing = [n for n in wanted if n not in fabric.devices]
        if missing:
            raise RenderError(f"no device named {', '.join(map(repr, missing))} in the inventory")
        chosen = [fabric.devices[n] for n in wanted]
    else:
        chosen = list(fabric.devices.values())
    if role is not None:
        chosen = [d for d in chosen if d.role == role]
    specs = {platform: render_spec(platform) for platform in {d.platform for d in chosen}}
    # devices of platforms without a config (MQM8790: most of an IB fabric) drop out before the sort
    out = []
    for device in sorted([d for d in chosen if specs[d.platform] is not None], key=attrgetter("name")):
        got = _render(env, fabric, device, specs[device.platform])
        if got is not None:
            out.append(got)
    return out
