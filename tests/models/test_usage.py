"""The run's model usage line, from a local model's and a server's own counters."""

from __future__ import annotations

from counterfoil.model import ModelReply, model_reply
from counterfoil.models import Model, ResponseStats, ScriptedModel
from counterfoil.models.usage import usage_line


def local(prompt: int, prefilled: int, generated: int) -> ResponseStats:
    return ResponseStats(generated, "stop", 0.1, prompt_tokens=prompt, prefilled_tokens=prefilled)


def served(prompt: int | None, cached: int | None, generated: int) -> ResponseStats:
    return ResponseStats(generated, "stop", 0.1, prompt_tokens=prompt, cached_tokens=cached)


def test_a_local_models_reuse_is_its_prompt_less_what_it_prefilled() -> None:
    line = usage_line([local(700, 700, 10), local(1_900, 1_200, 12)])

    assert line == "2 responses, 2,600 prompt tokens (700 from the cache), 22 generated"


def test_a_servers_reuse_is_its_cached_tokens() -> None:
    assert usage_line([served(696, 0, 1)]) == (
        "1 response, 696 prompt tokens (0 from the cache), 1 generated"
    )


def test_what_a_server_did_not_report_is_left_out_not_guessed() -> None:
    assert usage_line([served(696, None, 3), served(800, 695, 2)]) == (
        "2 responses, 1,496 prompt tokens, 5 generated"
    )
    assert usage_line([served(None, None, 3)]) == "1 response, 3 generated"


def test_a_model_without_counters_has_no_usage_line() -> None:
    assert usage_line([]) is None


def test_the_scripted_mlx_and_remote_models_are_one_model_contract() -> None:
    from counterfoil.models.mlx.mlx import MLXGenerate
    from counterfoil.models.server.remote import RemoteGenerate

    # `load_generate` returns each as a `Model`, which mypy checks; here, at run time:
    for model in (ScriptedModel, MLXGenerate, RemoteGenerate):
        for member in ("configure_tools", "count_tokens", "context_tokens", "__call__", "reply"):
            assert hasattr(model, member), (model, member)
    assert isinstance(ScriptedModel(["{}"]), Model)


def test_a_model_replies_with_its_text_and_a_plain_callable_with_its_text_alone() -> None:
    assert model_reply(ScriptedModel(['{"final":"x"}']), []) == ModelReply('{"final":"x"}')
    assert model_reply(lambda messages: "{}", []) == ModelReply("{}")


def test_a_model_that_redefines_only_its_call_is_taken_at_its_word() -> None:
    class Shouting(ScriptedModel):
        def __call__(self, messages: list[dict[str, str]]) -> str:
            return super().__call__(messages).upper()

    assert model_reply(Shouting(['{"final":"x"}']), []) == ModelReply('{"FINAL":"X"}')
