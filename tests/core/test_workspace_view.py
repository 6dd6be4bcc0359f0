"""The action schema built from what the workspace has shown the model: a value it has not
been shown cannot be expressed."""

from __future__ import annotations

import re
from typing import Any

from counterfoil.tools import action_schema
from counterfoil.workspace_view import MAX_SHOWN_NAMES, FileRead, WorkspaceView

WRITES = frozenset({"list_files", "read_file", "write_file", "edit_file"})
MODULE = "def greet(name):\n    return 'hi ' + name\n\n\ndef main():\n    print(greet('x'))\n"


def expressible(schema: dict[str, Any], action: dict[str, Any]) -> bool:
    """Whether one branch of `schema` takes `action` (the flat subset the builder writes)."""
    return any(_takes(branch, action) for branch in schema["anyOf"])


def _takes(branch: dict[str, Any], action: dict[str, Any]) -> bool:
    properties = branch["properties"]
    if set(action) - set(properties) or set(branch["required"]) - set(action):
        return False
    return all(_value(properties[name], value) for name, value in action.items())


def _value(schema: dict[str, Any], value: Any) -> bool:
    if "anyOf" in schema:
        return any(_value(choice, value) for choice in schema["anyOf"])
    if "const" in schema:
        return bool(schema["const"] == value)
    if "enum" in schema:
        return value in schema["enum"]
    if "pattern" in schema:
        return isinstance(value, str) and re.search(schema["pattern"], value) is not None
    return isinstance(value, str) if schema.get("type") == "string" else True


def view(**fields: Any) -> WorkspaceView:
    shown = {"files": ("app.py", "README.md", "src/util.py"), "folders": ("src",)}
    existing = {"existing": ("app.py", "README.md", "src", "src/util.py")}
    return WorkspaceView(**{**shown, **existing, **fields})


def edit(path: str, old: str, new: str = "x") -> dict[str, Any]:
    return {"tool": "edit_file", "path": path, "old": old, "new": new}


def test_a_read_can_name_a_shown_file_and_not_one_that_does_not_exist() -> None:
    schema = action_schema(WRITES, (), view=view())
    assert expressible(schema, {"tool": "read_file", "path": "src/util.py"})
    assert not expressible(schema, {"tool": "read_file", "path": "src/helpers.py"})
    assert not expressible(schema, {"tool": "read_file", "path": "<file>"})


def test_a_listing_can_name_the_root_or_a_shown_folder_only() -> None:
    schema = action_schema(WRITES, (), view=view())
    assert expressible(schema, {"tool": "list_files", "path": "src"})
    assert expressible(schema, {"tool": "list_files", "path": "."})
    assert not expressible(schema, {"tool": "list_files", "path": "lib"})


def test_no_listing_is_offered_while_the_overview_names_every_file() -> None:
    """The 1.5B spent the first of its eight steps listing a folder of three files it had been
    shown."""
    listing = {"tool": "list_files", "path": "."}
    assert not expressible(action_schema(WRITES, (), view=view(listed_whole=True)), listing)
    assert expressible(action_schema(WRITES, (), view=view(listed_whole=False)), listing)


def test_past_the_budget_a_read_takes_any_relative_path() -> None:
    many = tuple(f"pkg/module_{number}.py" for number in range(MAX_SHOWN_NAMES + 1))
    schema = action_schema(WRITES, (), view=view(files=many))
    assert expressible(schema, {"tool": "read_file", "path": ".github/workflows/ci.yml"})
    assert not expressible(schema, {"tool": "read_file", "path": "a b.py"})


def test_an_edit_of_an_unread_file_cannot_be_expressed() -> None:
    schema = action_schema(WRITES, (), view=view(reads=(FileRead("app.py", MODULE),)))
    assert expressible(schema, edit("app.py", "    return 'hi ' + name"))
    assert not expressible(schema, edit("src/util.py", "    return 'hi ' + name"))


def test_with_nothing_read_no_edit_is_offered() -> None:
    schema = action_schema(WRITES, (), view=view())
    tools = {branch["properties"].get("tool", {}).get("const") for branch in schema["anyOf"]}
    assert "edit_file" not in tools


