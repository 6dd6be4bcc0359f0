"""One parser for every request's params: each field is checked by the check declared on it,
and a bad one is a JSON-RPC invalid-params error whose sentence names the method and field."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from counterfoil import protocol as messages
from counterfoil.lsp.params import parse_params


def refusal(cls: type | None, params: Any, method: str) -> str:
    with pytest.raises(JsonRpcInvalidParams) as refused:
        parse_params(cls, params, method)
    return str(refused.value.message)


def test_a_missing_or_blank_goal_is_refused_by_name() -> None:
    for params in ({}, {"goal": "  "}, {"goal": 42}):
        assert refusal(messages.RunParams, params, "counterfoil/run") == (
            "counterfoil/run needs a non-empty string goal"
        )


def test_a_goal_over_the_limit_is_told_the_limit() -> None:
    assert refusal(messages.RunParams, {"goal": "x" * 20_001}, "counterfoil/run") == (
        "goal must be at most 20000 characters"
    )


def test_a_bad_optional_field_says_what_it_must_be() -> None:
    params = {"runId": "abc", "steer": ["x"]}
    assert refusal(messages.ResumeParams, params, "counterfoil/resume") == (
        "counterfoil/resume steer must be a non-empty string"
    )


def test_a_field_with_a_form_says_the_form() -> None:
    assert refusal(messages.ObjectParams, {"sha256": "ABC"}, "counterfoil/object") == (
        "counterfoil/object needs sha256: 64 lower-case hex characters"
    )
    assert refusal(messages.RunValidationParams, {"argv": []}, "counterfoil/runValidation") == (
        "counterfoil/runValidation needs argv: a non-empty array of strings"
    )


def test_params_that_are_not_an_object_are_refused() -> None:
    assert refusal(None, "please", "counterfoil/status") == (
        "counterfoil/status params must be an object"
    )


def test_unknown_keys_are_ignored_and_an_absent_optional_field_is_none() -> None:
    parsed = parse_params(messages.ResumeParams, {"runId": "abc", "extra": 1}, "m")
    assert parsed == messages.ResumeParams(runId="abc", steer=None)
    assert parse_params(None, None, "counterfoil/status") is None


def test_every_params_field_declares_its_check() -> None:
    for method, request in messages.REQUESTS.items():
        if request.params is None or request.to_client:
            continue
        for item in dataclasses.fields(request.params):
            assert "check" in item.metadata, f"{method} {item.name}"
