"""A Hugging Face tokenizer (`tokenizer.json`, `tokenizer_config.json`) from GGUF metadata.

GGUF files of llama-architecture models with a byte-level BPE vocabulary (`tokenizer.ggml.model`
`gpt2`) carry the vocabulary, the merges, each token's type and the chat template; the
pre-tokenizer is named (`tokenizer.ggml.pre`) rather than stored, so the ones known here are
spelled out as llama.cpp defines them. SentencePiece vocabularies (`llama`) are refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import ModelLoadError

CONTROL, USER_DEFINED = 3, 4

# llama.cpp's pre-tokenizer regexes (llama-vocab.cpp), by `tokenizer.ggml.pre`.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"""
LLAMA3_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
KNOWN_PRE = ("default", "gpt2", "smollm", "llama-bpe", "llama3")


@dataclass(frozen=True)
class TokenizerFiles:
    tokenizer_json: str
    tokenizer_config: dict[str, Any]


def _scalar(metadata: dict[str, Any], key: str) -> Any:
    value: Any = metadata.get(key)
    return value.item() if hasattr(value, "item") else value


def tokenizer_files(metadata: dict[str, Any], name: str) -> TokenizerFiles:
    """The tokenizer files for the GGUF file `name` with this `metadata`."""
    from tokenizers import AddedToken, Tokenizer, decoders, models

    kind = _scalar(metadata, "tokenizer.ggml.model")
    if kind != "gpt2":
        raise ModelLoadError(
            f"{name} has a {kind!r} tokenizer: Counterfoil imports byte-level BPE (gpt2) "
            "vocabularies only; serve it with llama.cpp's llama-server and pass --endpoint instead"
        )
    pre = str(_scalar(metadata, "tokenizer.ggml.pre") or "default")
    if pre not in KNOWN_PRE:
        raise ModelLoadError(
            f"{name} names a pre-tokenizer Counterfoil does not know ({pre!r}; known: "
            f"{', '.join(KNOWN_PRE)}); serve it with llama.cpp's llama-server and pass "
            "--endpoint instead"
        )
    template = _scalar(metadata, "tokenizer.chat_template")
    if not isinstance(template, str) or not template:
        raise ModelLoadError(f"{name} has no chat template in its metadata, so it cannot chat")
    tokens = [str(token) for token in metadata["tokenizer.ggml.tokens"]]
    types = [int(kind) for kind in metadata.get("tokenizer.ggml.token_type", [1] * len(tokens))]
    merges = [_pair(str(merge)) for merge in metadata.get("tokenizer.ggml.merges", [])]
    vocab = {token: index for index, token in reversed(list(enumerate(tokens)))}
    llama3 = pre in ("llama-bpe", "llama3")
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=llama3))
    tokenizer.pre_tokenizer = _pre_tokenizer(pre)
    tokenizer.decoder = decoders.ByteLevel()
    special = [
        AddedToken(token, special=True, normalized=False)
        for token, kind in zip(tokens, types, strict=False)
        if kind == CONTROL
    ]
    defined = [
        AddedToken(token, special=False, normalized=False)
        for token, kind in zip(tokens, types, strict=False)
        if kind == USER_DEFINED
    ]
    tokenizer.add_special_tokens(special)
    tokenizer.add_tokens(defined)

    def token_text(key: str) -> str | None:
        index = _scalar(metadata, key)
        return tokens[int(index)] if index is not None and 0 <= int(index) < len(tokens) else None

    config: dict[str, Any] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": token_text("tokenizer.ggml.bos_token_id"),
        "eos_token": token_text("tokenizer.ggml.eos_token_id"),
        "unk_token": token_text("tokenizer.ggml.unknown_token_id"),
        "pad_token": token_text("tokenizer.ggml.padding_token_id"),
        "add_bos_token": bool(_scalar(metadata, "tokenizer.ggml.add_bos_token") or False),
        "clean_up_tokenization_spaces": False,
        "model_max_length": int(_scalar(metadata, "llama.context_length") or 4096),
        "chat_template": template,
    }
    return TokenizerFiles(str(tokenizer.to_str()), config)


def _pair(merge: str) -> tuple[str, str]:
    left, _, right = merge.partition(" ")
    return left, right


def _pre_tokenizer(pre: str) -> Any:
    from tokenizers import Regex, pre_tokenizers

    if pre in ("llama-bpe", "llama3"):
        return pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated", invert=False),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if pre == "smollm":
        return pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
    return byte_level
