"""The core and the CLI's import path load no editor or model framework."""

from __future__ import annotations

import subprocess
import sys

import pytest

FRAMEWORKS = ("mlx", "mlx_lm", "pygls", "lsprotocol", "llguidance", "numpy")


def test_importing_the_core_the_cli_and_the_model_factory_loads_no_framework() -> None:
    program = (
        "import sys\n"
        "import counterfoil, counterfoil.cli, counterfoil.models\n"
        f"loaded = sorted({{name.split('.')[0] for name in sys.modules}} & set({FRAMEWORKS!r}))\n"
        "print(','.join(loaded))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )

    assert completed.stdout.strip() == ""


def test_the_scripted_model_runs_without_any_framework() -> None:
    program = (
        "import sys, tempfile, pathlib\n"
        "from counterfoil.models import load_generate\n"
        "path = pathlib.Path(tempfile.mkdtemp()) / 'r.jsonl'\n"
        'path.write_text(\'{"final":"done"}\\n\')\n'
        "print(load_generate(f'scripted:{path}')([]))\n"
        "assert 'mlx' not in sys.modules\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )

    assert completed.stdout.strip() == '{"final":"done"}'


NOT_ON_THE_START_PATH = (
    "counterfoil.lsp.session",
    "counterfoil.workspace",
    "counterfoil.loop",
    "counterfoil.search",
    "counterfoil.commands",
    "counterfoil.cli",
    "counterfoil.doctor",
    "counterfoil.terminal",
    "counterfoil.command_setup",
    "counterfoil.receipt_commands",
    "counterfoil.model_download_terminal",
)


def test_the_daemons_start_path_imports_neither_the_cli_nor_the_session() -> None:
    """`python -m counterfoil serve` goes straight to the daemon, whose session (and with it
    the workspace, the loop and the models) is made at the first request after `initialize`:
    the start is the editor's wait."""
    pytest.importorskip("pygls")
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "counterfoil", "serve"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,  # the daemon's exit status on a closed stdin is not what is tested
    )
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in completed.stderr.splitlines()
        if line.startswith("import time:")
    }

    assert "counterfoil.lsp.server" in imported
    assert imported.isdisjoint(NOT_ON_THE_START_PATH)


def test_importing_the_package_loads_no_module_until_a_name_is_used() -> None:
    program = (
        "import sys, counterfoil\n"
        "before = {name for name in sys.modules if name.startswith('counterfoil.')}\n"
        "counterfoil.Workspace\n"
        "print(sorted(before), 'counterfoil.workspace' in sys.modules)\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )

    assert completed.stdout.strip() == "[] True"


def test_the_course_names_import_from_the_root_without_a_framework() -> None:
    program = (
        "import sys\n"
        "from counterfoil import *\n"
        "assert KvPrefixGenerator.__name__ == 'KvPrefixGenerator'\n"
        f"print(sorted({{name.split('.')[0] for name in sys.modules}} & set({FRAMEWORKS!r})))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )

    assert completed.stdout.strip() == "[]"