def test_old_equal_to_the_path_cannot_be_expressed() -> None:
    schema = action_schema(WRITES, (), view=view(reads=(FileRead("app.py", MODULE),)))
    assert not expressible(schema, edit("app.py", "app.py"))
    assert not expressible(schema, edit("app.py", "<lines of the file as they are>"))


def test_old_is_whole_lines_occurring_once() -> None:
    schema = action_schema(WRITES, (), view=view(reads=(FileRead("app.py", MODULE),)))
    assert expressible(schema, edit("app.py", "def main():\n    print(greet('x'))"))
    assert not expressible(schema, edit("app.py", "return 'hi'"))  # part of a line
    assert not expressible(schema, edit("app.py", ""))  # never an empty or blank run


def test_a_read_range_limits_old_to_the_lines_it_showed() -> None:
    read = FileRead("app.py", MODULE, shown=(5, 6))
    schema = action_schema(WRITES, (), view=view(reads=(read,)))
    assert expressible(schema, edit("app.py", "    print(greet('x'))"))
    assert not expressible(schema, edit("app.py", "def greet(name):"))


def test_an_old_text_sent_back_unchanged_is_not_offered_again() -> None:
    read = FileRead("app.py", MODULE, sent_unchanged=("def main():",))
    schema = action_schema(WRITES, (), view=view(reads=(read,)))
    assert not expressible(schema, edit("app.py", "def main():", "def main() -> None:"))
    assert expressible(schema, edit("app.py", "def main():\n    print(greet('x'))"))


PATCHES = frozenset({"list_files", "read_file", "write_file", "patch_file"})


def patch(path: str, diff: str) -> dict[str, Any]:
    return {"tool": "patch_file", "path": path, "diff": diff}


def test_a_hunk_is_lines_of_the_file_read_in_order_with_new_lines_after_plus() -> None:
    schema = action_schema(PATCHES, (), view=view(reads=(FileRead("app.py", MODULE),)))
    assert expressible(schema, patch("app.py", "-    return 'hi ' + name\n+    return name\n"))
    assert expressible(schema, patch("app.py", "@@ -5,2 +5,2 @@\n def main():\n+    pass\n"))
    assert expressible(schema, patch("app.py", " def greet(name):\n-    return 'hi ' + name\n"))
    assert expressible(schema, patch("app.py", "\n\n def main():\n+    pass\n"))  # bare blanks
    assert not expressible(schema, patch("src/util.py", " def main():\n"))  # not read
    assert not expressible(schema, patch("app.py", "-app.py\n+main.py\n"))  # a copied path
    assert not expressible(schema, patch("app.py", "-    return 'hello'\n+x\n"))  # invented
    # the lines' order is the gate's to refuse (tests/gate/test_patch_file.py), not the grammar's
    assert expressible(schema, patch("app.py", " def main():\n def greet(name):\n+x\n"))
    assert not expressible(schema, patch("app.py", "-<lines of the file as they are>\n"))
    assert not expressible(schema, patch("app.py", "-def main():"))  # each line ends


def test_a_hunk_names_only_the_lines_a_ranged_read_showed() -> None:
    read = FileRead("app.py", MODULE, shown=(5, 6))
    schema = action_schema(PATCHES, (), view=view(reads=(read,)))
    assert expressible(schema, patch("app.py", " def main():\n+    pass\n"))
    assert not expressible(schema, patch("app.py", "-def greet(name):\n"))


def test_a_rewrite_needs_the_whole_file_read() -> None:
    ranged = FileRead("app.py", MODULE, shown=(1, 2))
    whole = FileRead("README.md", "# Greet\n")
    schema = action_schema(WRITES, (), view=view(reads=(ranged, whole)))
    assert expressible(schema, {"tool": "write_file", "path": "README.md", "content": "x"})
    assert not expressible(schema, {"tool": "write_file", "path": "app.py", "content": "x"})


