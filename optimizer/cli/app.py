"""``capacity app``: start the Streamlit app's server in place of this process."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["app_", "app_command"]


def app_command(port: int, address: str, headless: bool) -> list[str]:
    """Return the ``streamlit run ui/app.py`` command line of ``capacity app``."""
    import sys

    from capacity.limits import MAX_TRANSPORT_MB

    script = Path(__file__).resolve().parents[2] / "ui" / "app.py"
    cmd = [sys.executable, "-m", "streamlit", "run", str(script)]
    cmd += ["--server.port", str(port), "--server.address", address]
    cmd += ["--server.headless", "true" if headless else "false"]
    # the server carries files up to the uploader's cap (capacity.limits.MAX_TRANSPORT_MB,
    # above the app's own limit), so a file over the app's limit reaches the app and is
    # refused by name with the whole upload, instead of being dropped unseen
    cmd += ["--server.maxUploadSize", str(MAX_TRANSPORT_MB)]
    # a local planning tool: no Deploy button, no developer menu (the same setting as
    # .streamlit/config.toml, which only a run started in the checkout's root reads)
    cmd += ["--client.toolbarMode", "minimal"]
    return cmd + ["--browser.gatherUsageStats", "false"]


def app_(
    port: Annotated[int, typer.Option("--port", "-p", min=1, max=65535, help="Port.")] = 8501,
    data: Annotated[
        Path | None,
        typer.Option("--data", "-d", help="Dataset directory opened first (default: data/)."),
    ] = None,
    address: Annotated[str, typer.Option(help="Address to listen on.")] = "localhost",
    headless: Annotated[
        bool, typer.Option("--headless/--browser", help="Do not open a browser tab.")
    ] = True,
) -> None:
    """Start the Streamlit app (data editor, scenarios, plan, risk, reports).

    Prints the address, then becomes the Streamlit server (the same process),
    so a SIGTERM or Ctrl+C to the process that started the app stops the server.
    Exits 1 when --data is not a directory.
    """
    import os
    import sys

    env = dict(os.environ)
    if data is not None:
        if not data.is_dir():
            typer.echo(f"error: --data {data} is not a directory", err=True)
            raise typer.Exit(1)
        env["CAPACITY_DATA"] = str(data.resolve())
    typer.echo(f"Capacity planner app: http://{address}:{port}  (Ctrl+C to stop)")
    sys.stdout.flush()
    sys.stderr.flush()
    cmd = app_command(port, address, headless)
    os.execve(cmd[0], cmd, env)
