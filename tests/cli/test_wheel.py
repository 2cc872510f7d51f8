"""An installed wheel works like the checkout: it ships the sample corpus and the project's Streamlit
settings, ``qrelforge demo-data`` and ``qrelforge serve`` work from any folder, and ``make run`` is
``qrelforge serve`` on the ``app`` extra only.

The fast tests check the packaging's declarations and ``serve``'s flags and errors.
`test_the_wheel_works_from_another_folder` builds the wheel (``python -m build``: the sdist, then the wheel
from it), installs it into a fresh virtual environment (first without the ``app`` extra, then with it, from
the package index), and from folders outside the checkout runs ``qrelforge demo-data``, then ``qrelforge serve
--db`` on that database: it must answer ``ok`` on ``/_stcore/health``, serve the app's HTML on ``/``, show the
login form in Chromium without Streamlit's Deploy button, log alice in, then stop on SIGINT (Ctrl+C) with exit
status 0 and no traceback. About two minutes, most of it pip installing the dependencies.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import tomllib
import urllib.request
import venv
import zipfile
from pathlib import Path

import pytest
from e2e_helpers import login

from annotate_app import launch, shipped
from annotate_app.cli import main
from annotate_app.services import demo
from metrics.errors import QrelForgeError

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
CODE = ("annotate_app", "metrics")
SETTINGS = [  # .streamlit/config.toml as `streamlit run` flags
    *("--client.toolbarMode", "minimal"),
    *("--browser.gatherUsageStats", "false"),
    *("--server.headless", "true"),
    *("--server.maxUploadSize", "200"),
]


def _checkout_packages() -> set[str]:
    """The packages of the checkout: every folder of `CODE` holding Python files."""
    return {
        ".".join(path.parent.relative_to(ROOT).parts)
        for top in CODE
        for path in (ROOT / top).rglob("*.py")
        if "__pycache__" not in path.parts
    }


# ------------------------------------------------------------------------------------------ the packaging
def test_pyproject_lists_every_package_and_maps_the_shipped_folders():
    tool = PYPROJECT["tool"]["setuptools"]
    missing = _checkout_packages() - set(tool["packages"])
    assert not missing, f"add {sorted(missing)} to [tool.setuptools] packages in pyproject.toml"
    assert sorted(tool["packages"]) == sorted(_checkout_packages() | set(shipped.PACKAGES.values()))
    assert tool["package-dir"] == {package: folder for folder, package in shipped.PACKAGES.items()}


def test_a_checkout_finds_the_shipped_folders_in_the_repository():
    assert shipped.folder(shipped.SAMPLE_CORPUS) == demo.SAMPLE_DIR == ROOT / "sample_corpus"
    assert launch.config_file() == ROOT / ".streamlit" / "config.toml"
    with pytest.raises(ValueError, match=r"^name must be one of \['.streamlit', 'sample_corpus'\]; got 'x'$"):
        shipped.folder("x")


def _rule(make: str, target: str) -> list[str]:
    """The lines of the Makefile's rule for ``target``."""
    head, *recipe = make.split(f"\n{target}:", 1)[1].split("\n\n")[0].splitlines()
    return [f"{target}:{head}", *recipe]


def test_make_run_installs_the_app_extra_and_serves():
    """`make run` installs `.[app]` (with its own stamp) and starts `qrelforge serve`; test and lint keep the
    test extra."""
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert _rule(make, "run") == [
        "run: $(APP_STAMP)",
        "\t$(VENV)/bin/qrelforge demo-data --with-labels",
        "\t$(VENV)/bin/qrelforge serve --host 127.0.0.1 --port $${PORT:-8501}",
    ]
    assert "\t$(PIP) --no-compile -e '.[app]'" in _rule(make, "$(APP_STAMP)")
    assert "\t$(PIP) -e '.[test]'" in _rule(make, "$(STAMP)")
    assert [_rule(make, t)[0].split()[:2] for t in ("test", "lint")] == [
        ["test:", "$(STAMP)"],
        ["lint:", "$(STAMP)"],
    ]


# ------------------------------------------------------------------------------------------------- serve
def test_serve_passes_the_project_settings_to_streamlit():
    assert launch.streamlit_flags("0.0.0.0", 8600) == [
        *SETTINGS,
        *("--server.address", "0.0.0.0"),
        *("--server.port", "8600"),
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "{path}: the Streamlit settings file is missing"),
        (
            b"[server\n",
            "{path}: not TOML: Expected ']' at the end of a table declaration (at line 1, column 8)",
        ),
        (
            b"[server]\nfolderWatchList = ['a']\n",
            "{path}: server.folderWatchList must be a string, a number or a boolean; got ['a']",
        ),
    ],
)
def test_bad_settings_are_one_line_naming_the_file(tmp_path, content, message):
    path = tmp_path / "config.toml"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(QrelForgeError) as caught:
        launch.streamlit_settings(path)
    assert str(caught.value) == message.format(path=path)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--port", "65536"],
            "qrelforge serve: error: argument --port: must be an int in [0, 65535]; got '65536'",
        ),
        (["--port", "x"], "qrelforge serve: error: argument --port: must be an int in [0, 65535]; got 'x'"),
        (
            ["--db", "mysql://h/db"],
            "qrelforge: error: database URL must be sqlite:// or postgresql+psycopg://; got 'mysql://h/db'",
        ),
    ],
)
def test_serve_refuses_bad_input_in_one_line(capsys, argv, message):
    try:
        code = main(["serve", *argv])
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    out, err = capsys.readouterr()
    assert (code, out, err.splitlines()[-1]) == (2, "", message)
    assert "Traceback" not in err