def test_a_new_file_can_be_written_where_nothing_is() -> None:
    schema = action_schema(WRITES, (), view=view())
    assert expressible(schema, {"tool": "write_file", "path": "src/new.py", "content": "x"})
    assert expressible(schema, {"tool": "write_file", "path": "app2.py", "content": "x"})
    assert not expressible(schema, {"tool": "write_file", "path": "src/util.py", "content": ""})
    assert not expressible(schema, {"tool": "write_file", "path": "src", "content": "x"})


def test_a_new_file_is_written_only_under_the_paths_granted() -> None:
    schema = action_schema(WRITES, (), view=view(new_files_under=("src", "NOTES.md")))
    assert expressible(schema, {"tool": "write_file", "path": "src/new.py", "content": "x"})
    assert expressible(schema, {"tool": "write_file", "path": "NOTES.md", "content": "x"})
    assert not expressible(schema, {"tool": "write_file", "path": "new.py", "content": "x"})


def test_no_new_file_can_be_written_under_a_file_that_exists() -> None:
    files = ("app.py", "README.md", "src/util.py")
    for under in (None, ("README.md", "src")):
        schema = action_schema(WRITES, (), view=view(existing_files=files, new_files_under=under))
        for path in ("README.md/4", "app.py/x/y", "src/util.py/new"):
            assert not expressible(schema, {"tool": "write_file", "path": path, "content": "x"})
        assert expressible(schema, {"tool": "write_file", "path": "src/new.py", "content": "x"})


def test_without_a_view_the_schema_is_the_tools_alone() -> None:
    schema = action_schema(WRITES, ())
    assert expressible(schema, edit("anything", "invented"))


def test_a_file_the_conversation_shows_whole_and_unchanged_is_not_read_again() -> None:
    schema = action_schema(WRITES, (), view=view(shown_whole=("app.py",)))
    assert not expressible(schema, {"tool": "read_file", "path": "app.py"})
    assert expressible(schema, {"tool": "read_file", "path": "README.md"})


def test_with_every_file_shown_whole_no_read_is_offered() -> None:
    shown = ("app.py", "README.md", "src/util.py")
    schema = action_schema(WRITES, (), view=view(shown_whole=shown))
    tools = {branch["properties"].get("tool", {}).get("const") for branch in schema["anyOf"]}
    assert "read_file" not in tools and "list_files" in tools


def test_with_every_file_there_shown_whole_no_search_is_offered() -> None:
    tools = WRITES | {"search_files"}
    every = ("app.py", "README.md", "src/util.py")

    def offered(**fields: Any) -> bool:
        schema = action_schema(tools, (), view=view(existing_files=every, **fields))
        return expressible(schema, {"tool": "search_files", "pattern": "greet"})

    assert offered(shown_whole=("app.py", "README.md"))
    assert not offered(shown_whole=every)


def test_while_a_file_the_task_refers_to_is_unread_no_change_can_be_expressed() -> None:
    read = FileRead("app.py", MODULE)
    waiting = view(reads=(read,), read_first=("README.md",))
    assert not expressible(action_schema(WRITES, (), view=waiting), edit("app.py", "def main():"))
    new_file = {"tool": "write_file", "path": "notes.txt", "content": "x"}
    assert not expressible(action_schema(WRITES, (), view=waiting), new_file)
    assert expressible(
        action_schema(WRITES, (), view=waiting), {"tool": "read_file", "path": "README.md"}
    )
    ready = view(reads=(read,))
    assert expressible(action_schema(WRITES, (), view=ready), edit("app.py", "def main():"))


def test_a_view_that_offers_no_final_answer_offers_the_tools_alone() -> None:
    final = {"final": "done"}
    assert expressible(action_schema(WRITES, (), view=view()), final)
    assert not expressible(action_schema(WRITES, (), view=view(final_offered=False)), final)
    assert expressible(
        action_schema(WRITES, (), view=view(final_offered=False)),
        {"tool": "read_file", "path": "app.py"},
    )
    # With no tool to call, the final answer is what is left.
    assert expressible(action_schema(frozenset(), (), view=view(final_offered=False)), final)
