"""The one config diff, shared by ``fabriccfg diff`` and push: rendered intent vs a running config.

Merge semantics everywhere: what the running config holds and the intent does not manage stays.

- ``cli`` platforms: hier-config 3.x trees built with the platform's :class:`CliDiffSpec` (driver,
  lines to ignore, last-value-wins commands); ``commands`` are the intent lines missing from the
  running config, with their parent sections, ready for ``send_config_set``.
- ``json`` platforms (SONiC CONFIG_DB): an RFC 6902 patch (``jsonpatch``) restricted to the tables,
  keys and fields the intent sets; it only ever adds or replaces.
- ``files`` platforms: the intended files whose content differs.

Invariant (tested): applying ``commands`` / ``patch`` / ``files`` to the running config with
:func:`apply_diff` gives a config whose diff against the intent is empty.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from fabriccfg import catalog
from fabriccfg.render.spec import CliDiffSpec
from fabriccfg.text import split_lines

if TYPE_CHECKING:
    from hier_config import HConfig
    from hier_config.platforms.driver_base import HConfigDriverBase

Style = Literal["cli", "json", "files", "none"]


@dataclass
class DeviceDiff:
    """The difference between one device's intent and its running config."""

    platform: str
    style: Style
    changed: bool = False
    text: str = ""
    """Human-readable, unified-diff style (running -> after applying)."""
    commands: list[str] = field(default_factory=list)
    """cli: lines to send in config mode (indented by section) so running contains the intent."""
    patch: list[dict[str, Any]] = field(default_factory=list)
    """json: RFC 6902 operations (add/replace only) on the running JSON document."""
    files: dict[str, str] = field(default_factory=dict)
    """files: intended files whose content differs from the running ones."""
    patch_file: str | None = None
    """json: the document the patch applies to (e.g. ``config_db.json``)."""

    def as_dict(self) -> dict[str, Any]:
        return {"platform": self.platform, "style": self.style, "changed": self.changed, "text": self.text,
                "commands": self.commands, "patch": self.patch, "files": sorted(self.files)}


def config_style(platform: str) -> Style:
    return catalog.info(platform).config_style


def _cli_spec(platform: str) -> CliDiffSpec:
    from fabriccfg.render.engine import render_spec

    spec = render_spec(platform)
    return spec.cli if spec is not None and spec.cli is not None else CliDiffSpec()


# --------------------------------------------------------------------------- cli (hier-config)
@cache
def _driver(platform: str) -> HConfigDriverBase:
    from hier_config import MatchRule, Platform, get_hconfig_driver
    from hier_config.models import IdempotentCommandsRule, PerLineSubRule

    spec = _cli_spec(platform)
    driver = get_hconfig_driver(Platform[spec.hier_platform])
    driver.rules.per_line_sub.extend(PerLineSubRule(search=rx, replace="") for rx in spec.ignore)
    driver.rules.idempotent_commands[:0] = [
        IdempotentCommandsRule(match_rules=tuple(MatchRule(re_search=rx) for rx in lineage))
        for lineage in spec.idempotent
    ]
    return driver


@cache
def _absent_negations(platform: str) -> re.Pattern[str] | None:
    spec = _cli_spec(platform)
    rx = "|".join(f"(?:{p})" for p in spec.absent_negations)
    return re.compile(rx) if rx else None


def _tree(platform: str, text: str) -> HConfig:
    from hier_config import get_hconfig
    from hier_config.exceptions import DuplicateChildError

    try:
        return get_hconfig(_driver(platform), text)
    except DuplicateChildError:
        return get_hconfig(_driver(platform), _dedupe(platform, text))


def _dedupe(platform: str, text: str) -> str:
    """Drop a line that repeats a sibling (same parent section), with its children.

    hier-config refuses duplicate siblings; a device (or a hand-edited backup) may still print one.
    """
    seen: set[tuple[tuple[str, ...], str]] = set()
    stack: list[tuple[int, str]] = []
    out: list[str] = []
    skip_below: int | None = None
    subs = [(re.compile(rule.search), rule.replace) for rule in _driver(platform).rules.per_line_sub]
    for original in split_lines(text):
        raw = original
        for rx, repl in subs:
            raw = rx.sub(repl, raw)
        line = raw.strip()
        if not line:
            continue
        indent = len(raw) - len(raw.lstrip())
        if skip_below is not None:
            if indent > skip_below:
                continue
            skip_below = None
        while stack and stack[-1][0] >= indent:
            stack.pop()
        key = (tuple(s for _, s in stack), line)
        if key in seen:
            skip_below = indent
            continue
        seen.add(key)
        stack.append((indent, line))
        out.append(raw)
    return "\n".join(out) + "\n"


