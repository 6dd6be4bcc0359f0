"""No test races a clock: CI runs the suite on a busy two-core machine, where any "within N
seconds" can be missed and any "sleep, then it has happened" can pass without proving anything.
A test asserts *that* something happens, by handshake, with only a generous guard against a
hang; latency figures belong in bench/.

Two checks over every test file (the course's copied tests aside):
- no assertion compares an elapsed time (an expression that reads `time.monotonic`,
  `time.perf_counter` or `time.time`, or a name assigned from one) with a bound under
  MIN_BOUND_SECONDS;
- no `time.sleep(x)` or `await asyncio.sleep(x)` (x other than 0) stands alone in a test
  function's own body as a wait: a sleep inside a loop that polls for something is a
  handshake, and one inside a fake server or model is that fake's behaviour. A sleep that is
  itself the behaviour under test carries EXEMPTION and its reason on its line.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
MIN_BOUND_SECONDS = 10.0
CLOCKS = {"monotonic", "perf_counter", "time", "monotonic_ns", "perf_counter_ns"}
EXEMPTION = "# the sleep is the behaviour:"
SKIPPED = ("course/",)


def checked_test_files() -> list[Path]:
    return sorted(
        path
        for path in TESTS.rglob("*.py")
        if not path.relative_to(TESTS).as_posix().startswith(SKIPPED)
    )


def reads_a_clock(node: ast.AST, clocked: set[str]) -> bool:
    """Whether `node` reads the wall or monotonic clock, directly or through a name that did."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute):
            owner = inner.func.value
            if inner.func.attr in CLOCKS and isinstance(owner, ast.Name) and owner.id == "time":
                return True
        if isinstance(inner, ast.Name) and inner.id in clocked:
            return True
    return False


def small_bound(node: ast.AST, constants: dict[str, float]) -> bool:
    """Whether `node` is a number (or a module constant naming one) under the minimum bound."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return not isinstance(node.value, bool) and node.value < MIN_BOUND_SECONDS
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id] < MIN_BOUND_SECONDS
    return False


def module_constants(tree: ast.Module) -> dict[str, float]:
    constants: dict[str, float] = {}
    for statement in tree.body:
        if (
            isinstance(statement, ast.Assign)
            and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, int | float)
        ):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    constants[target.id] = float(statement.value.value)
    return constants


def clock_assertions(source: str) -> list[int]:
    """Lines of assertions that bound an elapsed time under the minimum."""
    tree = ast.parse(source)
    constants = module_constants(tree)
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        clocked: set[str] = set()
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and reads_a_clock(node.value, clocked):
                clocked |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        for node in ast.walk(function):
            if not isinstance(node, ast.Assert):
                continue
            for compare in ast.walk(node.test):
                if not isinstance(compare, ast.Compare):
                    continue
                sides = [compare.left, *compare.comparators]
                if any(reads_a_clock(side, clocked) for side in sides) and any(
                    small_bound(side, constants) for side in sides
                ):
                    found.append(node.lineno)
    return sorted(set(found))


def is_a_sleep(call: ast.AST) -> bool:
    """`time.sleep(x)` or `asyncio.sleep(x)` with x not a literal 0 (a mere yield)."""
    if isinstance(call, ast.Await):
        call = call.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return False
    owner = call.func.value
    if not (
        call.func.attr == "sleep"
        and isinstance(owner, ast.Name)
        and owner.id in {"time", "asyncio"}
    ):
        return False
    return not (call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value == 0)


def bare_sleeps(source: str) -> list[int]:
    """Lines of sleeps that stand alone in a test function's own body (not in a loop, not in a
    function defined inside it) without the exemption."""
    lines = source.splitlines()
    found = []

    def visit(statements: list[ast.stmt]) -> None:
        for statement in statements:
            if isinstance(statement, ast.Expr) and is_a_sleep(statement.value):
                if EXEMPTION not in lines[statement.lineno - 1]:
                    found.append(statement.lineno)
            elif isinstance(statement, ast.If | ast.With | ast.AsyncWith):
                visit(statement.body)
                visit(getattr(statement, "orelse", []))
            elif isinstance(statement, ast.Try):
                for block in (statement.body, statement.orelse, statement.finalbody):
                    visit(block)
                for handler in statement.handlers:
                    visit(handler.body)

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test_"
        ):
            visit(node.body)
    return found


def test_no_assertion_bounds_an_elapsed_time_under_ten_seconds() -> None:
    offenders = [
        f"{path.relative_to(TESTS)}:{line}"
        for path in checked_test_files()
        for line in clock_assertions(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "assert that it happens (a handshake), measure speed in bench/"


def test_no_test_sleeps_and_takes_it_as_having_waited() -> None:
    offenders = [
        f"{path.relative_to(TESTS)}:{line}"
        for path in checked_test_files()
        for line in bare_sleeps(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], f"wait for what the test checks, or mark it with {EXEMPTION!r}"


def test_the_lint_finds_a_short_elapsed_bound_and_a_bare_sleep() -> None:
    source = (
        "import time\n"
        "LIMIT = 0.5\n"
        "def test_fast():\n"
        "    started = time.monotonic()\n"
        "    elapsed = time.monotonic() - started\n"
        "    assert elapsed < 5\n"
        "    assert time.perf_counter() - started <= LIMIT\n"
        "    assert time.monotonic() - started < 60\n"
        "    time.sleep(1.5)\n"
        "    time.sleep(0)\n"
        "    time.sleep(0.05)  " + EXEMPTION + " the coarse clock must move\n"
        "    while not ready():\n"
        "        time.sleep(0.01)\n"
    )
    assert clock_assertions(source) == [6, 7]
    assert bare_sleeps(source) == [9]


def test_the_lint_reads_every_test_file() -> None:
    assert re.search(r"lsp/test_\w+\.py", " ".join(p.as_posix() for p in checked_test_files()))
