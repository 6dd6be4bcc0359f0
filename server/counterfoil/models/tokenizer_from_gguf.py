"""A Hugging Face tokenizer (`tokenizer.json`, `tokenizer_config.json`) from GGUF metadata.

GGUF files with a byte-level BPE vocabulary (`tokenizer.ggml.model` `gpt2`) carry the vocabulary, the merges, each token's type and the chat template; the
pre-tokenizer is named (`tokenizer.ggml.pre`) rather than stored, so the ones known here are
spelled out as llama.cpp defines them. SentencePiece vocabularies (`llama`) are refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import ModelLoadError

CONTROL, USER_DEFINED = 3, 4

# llama.cpp's pre-tokenizer regexes (llama-vocab.cpp), applied in order, each splitting the
# pieces the previous one left.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"""
LLAMA3_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
QWEN2_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
DEFAULT_PATTERNS = (r"[\p{P}\$\+<=>\^~\|]+", GPT2_PATTERN, r"\p{N}+", r"[0-9][0-9][0-9]")
FALCON_PATTERNS = (r"[\p{P}\$\+<=>\^~\|`]+", GPT2_PATTERN, r"[0-9][0-9][0-9]")


@dataclass(frozen=True)
class PreTokenizer:
    """How llama.cpp splits text before BPE for one `tokenizer.ggml.pre` family."""

    patterns: tuple[str, ...]
    ignore_merges: bool = False  # a piece that is a whole token is taken as it is


_GPT2 = PreTokenizer((GPT2_PATTERN,))
_LLAMA3 = PreTokenizer((LLAMA3_PATTERN,), ignore_merges=True)
_QWEN2 = PreTokenizer((QWEN2_PATTERN,))
_DIGITS_THEN_GPT2 = PreTokenizer((r"\p{N}", GPT2_PATTERN))
_GPT4_STYLE = PreTokenizer((LLAMA3_PATTERN,))

# `tokenizer.ggml.pre` values as llama.cpp's vocabulary loader groups them.
PRE_TOKENIZERS: dict[str, PreTokenizer] = {
    "default": PreTokenizer(DEFAULT_PATTERNS),
    **dict.fromkeys(
        ("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2"),
        _LLAMA3,
    ),
    **dict.fromkeys(("dbrx", "smaug-bpe", "glm4", "chatglm-bpe"), _GPT4_STYLE),
    **dict.fromkeys(
        ("gpt-2", "phi-2", "mpt", "olmo", "jais", "jina-es", "jina-de", "gigachat", "exaone4"),
        _GPT2,
    ),
    **dict.fromkeys(
        ("starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"),
        _DIGITS_THEN_GPT2,
    ),
    **dict.fromkeys(
        ("qwen2", "deepseek-r1-qwen", "kormo", "stablelm2", "megrez", "hunyuan"), _QWEN2
    ),
    "falcon": PreTokenizer(FALCON_PATTERNS),
}


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

    pre = check_vocabulary(metadata, name)
    template = _scalar(metadata, "tokenizer.chat_template")
    architecture = _scalar(metadata, "general.architecture")
    tokens = [str(token) for token in metadata["tokenizer.ggml.tokens"]]
    types = [int(kind) for kind in metadata.get("tokenizer.ggml.token_type", [1] * len(tokens))]
    merges = [_pair(str(merge)) for merge in metadata.get("tokenizer.ggml.merges", [])]
    vocab = {token: index for index, token in reversed(list(enumerate(tokens)))}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=pre.ignore_merges))
    tokenizer.pre_tokenizer = _split(pre)
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
        "model_max_length": int(_scalar(metadata, f"{architecture}.context_length") or 4096),
        "chat_template": template,
    }
    return TokenizerFiles(str(tokenizer.to_str()), config)


def _pair(merge: str) -> tuple[str, str]:
    left, _, right = merge.partition(" ")
    return left, right


def check_vocabulary(metadata: dict[str, Any], name: str) -> PreTokenizer:
    """The pre-tokenizer of a vocabulary this module can build, or `ModelLoadError` saying why
    not (read from the header alone, before anything is imported)."""
    kind = _scalar(metadata, "tokenizer.ggml.model")
    if kind != "gpt2":
        raise ModelLoadError(
            f"{name} has a {kind!r} tokenizer: Counterfoil imports byte-level BPE (gpt2) "
            "vocabularies only; serve it with llama.cpp's llama-server and pass --endpoint instead"
        )
    tokens = metadata.get("tokenizer.ggml.tokens")
    if not isinstance(tokens, list) or not all(isinstance(token, str) for token in tokens):
        raise ModelLoadError(f"{name} has no list of tokens in its metadata")
    template = _scalar(metadata, "tokenizer.chat_template")
    if not isinstance(template, str) or not template:
        raise ModelLoadError(f"{name} has no chat template in its metadata, so it cannot chat")
    pre = str(_scalar(metadata, "tokenizer.ggml.pre") or "default")
    known = PRE_TOKENIZERS.get(pre)
    if known is None:
        raise ModelLoadError(
            f"{name} names a pre-tokenizer Counterfoil does not know ({pre!r}); serve it with "
            "llama.cpp's llama-server and pass --endpoint instead"
        )
    return known


def _split(pre: PreTokenizer) -> Any:
    from tokenizers import Regex, pre_tokenizers

    splits = [
        pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False)
        for pattern in pre.patterns
    ]
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    return pre_tokenizers.Sequence([*splits, byte_level])