def _missing(platform: str, want: Any, have: Any, delta: Any) -> None:
    """Add to ``delta`` every line of ``want`` that ``have`` lacks (recursively, keeping parents).

    A negation the device does not print (``CliDiffSpec.absent_negations``) is satisfied when its
    positive form is absent; any other line, negations included, must be present literally.
    """
    neg = want.driver.negation_prefix
    absent = _absent_negations(platform)
    for child in want.children:
        text = child.text
        if text.startswith(neg) and absent is not None and absent.search(text):
            positive = text.removeprefix(neg)
            if have.get_child(equals=positive) is not None or any(
                    c.text.startswith(positive + " ") for c in have.children):
                delta.add_deep_copy_of(child)
            continue
        got = have.get_child(equals=text)
        if got is None:
            delta.add_deep_copy_of(child)
            continue
        if child.children:
            sub = delta.add_child(text)
            _missing(platform, child, got, sub)
            if not sub.children:
                sub.delete()


def _cli_lines(tree: HConfig) -> list[str]:
    return [c.cisco_style_text() for c in tree.all_children_sorted()]


def _diff_cli(platform: str, intended: dict[str, str], running: dict[str, str], out: DeviceDiff) -> None:
    for name in sorted(intended):
        want = _tree(platform, intended[name])
        have = _tree(platform, running.get(name, ""))
        delta = _tree(platform, "")
        _missing(platform, want, have, delta)
        if not delta.children:
            continue
        out.changed = True
        out.commands.extend(delta.dump_simple(sectional_exiting=True))
        # hier-config's tree diff: '-'/'+' marks under their parent sections, order-independent
        after = have.future(delta)
        body = "".join(line + "\n" for line in have.unified_diff(after))
        out.text += f"--- running/{name}\n+++ intended/{name}\n{body}"


def _apply_cli(platform: str, running: dict[str, str], intended: dict[str, str],
               diff: DeviceDiff) -> dict[str, str]:
    out = dict(running)
    if not diff.commands:
        return out
    # commands from _diff_cli come from one intended file per CLI platform (config.txt)
    name = sorted(intended)[0]
    have = _tree(platform, running.get(name, ""))
    after = have.future(_tree(platform, "\n".join(c for c in diff.commands if c.strip() != "exit")))
    out[name] = "\n".join(_cli_lines(after)) + "\n"
    return out


# --------------------------------------------------------------------------- json (CONFIG_DB)
def _load_json(text: str | None, what: str) -> dict[str, Any]:
    if not text or not text.strip():
        return {}
    doc = json.loads(text)
    if not isinstance(doc, dict):
        raise ValueError(f"{what} is not a JSON object")
    return doc


def _projection(intended: Any, running: Any) -> Any:
    """The part of ``running`` at the paths ``intended`` sets (so a diff never removes anything else)."""
    if not isinstance(intended, dict) or not isinstance(running, dict):
        return running
    return {k: _projection(v, running[k]) for k, v in intended.items() if k in running}


def _diff_json(intended: dict[str, str], running: dict[str, str], out: DeviceDiff) -> None:
    import jsonpatch

    for name in sorted(intended):
        want = _load_json(intended[name], f"intended {name}")
        have = _load_json(running.get(name), f"running {name}")
        ops = jsonpatch.make_patch(_projection(want, have), want).patch
        if not ops:
            continue
        out.changed = True
        out.patch_file = name
        out.patch.extend(ops)
        after = jsonpatch.apply_patch(have, ops)
        before_text = split_lines(json.dumps(_projection(want, have), indent=2, sort_keys=True), True)
        after_text = split_lines(json.dumps(_projection(want, after), indent=2, sort_keys=True), True)
        out.text += "".join(difflib.unified_diff(before_text, after_text, fromfile=f"running/{name}",
                                                 tofile=f"intended/{name}"))


# --------------------------------------------------------------------------- files
def _diff_files(intended: dict[str, str], running: dict[str, str], out: DeviceDiff) -> None:
    for name in sorted(intended):
        have = running.get(name)
        if have == intended[name]:
            continue
        out.changed = True
        out.files[name] = intended[name]
        out.text += "".join(difflib.unified_diff(
            split_lines(have or "", True), split_lines(intended[name], True),
            fromfile=f"running/{name}" if have is not None else "/dev/null", tofile=f"intended/{name}"))


# --------------------------------------------------------------------------- entry points
def diff_device(platform: str, intended: dict[str, str], running: dict[str, str]) -> DeviceDiff:
    """Diff one device's rendered ``intended`` files against its ``running`` ones (same file names)."""
    style = config_style(platform)
    out = DeviceDiff(platform, style)
    if style == "cli":
        _diff_cli(platform, intended, running, out)
    elif style == "json":
        _diff_json(intended, running, out)
    elif style == "files":
        _diff_files(intended, running, out)
    return out


def apply_diff(platform: str, running: dict[str, str], intended: dict[str, str],
               diff: DeviceDiff) -> dict[str, str]:
    """What the running config becomes once ``diff`` is applied (hier-config ``future`` for CLI).

    Used by tests (the invariant) and by anyone who needs the expected post-push config.
    """
    if diff.style == "cli":
        return _apply_cli(platform, running, intended, diff)
    out = dict(running)
    if diff.style == "json" and diff.patch and diff.patch_file:
        import jsonpatch

        doc = jsonpatch.apply_patch(_load_json(running.get(diff.patch_file), "running"), diff.patch)
        out[diff.patch_file] = json.dumps(doc, indent=2, sort_keys=True) + "\n"
    elif diff.style == "files":
        out.update(diff.files)
    return out

