"""``pylogctl sample``: write a small sample log dir to try the other commands on."""

from __future__ import annotations

import typer

from .app import app


@app.command("sample")
def sample(
    log_dir: str = typer.Argument(..., help="Directory to write the sample log dir into."),
) -> None:
    """Write a sample Kafka log dir (every codec, headers, a transaction) with pylogctl's writer."""
    from ..tools.sample import write_sample_log_dir

    for path in write_sample_log_dir(log_dir):
        typer.echo(str(path))
