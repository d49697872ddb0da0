"""Seed mock devices with a running config (``mock up --baseline DIR``, ``fabriccfg plan``).

A baseline folder has the layout of rendered output and of a push run's ``backups/``:
``DIR/<device>/<file>``, each file the running config as the platform's transaction fetches it (or as
the renderer writes it: both parse the same way). Each mock profile declares how a baseline enters its
state (``CliProfile.load_baseline``); this module holds the shared pieces they call, so no code here
knows a platform by name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fabriccfg import registry
from fabriccfg.text import split_lines

MAX_BASELINE_BYTES = 16 * 1024 * 1024
"""A running-config file larger than this is refused (bounded input)."""


class BaselineError(ValueError):
    """A baseline file that cannot be loaded; the message names the file (and line) and is safe to print."""


def read_folder(folder: Path, devices: list[str]) -> dict[str, dict[str, str]]:
    """``{device: {file: text}}`` for every device of ``devices`` that has a sub-folder in ``folder``.

    Devices without a folder keep the mock's factory state; an unknown sub-folder is refused (a typo
    would otherwise silently leave a device at factory state).
    """
    if not folder.is_dir():
        raise BaselineError(f"{folder}: baseline is not a directory (want DIR/<device>/<file>)")
    known = set(devices)
    out: dict[str, dict[str, str]] = {}
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        if sub.name not in known:
            raise BaselineError(f"{sub}: no mock device named {sub.name!r} in the inventory")
        files: dict[str, str] = {}
        for f in sorted(p for p in sub.iterdir() if p.is_file()):
            if f.stat().st_size > MAX_BASELINE_BYTES:
                raise BaselineError(f"{f}: larger than {MAX_BASELINE_BYTES} bytes")
            try:
                files[f.name] = f.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise BaselineError(f"{f}: not readable as UTF-8 text ({exc.__class__.__name__})") from None
        out[sub.name] = files
    return out


def nv_lines(files: Mapping[str, str]) -> list[str]:
    """The ``nv set ...`` lines of NVUE command files (``nv config show -o commands`` or rendered)."""
    out: list[str] = []
    for fname, text in files.items():
        for lineno, raw in enumerate(split_lines(text), start=1):
            line = " ".join(raw.split())
            if not line or line.startswith("#"):
                continue
            if not line.startswith("nv set "):
                raise BaselineError(f"{fname}:{lineno}: not an 'nv set' line: {line[:80]!r}")
            out.append(line)
    return out


def json_document(files: Mapping[str, str]) -> dict[str, Any]:
    """The JSON object of the one file in ``files`` (SONiC CONFIG_DB)."""
    merged: dict[str, Any] = {}
    for fname, text in files.items():
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BaselineError(f"{fname}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
        if not isinstance(doc, dict):
            raise BaselineError(f"{fname}: want a JSON object of tables")
        merged.update(doc)
    return merged


def install_files(dev: Any, files: Mapping[str, str]) -> None:
    """Host platforms: each rendered file at its install path (the platform's ``RENDER.install_paths``,
    else the transaction's ``default_dir``), where the whole-file transaction fetches it."""
    paths: Mapping[str, str] = getattr(registry.render(dev.platform), "install_paths", None) or {}
    default_dir = getattr(registry.transaction(dev.platform), "default_dir", "/etc")
    for name, text in files.items():
        path = paths.get(name) or f"{default_dir}/{name}"
        dev.files[path] = text
        dev.extra.setdefault("dirs", set()).add(path.rsplit("/", 1)[0] + "/")
