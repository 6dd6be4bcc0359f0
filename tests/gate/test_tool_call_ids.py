"""Tool call ids: counted from one, never reused, and a repeated call answered from its receipt."""

from __future__ import annotations

from pathlib import Path

from tests.gate.gate_doubles import (
    APPEND_MARK,
    Operator,
    commands,
    run,
    writable,
    write,
)

from counterfoil import (
    EffectReceipt,
    ReceiptStore,
)


def test_effects_get_call_ids_counting_from_one(tmp_path: Path) -> None:
    workspace = writable(tmp_path, Operator())
    workspace.execute(write("a.md", "a\n"))
    workspace.execute(write("b.md", "b\n"))
    store = workspace.receipt_store
    assert [receipt.tool_call_id for receipt in store.receipts()] == ["call-1", "call-2"]
    assert store.get("call-1").result == "wrote a.md"  # type: ignore[union-attr]
    assert store.get("call-2").result == "wrote b.md"  # type: ignore[union-attr]


def test_direct_effect_methods_allocate_ids_and_record_receipts(tmp_path: Path) -> None:
    workspace = writable(tmp_path, Operator())
    assert workspace.write_file("a.md", "a\n") == "wrote a.md"
    assert workspace.edit_file("a.md", "a", "b") == "edited a.md"
    assert [
        (receipt.tool_call_id, receipt.tool) for receipt in workspace.receipt_store.receipts()
    ] == [("call-1", "write_file"), ("call-2", "edit_file")]


def test_call_ids_skip_ids_already_in_the_store(tmp_path: Path) -> None:
    store = ReceiptStore()
    for taken in ("call-1", "call-2", "call-4"):
        store.put(
            EffectReceipt(
                taken, "write_file", {"path": "x", "content": ""}, "ok", "wrote x", ("x",)
            )
        )
    workspace = writable(tmp_path, Operator(), store)
    workspace.execute(write("a.md", "a\n"))
    workspace.execute(write("b.md", "b\n"))
    assert store.get("call-3").result == "wrote a.md"  # type: ignore[union-attr]
    assert store.get("call-5").result == "wrote b.md"  # type: ignore[union-attr]


def test_call_ids_continue_after_a_reopened_log(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    log = tmp_path / "receipts.jsonl"
    writable(tmp_path / "project", Operator(), ReceiptStore(log)).execute(write("a.md", "a\n"))
    reopened = ReceiptStore(log)
    writable(tmp_path / "project", Operator(), reopened).execute(write("b.md", "b\n"))
    assert [(receipt.tool_call_id, receipt.result) for receipt in reopened.receipts()] == [
        ("call-1", "wrote a.md"),
        ("call-2", "wrote b.md"),
    ]


def test_call_id_is_used_even_when_the_call_is_denied(tmp_path: Path) -> None:
    operator = Operator(answer=False)
    workspace = writable(tmp_path, operator)
    assert workspace.execute(write("a.md", "a\n")) == "error: operator denied the tool action"
    operator.answer = True
    workspace.execute(write("b.md", "b\n"))
    store = workspace.receipt_store
    assert store.get("call-1") is None
    assert store.get("call-2").result == "wrote b.md"  # type: ignore[union-attr]


def test_call_id_is_used_even_when_the_call_is_refused(tmp_path: Path) -> None:
    workspace = writable(tmp_path, Operator())
    assert workspace.execute(write("missing/a.md", "a\n")).startswith("error: ")
    workspace.execute(write("b.md", "b\n"))
    assert [receipt.tool_call_id for receipt in workspace.receipt_store.receipts()] == ["call-2"]


def test_given_tool_call_id_names_the_receipt(tmp_path: Path) -> None:
    workspace = writable(tmp_path, Operator())
    workspace.execute(write("a.md", "a\n"), "editor-7")
    assert workspace.receipt_store.get("editor-7").result == "wrote a.md"  # type: ignore[union-attr]
    assert workspace.receipt_store.get("call-1") is None


def test_same_id_and_action_returns_the_stored_result_without_asking(tmp_path: Path) -> None:
    operator = Operator()
    workspace = writable(tmp_path, operator)
    action = write("notes.md", "first\n")
    assert workspace.execute(action, "retry-1") == "wrote notes.md"
    (tmp_path / "notes.md").write_text("edited by hand\n")
    assert workspace.execute(action, "retry-1") == "wrote notes.md"
    assert (tmp_path / "notes.md").read_text() == "edited by hand\n"
    assert len(operator.asked) == 1
    assert len(workspace.receipt_store) == 1


def test_same_id_and_command_is_not_run_again(tmp_path: Path) -> None:
    operator = Operator()
    workspace = commands(tmp_path, operator, APPEND_MARK)
    first = workspace.execute(run(APPEND_MARK), "check-1")
    assert workspace.execute(run(APPEND_MARK), "check-1") == first
    assert (tmp_path / "ran.txt").read_text() == "ran\n"
    assert len(operator.asked) == 1


def test_stored_result_is_returned_by_a_later_workspace_on_the_same_log(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    log = tmp_path / "receipts.jsonl"
    action = write("notes.md", "first\n")
    writable(tmp_path / "project", Operator(), ReceiptStore(log)).execute(action, "retry-1")
    later = Operator(answer=False)
    workspace = writable(tmp_path / "project", later, ReceiptStore(log))
    assert workspace.execute(action, "retry-1") == "wrote notes.md"
    assert later.asked == []


def test_same_id_for_another_action_is_refused(tmp_path: Path) -> None:
    operator = Operator()
    workspace = writable(tmp_path, operator)
    workspace.execute(write("notes.md", "first\n"), "call-a")
    assert workspace.execute(write("notes.md", "second\n"), "call-a") == (
        "error: tool call id was already used for another action"
    )
    assert workspace.execute(write("other.md", "first\n"), "call-a") == (
        "error: tool call id was already used for another action"
    )
    assert (tmp_path / "notes.md").read_text() == "first\n"
    assert not (tmp_path / "other.md").exists()
    assert len(operator.asked) == 1
