"""Load an inventory YAML file into a validated :class:`Fabric`, keeping every value's position.

The C YAML composer gives each node its line and column; we build plain data plus a
``path -> (line, col)`` map, expand profiles, and let pydantic validate. Every failure becomes a
:class:`Finding` with a position, so no user mistake ends in a traceback.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

import yaml
from pydantic import BaseModel, ValidationError

from fabriccfg.inventory.findings import Finding, PathT, Source, cap, has_errors, one_per_profile
from fabriccfg.inventory.models import Fabric, Host, Link, ManagementHost, Switch
from fabriccfg.inventory.rules import run_rules
from fabriccfg.text import first_unsafe, split_lines

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DEVICE_LISTS = ("switches", "hosts", "management_hosts")

_ERROR_RULES = {
    "extra_forbidden": "unknown-key",
    "missing": "missing-key",
    "literal_error": "invalid-value",
    "enum": "invalid-value",
    "value_error": "invalid-value",
    "assertion_error": "invalid-value",
    "greater_than": "out-of-range",
    "greater_than_equal": "out-of-range",
    "less_than": "out-of-range",
    "less_than_equal": "out-of-range",
    "too_short": "out-of-range",
    "too_long": "out-of-range",
}




@dataclass
class LoadResult:
    source: Source
    fabric: Fabric | None
    findings: list[Finding]

    @property
    def ok(self) -> bool:
        return self.fabric is not None and not has_errors(self.findings)


class InventoryError(Exception):
    """Raised by :func:`load_fabric` when an inventory has errors; carries the findings."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = findings
        errors = [f for f in findings if f.severity == "error"]
        shown, more = cap(errors, 20)
        tail = [f"... and {more} more error(s)"] if more else []
        super().__init__("\n".join([*(f.format() for f in shown), *tail]))


