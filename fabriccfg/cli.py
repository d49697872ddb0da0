"""The ``fabriccfg`` command line: thin glue that registers one module per command family.

Each ``fabriccfg.commands.<family>`` module exposes ``register(app)``; heavy libraries
(netmiko, pysnmp, asyncssh) are imported inside the commands that need them so that
``fabriccfg validate`` starts fast.
"""

from __future__ import annotations

import importlib
from typing import Annotated

import typer

from fabriccfg import __version__

COMMAND_FAMILIES = ("inventory", "render", "mock", "push", "verify", "probe", "advise", "demo", "interop",
                     "plan")

app = typer.Typer(
    name="fabriccfg",
    help="Validated intent, rendered configs, guarded pushes and health checks for AI-training fabrics "
    "(InfiniBand HDR and 400G RoCE v2).",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"fabriccfg {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", "-V", callback=_print_version, is_eager=True,
                                          help="Print the version and exit")] = False,
) -> None:
    """Validated intent, rendered configs, guarded pushes and health checks for AI-training fabrics."""


@app.command()
def version() -> None:
    """Print the fabriccfg version."""
    typer.echo(__version__)


for _family in COMMAND_FAMILIES:
    importlib.import_module(f"fabriccfg.commands.{_family}").register(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
