"""The streamed text batches: few messages, never mixing thinking with the answer."""

from __future__ import annotations

from counterfoil.lsp.model_service.model_text import TextBatcher


def test_text_is_held_between_batches_and_split_at_think_tags() -> None:
    sent: list[tuple[str, bool]] = []
    batcher = TextBatcher(lambda text, thinking: sent.append((text, thinking)), interval=60.0)

    for token in ("<think>", "let me", " see", "</think>", '{"final"', ':"ok"}'):
        batcher.feed(token)
    batcher.flush()

    assert sent == [("let me see", True), ('{"final":"ok"}', False)]
    assert batcher.fed


def test_a_batch_goes_out_once_the_interval_has_passed() -> None:
    sent: list[tuple[str, bool]] = []
    batcher = TextBatcher(lambda text, thinking: sent.append((text, thinking)), interval=0.0)

    batcher.feed("a")
    batcher.feed("b")

    assert sent == [("a", False), ("b", False)]
