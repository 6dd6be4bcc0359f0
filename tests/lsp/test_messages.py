"""The protocol is written once, in `counterfoil.protocol`: what the daemon sends has those
shapes, the extension's types are generated from them and checked in, docs/protocol.md names
their fields, and there is one version number."""

from __future__ import annotations

import dataclasses
import json
import re
import tomllib
import types
import typing
from pathlib import Path
from typing import Any, Literal, Union

import pytest

import counterfoil
from counterfoil import protocol as messages
from counterfoil.lsp import typescript

from .conftest import StartDaemon


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


REPOSITORY = Path(__file__).resolve().parents[2]


def conforms(data: Any, hint: Any, where: str = "message") -> None:
    """`data` has exactly the shape `hint` describes: every field always sent is there, no
    field that is not declared, each value of its declared type."""
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin in (Union, types.UnionType):
        errors = []
        for option in arguments:
            try:
                conforms(data, option, where)
                return
            except AssertionError as error:
                errors.append(str(error))
        raise AssertionError(f"{where}: {data!r} is none of {hint}: {errors}")
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        assert isinstance(data, dict), f"{where}: {data!r} is not an object"
        fields = {item.name: item for item in dataclasses.fields(hint)}
        required = {name for name, item in fields.items() if not item.metadata.get("sometimes")}
        assert required <= data.keys(), f"{where}: missing {sorted(required - data.keys())}"
        assert data.keys() <= fields.keys(), f"{where}: undeclared {sorted(data.keys() - fields)}"
        hints = messages.field_types(hint)
        for name, value in data.items():
            conforms(value, hints[name], f"{where}.{name}")
    elif origin in (list, tuple):  # a tuple is sent as a list
        assert isinstance(data, list), f"{where}: {data!r} is not a list"
        for index, item in enumerate(data):
            conforms(item, arguments[0], f"{where}[{index}]")
    elif origin is dict:
        assert isinstance(data, dict), f"{where}: {data!r} is not an object"
    elif origin is Literal:
        assert data in arguments, f"{where}: {data!r} is not one of {arguments}"
    elif hint is type(None):
        assert data is None, f"{where}: {data!r} is not null"
    elif hint is float:
        assert isinstance(data, (int, float)) and not isinstance(data, bool), where
    elif hint is not Any:
        assert isinstance(data, hint) and not (hint is int and isinstance(data, bool)), (
            f"{where}: {data!r} is not {hint}"
        )


def test_the_extensions_wire_types_are_generated_from_the_messages() -> None:
    assert typescript.TARGET.read_text(encoding="utf-8") == typescript.generate(), (
        "extension/src/daemon/protocol.generated.ts is stale: run python -m counterfoil.lsp.typescript"
    )


def test_there_is_one_version_number() -> None:
    pyproject = tomllib.loads((REPOSITORY / "pyproject.toml").read_text(encoding="utf-8"))
    package = json.loads((REPOSITORY / "extension" / "package.json").read_text(encoding="utf-8"))
    assert "version" not in pyproject["project"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "counterfoil.__version__"
    }
    assert package["version"] == counterfoil.__version__
    assert f'DAEMON_VERSION = "{counterfoil.__version__}"' in typescript.generate()


def test_the_protocol_document_names_every_method_and_field() -> None:
    document = (REPOSITORY / "docs" / "protocol.md").read_text(encoding="utf-8")
    for method in (*messages.REQUESTS, *messages.NOTIFICATIONS):
        assert f"`{method}`" in document, method
    unnamed = sorted(
        f"{cls.__name__}.{item.name}"
        for cls in typescript.message_classes()
        for item in typescript.wire_fields(cls)
        if not re.search(rf"\b{item.name}\b", document)
    )
    assert unnamed == []


async def test_everything_a_run_sends_has_the_declared_shape(
    start_daemon: StartDaemon, fix_app_settings: dict[str, Any]
) -> None:
    daemon = await start_daemon(fix_app_settings)

    result = await daemon.request("counterfoil/run", {"goal": "make double() double"})
    conforms(result, messages.RunResult, "run result")
    conforms(await daemon.request("counterfoil/status", {}), messages.StatusResult, "status")
    conforms(await daemon.request("counterfoil/receipts", {}), messages.ReceiptsResult)
    conforms(await daemon.request("counterfoil/verifyReceipts", {}), messages.VerifyResult)
    digest = daemon.receipts[-1]["output_sha256"]
    stored = await daemon.request("counterfoil/object", {"sha256": digest})
    conforms(stored, messages.ObjectResult, "object")
    reverted = await daemon.request("counterfoil/revert", {"toolCallId": "call-1"})
    conforms(reverted, messages.ValidationResult, "revert")

    for confirm in daemon.confirms:
        conforms(confirm, messages.ConfirmParams, "confirm")
    for event in daemon.events:
        conforms(event, messages.AgentEvent, "event")
    for receipt in daemon.receipts:
        conforms(receipt, messages.Receipt, "receipt")
    for state in daemon.model_states:
        conforms(state, messages.ModelState, "modelState")
    for method, params in daemon.run_notes:
        conforms(params, messages.NOTIFICATIONS[method], method)
    assert {method for method, _ in daemon.run_notes} == {
        "counterfoil/runStarted",
        "counterfoil/runState",
        "counterfoil/modelText",
        "counterfoil/folderSettingsChanged",
        "counterfoil/runActivity",
        "counterfoil/approvalState",
    }
