"""One module per command family; each exposes ``register(app: typer.Typer) -> None``."""
