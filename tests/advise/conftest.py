"""Fixtures for the advise tests: a typer app holding only the advise command, and a runner."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner, Result

from fabriccfg.commands import advise as advise_cmd


@pytest.fixture
def cli() -> Callable[..., Result]:
    """Invoke ``fabriccfg advise ARGS`` in-process (only this family is registered)."""
    app = typer.Typer(pretty_exceptions_enable=False)

    @app.callback()
    def _root() -> None:
        """Test root."""

    advise_cmd.register(app)
    runner = CliRunner(env={"COLUMNS": "200"})

    def run(*args: str) -> Result:
        return runner.invoke(app, ["advise", *args])

    return run


@pytest.fixture
def write_json(tmp_path: Path) -> Callable[[str, Any], Path]:
    def write(name: str, doc: Any) -> Path:
        path = tmp_path / name
        path.write_text(json.dumps(doc), encoding="utf-8")
        return path

    return write
