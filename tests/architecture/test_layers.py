"""The core and the CLI's import path load no editor or model framework."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

FRAMEWORKS = ("mlx", "mlx_lm", "pygls", "lsprotocol", "llguidance", "numpy", "mcp")


def test_importing_the_core_the_cli_and_the_model_factory_loads_no_framework() -> None:
    program = (
        "import sys\n"
        "import counterfoil, counterfoil.cli.main, counterfoil.models\n"
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
    "counterfoil.gate.workspace",
    "counterfoil.loop",
    "counterfoil.search.engine",
    "counterfoil.commands.runner",
    "counterfoil.cli",
    "counterfoil.cli.main",
    "counterfoil.cli.doctor",
    "counterfoil.cli.terminal",
    "counterfoil.cli.command_setup",
    "counterfoil.cli.receipts",
    "counterfoil.cli.model_download",
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
        "print(sorted(before), 'counterfoil.gate.workspace' in sys.modules)\n"
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


PACKAGE = Path(__file__).resolve().parents[2] / "server" / "counterfoil"
# The adapters around the core: the daemon, the models, the terminal, the offline test models.
ADAPTER_PACKAGES = ("lsp", "models", "cli", "testing")
ADAPTER_MODULES = ("__main__",)
# The core's own folders: the file layer, the gate, what the model is shown, search, settings,
# branches, the receipt log, commands with the tree changes they make, and the evidence exported
# with a commit.
CORE_PACKAGES = (
    "files",
    "receipts",
    "commands",
    "attestation",
    "gate",
    "context",
    "search",
    "settings",
    "branches",
    "protocol",
    "mcp",  # the `mcp` SDK only in mcp/connection.py, imported when a server starts
)


def core_modules() -> list[Path]:
    top = [path for path in PACKAGE.glob("*.py") if path.stem not in ADAPTER_MODULES]
    folders = [path for name in CORE_PACKAGES for path in (PACKAGE / name).rglob("*.py")]
    return sorted([*top, *folders])


def imported_modules(path: Path, *, lazy: bool = True) -> set[str]:
    """Every module `path` imports, absolute (`counterfoil.models.server.endpoint`, `json`); without
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
    # Every folder is placed on one side of the line (evals and sessions are neither yet).
    folders = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()}
    assert folders - {*ADAPTER_PACKAGES, *CORE_PACKAGES} == {"evals", "sessions"}
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


def module_graph() -> dict[str, set[str]]:
    """Every module of the package and the package modules it imports (function-level imports
    included): `from X import name` counts as importing X.name where that is a module, else X."""
    modules = {
        ".".join(("counterfoil", *path.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(
            ".__init__"
        ): path
        for path in PACKAGE.rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names if alias.name in modules)
            elif isinstance(node, ast.ImportFrom):
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = (
                    (f"{base}.{node.module}" if node.module else base)
                    if node.level
                    else node.module or ""
                )
                named = {f"{module}.{alias.name}" for alias in node.names} & modules.keys()
                edges |= named
                if len(named) < len(node.names) and module in modules:
                    edges.add(module)
        graph[name] = edges - {name}
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in sorted(graph[module]):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            part = [stack.pop()]
            while part[-1] != module:
                part.append(stack.pop())
            if len(part) > 1:
                circles.append(sorted(part))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def test_no_module_imports_itself_through_others() -> None:
    assert import_circles(module_graph()) == []


# The front ends: each may import the core and the models, never the other. `__main__` is the
# one place where both are started; the models and the test models import neither.
FRONT_ENDS = ("counterfoil.cli", "counterfoil.lsp")


def test_neither_front_end_imports_the_other_and_the_models_import_neither() -> None:
    def inside(module: str, folder: str) -> bool:
        return module == folder or module.startswith(folder + ".")

    crossing = sorted(
        f"{module} imports {imported}"
        for module, imports in module_graph().items()
        for imported in imports
        for front_end in FRONT_ENDS
        if inside(imported, front_end)
        and not inside(module, front_end)
        and module != "counterfoil.__main__"
    )
    assert crossing == []


# MLX at one boundary, as mlx-lm keeps its laziness: `models/mlx/` is the only product folder
# that imports MLX or mlx-lm, and outside it only `models/__init__.py` imports from it, inside
# functions (`testing/` builds tiny MLX models for tests and benches; it is not product code).
MLX_FOLDER = PACKAGE / "models" / "mlx"
MLX_ENTRY = PACKAGE / "models" / "__init__.py"


def outside_the_mlx_folder() -> list[Path]:
    return sorted(
        path
        for path in PACKAGE.rglob("*.py")
        if not path.is_relative_to(MLX_FOLDER) and not path.is_relative_to(PACKAGE / "testing")
    )


def test_only_the_mlx_folder_imports_mlx() -> None:
    importing = sorted(
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in outside_the_mlx_folder()
        for name in imported_modules(path)
        if name.split(".")[0] in ("mlx", "mlx_lm")
    )
    assert importing == []


def test_the_mlx_folder_is_entered_only_through_the_model_factory_when_asked() -> None:
    def into_mlx(names: set[str]) -> list[str]:
        return sorted(
            name
            for name in names
            if name == "counterfoil.models.mlx" or name.startswith("counterfoil.models.mlx.")
        )

    entering = sorted(
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in outside_the_mlx_folder()
        if path != MLX_ENTRY
        for name in into_mlx(imported_modules(path))
    )
    assert entering == []
    assert into_mlx(imported_modules(MLX_ENTRY, lazy=False)) == []
    assert into_mlx(imported_modules(MLX_ENTRY))  # the entry is there, inside functions
