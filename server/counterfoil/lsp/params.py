"""One parser for every request's params: the params dataclass declared in `REQUESTS`, each
field checked by the `FieldCheck` on it, each refusal a JSON-RPC invalid-params error whose
sentence names the method and the field."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from pygls.exceptions import JsonRpcInvalidParams

from ..protocol.field_checks import FieldCheck

P = TypeVar("P")


def invalid_params(message: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(message=message)


def parse_params(cls: type[P] | None, params: Any, method: str) -> P | None:
    """`params` as `cls` (None for a method that takes `{}`); unknown keys are ignored, as
    unknown settings are."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise invalid_params(f"{method} params must be an object")
    if cls is None:
        return None
    values = {
        item.name: _field(item, params.get(item.name), method)
        for item in dataclasses.fields(cls)  # type: ignore[arg-type]
    }
    return cls(**values)


def _field(item: dataclasses.Field[Any], value: Any, method: str) -> Any:
    check: FieldCheck = item.metadata["check"]
    optional = item.default is None
    if value is None and optional:
        return None
    if not check.accepts(value):
        if optional:
            raise invalid_params(f"{method} {item.name} must be {check.what}")
        needs = check.needs.format(what=check.what, name=item.name)
        raise invalid_params(f"{method} needs {needs}")
    if check.max_chars is not None and len(value) > check.max_chars:
        raise invalid_params(f"{item.name} must be at most {check.max_chars} characters")
    return value
