"""Starting the app's server: ``streamlit run`` on `annotate_app/server.py`, in this process, with the
project's Streamlit settings (``qrelforge serve``, ``make run``).

The settings of the shipped ``.streamlit/config.toml`` are passed as flags, so they win over any other
config. Ctrl+C makes `run` return 0. Imports nothing of the app but `annotate_app.shipped`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from annotate_app import shipped
from metrics.errors import QrelForgeError

__all__ = ["SERVER", "CONFIG_NAME", "config_file", "streamlit_settings", "streamlit_flags", "run"]

SERVER = Path(__file__).with_name("server.py")
"""The script Streamlit runs: the app behind its ASGI wrapper."""
CONFIG_NAME = "config.toml"


def config_file() -> Path:
    """The project's Streamlit settings file: the installed package's, else the checkout's."""
    return shipped.folder(shipped.STREAMLIT) / CONFIG_NAME


def streamlit_settings(path: Path | None = None) -> dict[str, Any]:
    """The Streamlit options of ``path`` (default: `config_file`), by dotted name.

    >>> streamlit_settings()["server.maxUploadSize"]
    200

    Raises:
        QrelForgeError: the file is missing, is not TOML, or holds a value that is not a string, a number or
            a boolean.
    """
    path = config_file() if path is None else path
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise QrelForgeError(f"{path}: the Streamlit settings file is missing") from None
    except tomllib.TOMLDecodeError as exc:
        raise QrelForgeError(f"{path}: not TOML: {exc}") from None
    return dict(_flatten(path, "", data))


def _flatten(path: Path, prefix: str, table: Mapping[str, Any]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out += _flatten(path, f"{name}.", value)
        elif isinstance(value, bool | int | float | str):
            out.append((name, value))
        else:
            raise QrelForgeError(f"{path}: {name} must be a string, a number or a boolean; got {value!r}")
    return out


def streamlit_flags(host: str, port: int, settings: Mapping[str, Any] | None = None) -> list[str]:
    """``streamlit run``'s flags: the project's settings (default: `streamlit_settings`), then the address
    and the port.

    >>> streamlit_flags("127.0.0.1", 0, {"server.headless": True})
    ['--server.headless', 'true', '--server.address', '127.0.0.1', '--server.port', '0']
    """
    settings = streamlit_settings() if settings is None else settings
    options = {**settings, "server.address": host, "server.port": port}
    flags: list[str] = []
    for name, value in options.items():
        flags += [f"--{name}", str(value).lower() if isinstance(value, bool) else str(value)]
    return flags


def run(host: str, port: int) -> int:
    """Serve the app on ``host``:``port`` (0: a free port, printed) until Ctrl+C; returns 0.

    Raises:
        QrelForgeError: Streamlit refused a flag (the message is Streamlit's).
    """
    from click.exceptions import Abort, ClickException
    from streamlit.web import cli as streamlit_cli

    argv = ["run", str(SERVER), *streamlit_flags(host, port)]
    try:
        streamlit_cli.main.main(argv, prog_name="streamlit", standalone_mode=False)
    except (Abort, KeyboardInterrupt):  # Ctrl+C: Streamlit has closed the server
        return 0
    except ClickException as exc:
        raise QrelForgeError(f"streamlit run: {exc.format_message()}") from None
    return 0
