"""Names a Python module uses that nothing defines: pyflakes' "undefined name" (F821), the one
check of SWE-agent's lint gate that a parse does not make.

A small model renaming a function across two files rewrote the caller's `def` line with the
callee's signature: the module still parsed, and its body now used a parameter that no longer
existed. The gate refuses such a change, with the line, before anyone is asked: a whole-file
write that leaves the module using a name it did not use undefined before, and an edit (one of
several a change may take) only where the name is one a function bound before, since renaming
an import before its calls is a step, not a break. Judged with `symtable` (the compiler's own
scopes), never by running the code; a module that imports `*` or writes to `globals()` can
define names no reading can see, so nothing is judged there.
"""

from __future__ import annotations

import ast
import builtins
import symtable
from collections.abc import Iterator

from .syntax import MAX_CHECKED_CHARS

# Names every module has without defining them.
MODULE_NAMES = frozenset(
    {"__name__", "__file__", "__doc__", "__spec__", "__loader__", "__package__", "__path__"}
    | {"__builtins__", "__annotations__", "__dict__", "__cached__", "__debug__"}
)
KNOWN = frozenset(dir(builtins)) | MODULE_NAMES


def undefined_names(text: str) -> dict[str, int]:
    """Each name the module reads that no scope defines and that is not a builtin, with the
    first line that reads a name so spelled (in a rare module that also binds it in an inner
    scope, that line may be the inner one); empty when the module does not parse or its
    globals cannot be known, or it is past the size the parse check reads."""
    if len(text) > MAX_CHECKED_CHARS:
        return {}
    try:
        tree = ast.parse(text)
        table = symtable.symtable(text, "<module>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    if _dynamic_globals(tree):
        return {}
    defined = _module_names(table)
    defined |= {
        symbol.get_name()
        for scope in _scopes(table)
        for symbol in scope.get_symbols()
        if symbol.is_declared_global() and (symbol.is_assigned() or symbol.is_imported())
    }
    used = {
        symbol.get_name()
        for scope in (table, *_scopes(table))
        for symbol in scope.get_symbols()
        if symbol.is_referenced() and symbol.is_global()
    }
    missing = used - defined - KNOWN
    if not missing:
        return {}
    lines: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in missing and isinstance(node.ctx, ast.Load):
            lines[node.id] = min(lines.get(node.id, node.lineno), node.lineno)
    return dict(sorted(lines.items(), key=lambda item: (item[1], item[0])))


def introduced_names(before: str | None, after: str, *, edit: bool = False) -> dict[str, int]:
    """The undefined names of `after` that `before` (None: a new file) did not have. For an
    `edit` (one of several a change may take), only names a function bound before (a parameter
    or a local the module does not also define): a rename's first edit, an import renamed
    before the calls, leaves module names undefined that its next edit defines again."""
    earlier = undefined_names(before) if before is not None else {}
    found = {name: line for name, line in undefined_names(after).items() if name not in earlier}
    if not edit or before is None or not found:
        return found
    bound = _function_bindings(before)
    return {name: line for name, line in found.items() if name in bound}


def _function_bindings(text: str) -> set[str]:
    """Names some function of the module binds (its parameters and locals) that the module
    itself does not define."""
    try:
        table = symtable.symtable(text, "<module>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    module = _module_names(table)
    local = {
        symbol.get_name()
        for scope in _scopes(table)
        if scope.get_type() == "function"
        for symbol in scope.get_symbols()
        if symbol.is_parameter() or (symbol.is_local() and symbol.is_assigned())
    }
    return local - module


def _module_names(table: symtable.SymbolTable) -> set[str]:
    """The names the module itself binds: assigned, imported, or a `def` or `class`."""
    return {
        symbol.get_name()
        for symbol in table.get_symbols()
        if symbol.is_assigned() or symbol.is_imported() or symbol.is_namespace()
    }


def _scopes(table: symtable.SymbolTable) -> Iterator[symtable.SymbolTable]:
    for child in table.get_children():
        yield child
        yield from _scopes(child)


def _dynamic_globals(tree: ast.Module) -> bool:
    """The module imports `*`, or calls `globals()`, `vars()`, `exec` or `eval`, or defines a
    module `__getattr__`: it may define names no reading of it shows."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            return True
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"globals", "vars", "exec", "eval", "locals"}
        ):
            return True
    return any(
        isinstance(node, ast.FunctionDef) and node.name == "__getattr__" for node in tree.body
    )
