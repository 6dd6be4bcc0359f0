"""The core and the CLI's import path load no editor or model framework."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

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


PACKAGE = Path(__file__).resolve().parents[2] / "server" / "counterfoil"
# The adapters around the core: the daemon, the models, and the terminal's modules.
ADAPTER_PACKAGES = ("lsp", "models")
ADAPTER_MODULES = (
    "__main__",
    "cli",
    "terminal",
    "terminal_text",
    "receipt_commands",
    "doctor",
    "model_download_terminal",
    "command_setup",
)


def core_modules() -> list[Path]:
    top = [path for path in PACKAGE.glob("*.py") if path.stem not in ADAPTER_MODULES]
    return sorted([*top, *(PACKAGE / "receipts").glob("*.py")])


def imported_modules(path: Path, *, lazy: bool = True) -> set[str]:
    """Every module `path` imports, absolute (`counterfoil.models.endpoint`, `json`); without
    `lazy`, only those it imports when it is loaded (not inside a function)."""
    package = "counterfoil" + "".join(f".{part}" for part in path.parent.relative_to(PACKAGE).parts)
    names: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree) if lazy else tree.body:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
                names.add(module)
                names.update(f"{module}.{alias.name}" for alias in node.names)
            elif node.module:
                names.add(node.module)
    return names


def test_no_core_module_imports_an_adapter() -> None:
    adapters = {f"counterfoil.{name}" for name in (*ADAPTER_PACKAGES, *ADAPTER_MODULES)}
    crossing = sorted(
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in core_modules()
        for name in imported_modules(path)
        if any(name == adapter or name.startswith(adapter + ".") for adapter in adapters)
    )
    assert crossing == []


def test_the_core_loads_only_the_standard_library() -> None:
    """An optional library (signing's `cryptography`) is imported only where it is used."""
    outside = sorted(
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in core_modules()
        for name in imported_modules(path, lazy=False)
        if name.split(".")[0] not in (*sys.stdlib_module_names, "counterfoil")
    )
    assert outside == []
