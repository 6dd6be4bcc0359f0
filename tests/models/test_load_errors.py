"""A model that cannot load says why in whole sentences and names the ways out."""

from __future__ import annotations

from counterfoil.models.errors import load_failure, whole_sentences


class LocalEntryNotFoundError(FileNotFoundError):
    """Named like huggingface_hub's error for a model neither cached nor reachable."""


def test_an_offline_miss_names_hf_download_a_local_folder_and_scripted() -> None:
    error = LocalEntryNotFoundError(
        "Got: ConnectError: [Errno -2] Name or service not known\n"
        "An error happened while trying to locate the files on the Hub. Please check."
    )
    message = load_failure("qwen3-4b", "Qwen/Qwen3-4B-MLX-4bit", False, error)

    assert message.startswith(
        "could not load model 'qwen3-4b' (Qwen/Qwen3-4B-MLX-4bit): it is "
        "not in the local Hugging Face cache and the Hub cannot be reached"
    )
    assert "`hf download Qwen/Qwen3-4B-MLX-4bit`" in message
    assert "local MLX model directory" in message and "scripted:PATH" in message
    assert "An error happened" not in message


def test_a_long_reason_is_cut_between_sentences_never_inside_one() -> None:
    text = " ".join(f"Sentence number {index} says something long enough." for index in range(40))
    kept = whole_sentences(text, limit=120)

    assert kept.endswith("long enough.")
    assert len(kept) <= 120
    assert text.startswith(kept)


def test_a_single_sentence_longer_than_the_limit_is_kept_whole() -> None:
    sentence = "word " * 100 + "end."
    assert whole_sentences(sentence, limit=50) == sentence.strip()


def test_a_model_that_was_found_but_does_not_load_is_not_told_to_download_once() -> None:
    error = ValueError("Received 2 parameters not in model: lm_head.weight, x.")
    message = load_failure("owner/tiny", "owner/tiny", False, error)

    assert message.startswith("could not load model 'owner/tiny' (owner/tiny): Received 2")
    assert "Download it once" not in message
    assert "`hf download owner/tiny --force-download`" in message
    assert "local MLX model directory" in message and "scripted:PATH" in message