# ----------------------------------------------------------------------------------------------- the wheel
def _run(argv: list, *, cwd: Path, env: dict, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def _ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, f"{proc.args} exited with {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _build(tmp_path: Path) -> Path:
    """The wheel of the checkout, built from its sdist as ``python -m build`` does."""
    dist = tmp_path / "dist"
    _ok(_run([sys.executable, "-m", "build", "--outdir", dist, ROOT], cwd=tmp_path, env=dict(os.environ)))
    (wheel,) = dist.glob("qrelforge-*.whl")
    return wheel


def _check_contents(wheel: Path) -> None:
    """Every module of the checkout, the sample corpus, the Streamlit settings (never secrets.toml) and the
    migrations' own files are in the wheel."""
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {
        path.relative_to(ROOT).as_posix()
        for top in CODE
        for path in (ROOT / top).rglob("*.py")
        if "__pycache__" not in path.parts
    }
    assert modules - names == set()
    corpus = {f"annotate_app/_sample_corpus/{p.name}" for p in (ROOT / "sample_corpus").iterdir()}
    assert {n for n in names if n.startswith("annotate_app/_sample_corpus/")} == corpus
    assert {n for n in names if n.startswith("annotate_app/_streamlit/")} == {
        "annotate_app/_streamlit/config.toml"
    }
    assert {
        "annotate_app/store/migrations/alembic.ini",
        "annotate_app/store/migrations/script.py.mako",
    } <= names


def _environment(tmp_path: Path) -> dict:
    """The process environment without anything that points at the checkout or at another database."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env = {k: v for k, v in env.items() if not k.startswith(("QRELFORGE_", "STREAMLIT_"))}
    return {**env, "PYTHONUNBUFFERED": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def _serve(qrelforge: Path, folder: Path, env: dict, db: str) -> tuple[subprocess.Popen, str, Path]:
    """``qrelforge serve --port 0 --db db`` in ``folder``, in its own process group (as a terminal runs it);
    returns the process, its URL once /_stcore/health answers ok, and its log."""
    log = folder / "serve.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [str(qrelforge), "serve", "--port", "0", "--db", db],
            cwd=folder,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"qrelforge serve exited with {process.returncode}:\n{log.read_text()}", pytrace=False
            )
        found = re.search(r"URL: (http://127\.0\.0\.1:\d+)", log.read_text(errors="replace"))
        if found and _get(found.group(1) + "/_stcore/health") == b"ok":
            return process, found.group(1), log
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)
    pytest.fail(f"qrelforge serve did not answer in 120 s:\n{log.read_text()}", pytrace=False)


def _get(url: str) -> bytes | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read()
    except OSError:
        return None


@pytest.mark.slow
@pytest.mark.e2e
def test_the_wheel_works_from_another_folder(tmp_path, browser):
    wheel = _build(tmp_path)
    _check_contents(wheel)

    env = _environment(tmp_path)
    venv.create(tmp_path / "venv", with_pip=True)
    python, qrelforge = tmp_path / "venv" / "bin" / "python", tmp_path / "venv" / "bin" / "qrelforge"
    elsewhere, other = tmp_path / "elsewhere", tmp_path / "other"
    elsewhere.mkdir()
    other.mkdir()

    # without the app extra: the scoring commands only; serve says what to install, in one line
    _ok(_run([python, "-m", "pip", "install", "-q", wheel], cwd=tmp_path, env=env))
    proc = _run([qrelforge, "serve"], cwd=elsewhere, env=env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        2,
        "",
        "qrelforge: error: `qrelforge serve` needs the app extra: pip install 'qrelforge[app]'\n",
    )

    _ok(_run([python, "-m", "pip", "install", "-q", f"{wheel}[app]"], cwd=tmp_path, env=env))
    where = _ok(
        _run([python, "-c", "import annotate_app; print(annotate_app.__file__)"], cwd=elsewhere, env=env)
    )
    assert Path(where.strip()).is_relative_to(tmp_path / "venv"), where

    # demo-data in one folder (its default database: ./data/qrelforge.db), serve from another with --db
    out = _ok(_run([qrelforge, "demo-data"], cwd=elsewhere, env=env))
    assert out.startswith("project demo: ") and "alice" in out
    database = elsewhere / "data" / "qrelforge.db"
    assert database.is_file()
    process, url, log = _serve(qrelforge, other, env, f"sqlite:///{database}")
    try:
        html = _get(url + "/")
        assert html is not None and b'<div id="root">' in html
        assert b"<script>window.__streamlit=" in html  # annotate_app/server.py's wrapper served the page
        page = browser.new_page()
        page.goto(url)
        for field in ("Username", "Password"):
            page.get_by_label(field, exact=True).wait_for(timeout=60_000)
        assert page.locator('[data-testid="stAppDeployButton"]').count() == 0  # client.toolbarMode minimal
        login(page, url, "alice")  # the demo's user: serve used --db
        # Ctrl+C, with alice's page still connected
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(timeout=30) == 0, log.read_text()
        page.close()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    text = log.read_text()
    assert "Traceback" not in text and "Aborted" not in text, text
