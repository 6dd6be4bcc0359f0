"""A change that leaves a Python module reading a name nothing defines (pyflakes' F821) is
refused before the person is asked, as a change that does not parse is: the model is told the
name, its line and the lines around it. Only names the module did not already leave undefined
count, and a module whose names cannot be known from its text is not judged."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ToolAction
from counterfoil.gate.python_names import introduced_names, undefined_names
from counterfoil.receipts import ReceiptStore
from counterfoil.step_facts import UndefinedName

REPORT = '''"""One line per order."""

from orders import calc_total


def line(name: str, prices: list[float]) -> str:
    return f"{name}: {calc_total(prices, 0.2):.2f}"
'''


def test_a_parameter_renamed_away_leaves_its_use_undefined_at_its_line() -> None:
    renamed = REPORT.replace("def line(name: str,", "def order_total(")

    assert undefined_names(REPORT) == {}
    assert undefined_names(renamed) == {"name": 7}


@pytest.mark.parametrize(
    "module",
    [
        "def f():\n    return A()\n\n\nclass A:\n    pass\n",  # defined later in the module
        "def f():\n    global G\n    G = 1\n\n\ndef g():\n    return G\n",
        "print(__file__, __name__, len([]))\n",  # module names and builtins
        "try:\n    pass\nexcept OSError as error:\n    print(error)\n",
        "if (n := 3) > 2:\n    print(n)\n",
        "from __future__ import annotations\n\n\ndef f(x: Later) -> None:\n    pass\n",
        "class A(Exception):\n    def f(self):\n        return super().f()\n",
    ],
)
def test_names_the_module_defines_anywhere_or_python_gives_are_not_undefined(module: str) -> None:
    assert undefined_names(module) == {}


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("class A:\n    x = 1\n\n    def f(self):\n        return x\n", "x"),  # a class's name
        ("f = lambda q: q + z\n", "z"),
        ("def f(x: Missing) -> None:\n    pass\n", "Missing"),  # evaluated at def time
    ],
)
def test_a_name_only_another_scope_has_is_undefined(module: str, name: str) -> None:
    assert name in undefined_names(module)


@pytest.mark.parametrize(
    "module",
    [
        "from helpers import *\nprint(anything)\n",
        "globals()['made'] = 1\nprint(made)\n",
        "def __getattr__(name):\n    return name\nprint(lazy)\n",
        "def f(:\n",  # does not parse: the parse check says so instead
        "print(missing)\n" + "# padding\n" * 200_000,  # past what the parse check reads
    ],
)
def test_a_module_whose_names_its_text_cannot_show_is_not_judged(module: str) -> None:
    assert undefined_names(module) == {}


def test_only_names_the_change_leaves_undefined_count() -> None:
    before = "print(legacy)\n"

    assert introduced_names(before, "print(legacy)\nprint(other)\n") == {"other": 2}
    assert introduced_names(before, "print(legacy, 1)\n") == {}
    assert introduced_names(None, "print(fresh)\n") == {"fresh": 1}


def test_an_edit_counts_only_a_name_a_function_bound_before() -> None:
    import_renamed = REPORT.replace("from orders import calc_total", "from orders import total")
    parameter_dropped = REPORT.replace("def line(name: str,", "def line(")

    assert introduced_names(REPORT, import_renamed, edit=True) == {}  # the calls come next
    assert introduced_names(REPORT, import_renamed) == {"calc_total": 7}  # a whole-file write
    assert introduced_names(REPORT, parameter_dropped, edit=True) == {"name": 7}


def edit(path: str, old: str, new: str) -> ToolAction:
    return ToolAction("edit_file", {"path": path, "old": old, "new": new})


def test_an_edit_leaving_a_name_undefined_is_refused_before_anyone_is_asked(
    tmp_path: Path,
) -> None:
    (tmp_path / "report.py").write_text(REPORT)
    asked: list[object] = []
    store = ReceiptStore(tmp_path.parent / f"{tmp_path.name}-receipts.jsonl")
    workspace = make_workspace(
        tmp_path, allow_writes=True, confirm_proposal=asked.append, store=store
    )
    workspace.execute_step(ToolAction("read_file", {"path": "report.py"}))

    step = workspace.execute_step(
        edit(
            "report.py",
            "def line(name: str, prices: list[float]) -> str:",
            "def order_total(prices: list[float], tax: float) -> str:",
        )
    )

    assert isinstance(step.detail, UndefinedName)
    assert step.detail.names == (("name", 7),)
    assert step.state == "refused" and asked == []
    assert (tmp_path / "report.py").read_text() == REPORT
    assert store.get(step.call_id or "") is None and workspace.modified_files == ()
    told = step.model_text()
    assert told.startswith(
        "error: refused: your edit_file would leave report.py using a name nothing in it"
        " defines: name (line 7)."
    )
    assert '   7|     return f"{name}: {calc_total(prices, 0.2):.2f}"' in told


def test_a_rename_made_in_two_edits_is_asked_at_each(tmp_path: Path) -> None:
    (tmp_path / "report.py").write_text(REPORT)
    workspace = make_workspace(tmp_path, allow_writes=True, answer=True)
    workspace.execute_step(ToolAction("read_file", {"path": "report.py"}))

    first = workspace.execute_step(
        edit("report.py", "from orders import calc_total", "from orders import order_total")
    )
    second = workspace.execute_step(edit("report.py", "{calc_total(", "{order_total("))

    assert (first.observation, second.observation) == ("edited report.py", "edited report.py")
    assert "calc_total" not in (tmp_path / "report.py").read_text()


def test_a_module_that_already_read_an_undefined_name_can_still_be_changed(
    tmp_path: Path,
) -> None:
    (tmp_path / "legacy.py").write_text("print(configured)\nLIMIT = 1\n")
    workspace = make_workspace(tmp_path, allow_writes=True, answer=True)
    workspace.execute_step(ToolAction("read_file", {"path": "legacy.py"}))

    step = workspace.execute_step(edit("legacy.py", "LIMIT = 1", "LIMIT = 2"))

    assert step.observation == "edited legacy.py"
    assert (tmp_path / "legacy.py").read_text() == "print(configured)\nLIMIT = 2\n"


def test_a_file_that_is_not_python_is_not_judged_for_names(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("print(x)\n")
    workspace = make_workspace(tmp_path, allow_writes=True, answer=True)
    workspace.execute_step(ToolAction("read_file", {"path": "notes.txt"}))

    step = workspace.execute_step(edit("notes.txt", "print(x)", "print(y)"))

    assert step.observation == "edited notes.txt"
