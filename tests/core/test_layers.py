"""The core and the CLI's import path load no editor or model framework."""

from __future__ import annotations

import subprocess
import sys

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