# --------------------------------------------------------------------------- bounded reading
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
"""Largest inventory read by default (a 32k-GPU fabric from ``fabriccfg gen`` is about 5 MB)."""
MAX_BYTES_ENV = "FABRICCFG_MAX_INVENTORY_BYTES"
DEFAULT_MAX_NODES = 500_000
"""Most YAML nodes (after alias expansion) read by default; a 32k-GPU fabric has about 160,000."""
MAX_NODES_ENV = "FABRICCFG_MAX_INVENTORY_NODES"
MAX_FINDINGS = 10_000
"""Validation errors turned into findings; the rest are counted in one more finding."""
_SIZE = re.compile(r"^\s*(\d+)\s*([KMG]?)(?:i?B)?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``16777216``, ``16M``, ``16MiB``, ``512K``, ``1G`` -> bytes (powers of 1024); ValueError otherwise."""
    m = _SIZE.match(text)
    if not m or int(m.group(1)) < 1:
        raise ValueError(f"{text!r} is not a size; write bytes or e.g. 16M, 64MiB, 1G")
    unit = str(m.group(2)).upper() or " "
    return int(m.group(1)) << (10 * " KMG".index(unit))


def _env_limit(name: str, default: int, parse: Any = int) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        got: int = int(parse(value))
    except ValueError:
        return default
    return got if got > 0 else default


def max_inventory_bytes() -> int:
    """The size limit: ``FABRICCFG_MAX_INVENTORY_BYTES`` (``64M``...) or 16 MiB."""
    return _env_limit(MAX_BYTES_ENV, DEFAULT_MAX_BYTES, parse_size)


def max_inventory_nodes() -> int:
    """The YAML node limit: ``FABRICCFG_MAX_INVENTORY_NODES`` or 500,000."""
    return _env_limit(MAX_NODES_ENV, DEFAULT_MAX_NODES)


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _kind_of(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def file_problem(path: Path) -> tuple[str, str] | None:
    """(rule, message) when ``path`` is not a regular file that exists (symlinks are followed), else None.

    ``lstat``/``stat`` only: never opens the path, so a FIFO cannot block and a device is never read.
    """
    try:
        st = path.stat()
    except FileNotFoundError:
        if path.is_symlink():
            target = str(path.readlink())
            return "file-not-found", f"no such file (a symlink to {target!r}, which does not exist)"
        return "file-not-found", "no such file"
    except OSError as exc:
        return "unreadable", f"cannot read: {exc.strerror or exc}"
    if stat.S_ISREG(st.st_mode):
        return None
    via = f" (via a symlink to {str(path.readlink())!r})" if path.is_symlink() else ""
    return "not-a-regular-file", f"is {_kind_of(st.st_mode)}{via}, not a regular file; refusing to read it"


def _too_large(size: int | str, limit: int) -> str:
    return (f"the file is {size} bytes, more than the {limit}-byte limit; raise it with "
            f"--max-inventory-bytes or {MAX_BYTES_ENV} if this inventory is really that large")


def read_inventory(path: Path, max_bytes: int | None = None) -> tuple[str | None, Finding | None]:
    """The text of an inventory file, or a finding saying why it was not read.

    Opened non-blocking and checked with ``fstat`` on the open descriptor (no race with a swapped path):
    only a regular file no larger than ``max_bytes`` is read, and never more than ``max_bytes`` bytes.
    """
    limit = max_bytes if max_bytes is not None else max_inventory_bytes()
    file = str(path)
    problem = file_problem(path)
    if problem is not None:
        return None, Finding(problem[0], "error", problem[1], file, 1, 1)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        return None, Finding("unreadable", "error", f"cannot read: {exc.strerror or exc}", file, 1, 1)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            why = f"is {_kind_of(st.st_mode)}, not a regular file; refusing to read it"
            return None, Finding("not-a-regular-file", "error", why, file, 1, 1)
        if st.st_size > limit:
            return None, Finding("file-too-large", "error", _too_large(st.st_size, limit), file, 1, 1)
        chunks: list[bytes] = []
        got = 0
        while got <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > limit:
            why = _too_large(f"more than {limit}", limit)
            return None, Finding("file-too-large", "error", why, file, 1, 1)
    except OSError as exc:
        return None, Finding("unreadable", "error", f"cannot read: {exc.strerror or exc}", file, 1, 1)
    finally:
        os.close(fd)
    raw = b"".join(chunks)
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        why = f"not UTF-8 text: byte 0x{raw[exc.start]:02x} cannot be decoded"
        return None, Finding("unreadable", "error", why, file, line, col)


# --------------------------------------------------------------------------- YAML with positions
_MAX_DEPTH = 200
_STR_TAG = "tag:yaml.org,2002:str"
_COLLECTION_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("map", "seq", "omap", "set", "pairs"))


class _TooLarge(Exception):
    pass


class _Walker:
    """Build plain data from composed YAML nodes, recording each value's (line, col) by data path.

    Guards against hostile documents: recursive aliases, nesting deeper than ``_MAX_DEPTH``, and
    alias bombs (more values than ``limit``, which scales with the text so real files never hit it).
    """

    def __init__(self, loader: Any, src: Source, problems: list[Finding], limit: int) -> None:
        self.loader = loader
        self.src = src
        self.pos = src.positions
        self.problems = problems
        self.limit = limit
        self.stack: list[yaml.Node] = []

    def walk(self, node: yaml.Node, path: PathT) -> Any:
        pos = self.pos
        pos[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if node.__class__ is yaml.ScalarNode:
            if node.tag == _STR_TAG:  # fast path: most values are plain strings
                return node.value
            return self.loader.construct_object(node)
        if len(pos) > self.limit:
            raise _TooLarge("the document expands to too many values (aliases nested too deep?)")
        if not isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
            return self.loader.construct_object(node)
        if any(n is node for n in self.stack):
            raise yaml.MarkedYAMLError(
                problem="an alias refers to a node that contains it (recursive structure)",
                problem_mark=node.start_mark,
            )
        if len(self.stack) >= _MAX_DEPTH:
            raise _TooLarge(f"nesting deeper than {_MAX_DEPTH} levels")
        if node.tag not in _COLLECTION_TAGS:
            raise yaml.MarkedYAMLError(problem=f"unsupported tag {node.tag!r}", problem_mark=node.start_mark)
        self.stack.append(node)
        try:
            if isinstance(node, yaml.SequenceNode):
                return [self.walk(item, (*path, i)) for i, item in enumerate(node.value)]
            return self._mapping(node, path)
        finally:
            self.stack.pop()

    def _mapping(self, node: yaml.MappingNode, path: PathT) -> dict[Any, Any]:
        self.loader.flatten_mapping(node)
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = self.loader.construct_object(key_node)
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                key = str(key)
            line, col = key_node.start_mark.line + 1, key_node.start_mark.column + 1
            child = (*path, key)
            if key in out:
                self.problems.append(
                    Finding(
                        "duplicate-key",
                        "error",
                        f"key {key!r} appears twice in this mapping; YAML keeps only the last",
                        self.src.file,
                        line,
                        col,
                        child,
                    )
                )
            out[key] = self.walk(value_node, child)
            self.pos[child] = (line, col)
        return out


def _first_line(exc: Exception) -> str:
    text = split_lines(str(exc).strip())
    return text[0] if text else type(exc).__name__


def _check_node_count(text: str, limit: int) -> None:
    """Stream the parser's events (constant memory) and stop past ``limit`` nodes, before anything is built.

    Composing a node costs a few hundred bytes: a 16 MB file of one-character scalars would need gigabytes.
    """
    count = 0
    node_event = yaml.NodeEvent
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, node_event):
            count += 1
            if count > limit:
                where = f" (at line {event.start_mark.line + 1})" if event.start_mark is not None else ""
                raise _TooLarge(f"more than {limit} YAML values{where}; raise the limit with "
                                f"{MAX_NODES_ENV} if this inventory is really that large")


def parse_yaml(text: str, file: str) -> tuple[Any, Source, list[Finding]]:
    """Parse YAML text into plain data with positions; syntax problems become findings."""
    src = Source(file)
    problems: list[Finding] = []
    if not text.strip():
        problems.append(
            Finding(
                "empty-inventory",
                "error",
                "the file is empty; an inventory needs at least a 'fabric:' section",
                file,
                1,
                1,
            )
        )
        return None, src, problems
    nodes = max_inventory_nodes()
    loader = _Loader(text)
    try:
        _check_node_count(text, nodes)
        node = loader.get_single_node()
        if node is None:
            problems.append(
                Finding(
                    "empty-inventory",
                    "error",
                    "the file holds only comments; an inventory needs a 'fabric:' section",
                    file,
                    1,
                    1,
                )
            )
            return None, src, problems
        limit = min(10 * len(text) + 100_000, nodes)
        data = _Walker(loader, src, problems, limit=limit).walk(node, ())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = str(exc.problem or exc)
        if mark is not None and 0 <= mark.index < len(text) and text[mark.index] == "\t":
            problem += " (YAML indents with spaces, not tabs)"
        problems.append(Finding("yaml-syntax", "error", f"YAML syntax: {problem}", file, line, col))
        return None, src, problems
    except yaml.YAMLError as exc:
        problems.append(Finding("yaml-syntax", "error", f"YAML syntax: {_first_line(exc)}", file, 1, 1))
        return None, src, problems
    except _TooLarge as exc:
        problems.append(Finding("yaml-too-large", "error", f"cannot load: {exc}", file, 1, 1))
        return None, src, problems
    except RecursionError:
        problems.append(
            Finding("yaml-too-large", "error", "cannot load: the document nests too deeply", file, 1, 1)
        )
        return None, src, problems
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. a timestamp like 2024-13-45
        problems.append(Finding("yaml-syntax", "error", f"YAML value cannot be read: {exc}", file, 1, 1))
        return None, src, problems
    finally:
        loader.dispose()
    return data, src, problems


# --------------------------------------------------------------------------- profiles
def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _profile_positions(pos: dict[PathT, tuple[int, int]]) -> dict[str, list[tuple[PathT, tuple[int, int]]]]:
    """Positions under ``profiles.<name>`` as (suffix, position) per profile: indexed once, not per device."""
    out: dict[str, list[tuple[PathT, tuple[int, int]]]] = {}
    for p, where in pos.items():
        if len(p) >= 2 and p[0] == "profiles":
            out.setdefault(str(p[1]), []).append((p[2:], where))
    return out


def _copy_positions(
    pos: dict[PathT, tuple[int, int]], suffixes: list[tuple[PathT, tuple[int, int]]], dst_path: PathT
) -> None:
    for suffix, where in suffixes:
        key = (*dst_path, *suffix)
        if key not in pos:
            pos[key] = where


def unsafe_text_finding(src: Source, value: str, path: PathT, what: str) -> Finding | None:
    """``error[unsafe-text]`` for text outside the pydantic model (profile names) holding an unsafe char."""
    bad = first_unsafe(value)
    if bad is None:
        return None
    where = ".".join(str(p) for p in path)
    return src.finding("unsafe-text", "error",
                       f"{where}: {what} contains {bad.describe()} at character {bad.index + 1}; inventory "
                       "text must be one line of visible characters", path)


def _check_profile_names(data: dict[str, Any], profiles: dict[str, Any], src: Source,
                         problems: list[Finding]) -> None:
    """Profile names never reach a device, but they reach messages and reports: same rule as every text."""
    refs: list[tuple[str, PathT, str]] = []
    for name, body in profiles.items():
        refs.append((str(name), ("profiles", name), "the profile name"))
        if isinstance(body, dict) and isinstance(body.get("inherits"), str):
            refs.append((body["inherits"], ("profiles", name, "inherits"), "the profile name"))
    for section in _DEVICE_LISTS:
        items = data.get(section)
        for i, item in enumerate(items if isinstance(items, list) else []):
            if isinstance(item, dict) and isinstance(item.get("profile"), str):
                refs.append((item["profile"], (section, i, "profile"), "the profile name"))
    for value, path, what in refs:
        got = unsafe_text_finding(src, value, path, what)
        if got is not None:
            problems.append(got)


def expand_profiles(data: dict[str, Any], src: Source, problems: list[Finding]) -> dict[str, Any]:
    """Apply ``profiles:`` (with ``inherits:`` chains) to devices that name a ``profile:``.

    Values set on the device win over the profile's; nested mappings merge key by key. A value
    inherited from a profile keeps the profile's position, so errors point at the line to fix.
    """
    profiles = data.get("profiles") or {}
    if not isinstance(profiles, dict):
        problems.append(
            src.finding(
                "wrong-type", "error", "'profiles' must be a mapping of name -> settings", ("profiles",)
            )
        )
        profiles = {}
    _check_profile_names(data, profiles, src, problems)
    resolved: dict[str, tuple[dict[str, Any], list[str]]] = {}

    def resolve(name: str, chain: tuple[str, ...]) -> tuple[dict[str, Any], list[str]] | None:
        if name in resolved:
            return resolved[name]
        body = profiles.get(name)
        if not isinstance(body, dict):
            return None
        if name in chain:
            problems.append(
                src.finding(
                    "profile-cycle",
                    "error",
                    f"profile inheritance loops: {' -> '.join((*chain, name))}",
                    ("profiles", name),
                )
            )
            return None
        own = {k: v for k, v in body.items() if k != "inherits"}
        layers = [name]
        parent = body.get("inherits")
        if parent is not None:
            base = resolve(str(parent), (*chain, name))
            if base is None:
                if str(parent) not in profiles:
                    problems.append(
                        src.finding(
                            "unknown-profile",
                            "error",
                            _unknown("profile", str(parent), profiles),
                            ("profiles", name, "inherits"),
                        )
                    )
                return None
            own = _merge(base[0], own)
            layers = [*base[1], name]
        resolved[name] = (own, layers)
        return resolved[name]

    out = {k: v for k, v in data.items() if k != "profiles"}
    profile_pos = _profile_positions(src.positions) if profiles else {}
    for section in _DEVICE_LISTS:
        items = out.get(section)
        if not isinstance(items, list):
            continue
        new_items = []
        for i, item in enumerate(items):
            if not isinstance(item, dict) or "profile" not in item:
                new_items.append(item)
                continue
            pname = str(item["profile"])
            got = resolve(pname, ())
            if got is None:
                if pname not in profiles:
                    problems.append(
                        src.finding(
                            "unknown-profile",
                            "error",
                            _unknown("profile", pname, profiles),
                            (section, i, "profile"),
                        )
                    )
                new_items.append({k: v for k, v in item.items() if k != "profile"})
                continue
            body, layers = got
            merged = _merge(body, {k: v for k, v in item.items() if k != "profile"})
            for layer in reversed(layers):  # nearest profile's positions first
                _copy_positions(src.positions, profile_pos.get(layer, []), (section, i))
            new_items.append(merged)
        out[section] = new_items
    return out


_LINK_LENGTH = re.compile(r"^(\d+(?:\.\d+)?)m$")
LINK_SHORTHAND = "'device:port <-> device:port [3m] [speed=400G]'"


def expand_link_strings(data: dict[str, Any], src: Source, problems: list[Finding]) -> set[PathT]:
    """Turn one-line links (``a <-> b 3m speed=200G``) into mappings, in place.

    A 16k-GPU fabric has ~45,000 links; one scalar per link instead of a mapping keeps the file
    short and makes it parse about twice as fast.
    """
    links = data.get("links")
    bad: set[PathT] = set()
    if not isinstance(links, list):
        return bad
    for i, item in enumerate(links):
        if not isinstance(item, str):
            continue
        path: PathT = ("links", i)
        left, sep, right = item.partition("<->")
        tokens = right.split()
        if not sep or not left.strip() or not tokens:
            problems.append(
                src.finding(
                    "invalid-value",
                    "error",
                    f"links.{i}: {item!r} is not a link; write {LINK_SHORTHAND} or a mapping "
                    "with a:, b:, length_m:",
                    path,
                )
            )
            bad.add(path)
            continue
        out: dict[str, Any] = {"a": left.strip(), "b": tokens[0]}
        for tok in tokens[1:]:
            m = _LINK_LENGTH.match(tok)
            key, eq, value = tok.partition("=")
            if m:
                out["length_m"] = float(m.group(1)) if "." in m.group(1) else int(m.group(1))
            elif eq and key in ("length_m", "speed"):
                out[key] = value
            else:
                problems.append(
                    src.finding(
                        "invalid-value",
                        "error",
                        f"links.{i}: cannot read {tok!r} in {item!r}; write {LINK_SHORTHAND}",
                        path,
                    )
                )
        where = src.positions.get(path, (1, 1))
        for key in out:
            src.positions.setdefault((*path, key), where)
        links[i] = out
    return bad


def _unknown(what: str, name: str, known: Any) -> str:
    close = difflib.get_close_matches(name, [str(k) for k in known], n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown {what} {name!r}{hint}"


# --------------------------------------------------------------------------- pydantic errors
def _unwrap(tp: Any) -> Any:
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = typing.get_args(tp)[0]
        elif origin in (Union, types.UnionType):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
            tp = models[0] if models else args[0]
        else:
            return tp


def _model_at(path: PathT) -> type[BaseModel] | None:
    tp: Any = Fabric
    for part in path:
        tp = _unwrap(tp)
        origin = typing.get_origin(tp)
        if isinstance(part, int) and origin in (list, tuple):
            tp = typing.get_args(tp)[0]
        elif origin is dict:
            tp = typing.get_args(tp)[1]
        elif isinstance(tp, type) and issubclass(tp, BaseModel) and isinstance(part, str):
            info = tp.model_fields.get(part)
            if info is None:
                return None
            tp = info.annotation
        else:
            return None
    tp = _unwrap(tp)
    return tp if isinstance(tp, type) and issubclass(tp, BaseModel) else None


def _clean_loc(loc: tuple[Any, ...], data: Any) -> PathT:
    """Drop pydantic's validator tags from a loc, keeping the parts that index the data."""
    out: list[str | int] = []
    cur = data
    for part in loc:
        in_dict = isinstance(cur, dict) and part in cur
        if in_dict or (isinstance(cur, list) and isinstance(part, int) and 0 <= part < len(cur)):
            out.append(part)
            cur = cur[part]
        elif (
            isinstance(part, str)
            and (isinstance(cur, dict) or cur is None)
            and not any(c in part for c in "[]")
        ):
            out.append(part)  # a missing key
            cur = None
    return tuple(out)


def _get(data: Any, path: PathT) -> Any:
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _kind(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    return {
        dict: "a mapping",
        list: "a list",
        str: "text",
        bool: "true/false",
        int: "a number",
        float: "a number",
    }.get(type(value), type(value).__name__)


def validation_findings(exc: ValidationError | list[Any], data: Any, src: Source, *,
                        unchecked: int = 0) -> list[Finding]:
    """Findings for pydantic errors (at most :data:`MAX_FINDINGS`; ``unchecked``: items never validated)."""
    out: list[Finding] = []
    seen: set[tuple[PathT, str]] = set()
    errors = exc.errors(include_url=False) if isinstance(exc, ValidationError) else exc
    for err in errors[:MAX_FINDINGS]:
        path = _clean_loc(tuple(err["loc"]), data)
        etype = str(err["type"])
        rule = _ERROR_RULES.get(
            etype,
            etype
            if "-" in etype
            else "wrong-type"
            if etype.endswith(("_type", "_parsing"))
            else "invalid-value",
        )
        msg = str(err["msg"])
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, ") :]
        where = ".".join(str(p) for p in path) or "inventory"
        if rule == "unknown-key":
            key = str(path[-1]) if path else "?"
            model = _model_at(path[:-1])
            known = list(model.model_fields) if model else []
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.5)
            msg = f"unknown key {key!r} in {'.'.join(map(str, path[:-1])) or 'the top level'}"
            msg += (
                f"; did you mean {close[0]!r}?"
                if close
                else (f"; known keys: {', '.join(known)}" if known else "")
            )
        elif rule == "missing-key":
            parent = ".".join(str(p) for p in path[:-1])
            owner = _get(data, path[:-1])
            named = (
                f" ({owner['name']})"
                if isinstance(owner, dict) and isinstance(owner.get("name"), str)
                else ""
            )
            msg = (
                f"required key {str(path[-1])!r} is missing in {parent or 'the top level'}{named}"
                if path
                else msg
            )
        else:
            got = err.get("input")
            secret = rule == "literal-secret" or bool(path and path[0] == "credentials")
            if etype in ("model_type", "dict_type", "model_attributes_type"):
                msg = f"expected a mapping (key: value), not {_kind(got)}"
                if path[:1] == ("links",) and len(path) == 2:
                    msg += f"; write a: and b: or one line {LINK_SHORTHAND}"
            elif etype == "list_type":
                msg = f"expected a list (- item), not {_kind(got)}"
            elif etype == "literal_error" and isinstance(got, str) and not secret:
                options = re.findall(r"'([^']*)'", str((err.get("ctx") or {}).get("expected", "")))
                close = difflib.get_close_matches(got, options, n=1, cutoff=0.6)
                msg = f"{got!r} is not one of {', '.join(options)}" + (
                    f"; did you mean {close[0]!r}?" if close else ""
                )
                secret = True  # the value is already quoted
            secret = secret or "-" in etype  # our own errors already quote the value
            plain = isinstance(got, (str, int, float, bool))
            shown = f" (got {got!r})" if plain and not secret and repr(got) not in msg else ""
            msg = f"{where}: {msg}{shown}"
        if (path, rule) in seen:
            continue
        seen.add((path, rule))
        out.append(src.finding(rule, "error", msg, path))
    if len(errors) > MAX_FINDINGS or unchecked:
        more = f"{len(errors) - MAX_FINDINGS} more validation errors not listed" if len(
            errors) > MAX_FINDINGS else "validation stopped"
        left = f", {unchecked} more devices/links not checked" if unchecked else ""
        out.append(src.finding("too-many-errors", "error", f"{more}{left}; fix the ones above first"))
    return _collapse_profile_repeats(out)


_DEVICE_REF = re.compile(r"\b(switches|hosts|management_hosts)\.\d+")


def _collapse_profile_repeats(findings: list[Finding]) -> list[Finding]:
    """One finding per mistake: a bad value in a profile is reported once, not once per device using it."""
    groups: dict[tuple[str, int, int, str], list[Finding]] = {}
    for f in findings:
        key = (f.rule, f.line, f.col, _DEVICE_REF.sub("<device>", f.message))
        groups.setdefault(key, []).append(f)
    return one_per_profile(groups.values())


# --------------------------------------------------------------------------- entry points
def load(path: str | Path, *, rules: bool = True, max_bytes: int | None = None) -> LoadResult:
    """Load and validate one inventory file; never raises for a user mistake.

    Bounded: only a regular file of at most ``max_bytes`` (default :func:`max_inventory_bytes`) is read.
    """
    p = Path(path)
    text, problem = read_inventory(p, max_bytes)
    if text is None:
        return LoadResult(Source(str(p)), None, [problem] if problem else [])
    return loads(text, str(p), rules=rules)


_ITEM_MODELS: tuple[tuple[str, type[BaseModel]], ...] = (
    ("switches", Switch), ("hosts", Host), ("management_hosts", ManagementHost), ("links", Link))


def _validate_items(data: dict[str, Any]) -> tuple[list[Any], int, dict[str, Any]]:
    """Validate the long lists item by item, stopping after :data:`MAX_FINDINGS` errors.

    One pydantic call over 500,000 broken links would hold every error (about 1 KB each) at once. Returns
    the errors (locations from the top), how many items were left unchecked, and ``data`` with each list
    holding only its valid items, as model instances (pydantic does not validate them again).
    """
    errors: list[Any] = []
    unchecked = 0
    rest = dict(data)
    for section, model in _ITEM_MODELS:
        items = data.get(section)
        if not isinstance(items, list):
            continue
        good: list[Any] = []
        for i, item in enumerate(items):
            if len(errors) >= MAX_FINDINGS:
                unchecked += len(items) - i
                break
            try:
                good.append(model.model_validate(item))
            except ValidationError as exc:
                errors.extend({**e, "loc": (section, i, *e["loc"])} for e in exc.errors(include_url=False))
        rest[section] = good
    return errors, unchecked, rest


def loads(text: str, file: str = "<inventory>", *, rules: bool = True) -> LoadResult:
    data, src, problems = parse_yaml(text, file)
    if data is None:
        return LoadResult(src, None, problems)
    if not isinstance(data, dict):
        problems.append(
            src.finding(
                "wrong-type",
                "error",
                f"the top level must be a mapping with a 'fabric:' section, not {type(data).__name__}",
            )
        )
        return LoadResult(src, None, problems)
    data = expand_profiles(data, src, problems)
    bad_links = expand_link_strings(data, src, problems)
    item_errors, unchecked, rest = _validate_items(data)
    try:
        fabric = Fabric.model_validate(rest)
    except ValidationError as exc:
        item_errors.extend(exc.errors(include_url=False))
    if item_errors:
        found = problems + [f for f in validation_findings(item_errors, data, src, unchecked=unchecked)
                            if f.path[:2] not in bad_links]
        found.sort(key=lambda f: (f.line, f.col))
        return LoadResult(src, None, found)
    if rules:
        problems.extend(run_rules(fabric, src))
    return LoadResult(src, fabric, problems)


def load_fabric(path: str | Path) -> Fabric:
    """Load an inventory or raise :class:`InventoryError` (for stages that need a valid fabric)."""
    result = load(path)
    if not result.ok or result.fabric is None:
        raise InventoryError(result.findings)
    return result.fabric
