"""The course's own tests (tiny-llm, Apache-2.0), run against `from counterfoil import *`.

A few of them patch the course's private internals (its loop's `_append_tool_result`, its
workspace module's `subprocess.run` and `os.replace`); Counterfoil has no such internals (it
replaces files through directory descriptors and runs commands under its reaper), so those
are skipped by name here, each with the reason, and the rest run unchanged. One more relies on
the course's receipt line layout rather than patching anything: it tampers with a log by
replacing `"tool": "edit_file"` (the spaced JSON the course writes); Counterfoil writes
canonical JSON (`"tool":"edit_file"`), so that replacement would change nothing.
tests/core/test_evaluation.py tampers with the canonical form instead.
"""

from __future__ import annotations

import pytest

PATCHES_PRIVATE_INTERNALS = {
    "test_task_8_observation_payload_mutations_are_killed": "patches the course loop's private "
    "_append_tool_result",
    "test_task_4_exact_edit_uses_same_directory_replace_and_receipt": "patches os.replace as "
    "the course's workspace module calls it; Counterfoil renames through directory descriptors",
    "test_task_7_duplicate_call_ids_do_not_repeat_an_effect": "patches the course workspace "
    "module's subprocess.run; Counterfoil runs commands under its reaper",
    "test_task_5_tampered_receipt_log_becomes_failed_checks[digest]": "tampers by replacing "
    "the course's spaced JSON text, which Counterfoil's canonical receipt lines do not contain",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        reason = PATCHES_PRIVATE_INTERNALS.get(item.name) or PATCHES_PRIVATE_INTERNALS.get(
            getattr(item, "originalname", item.name)
        )
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"course test {reason}"))
