"""A Hugging Face tokenizer (`tokenizer.json`, `tokenizer_config.json`) from GGUF metadata.

GGUF files with a byte-level BPE vocabulary (`tokenizer.ggml.model` `gpt2`) carry the
vocabulary, the merges, each token's type and the chat template; the pre-tokenizer is named
(`tokenizer.ggml.pre`) rather than stored, so the ones known here are spelled out as llama.cpp
defines them. SentencePiece vocabularies (`llama`) carry pieces and scores, from which the
merges are rebuilt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ModelLoadError

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
# A SentencePiece vocabulary splits nothing before its merges.
SENTENCEPIECE = PreTokenizer(())


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
    vocab = {token: index for index, token in reversed(list(enumerate(tokens)))}
    sentencepiece = pre is SENTENCEPIECE
    if sentencepiece:
        tokenizer = _sentencepiece(tokens, metadata, vocab)
    else:
        merges = [_pair(str(merge)) for merge in metadata.get("tokenizer.ggml.merges", [])]
        bpe = models.BPE(vocab=vocab, merges=merges, ignore_merges=pre.ignore_merges)
        tokenizer = Tokenizer(bpe)
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
        "add_bos_token": bool(_scalar(metadata, "tokenizer.ggml.add_bos_token") or sentencepiece),
        "clean_up_tokenization_spaces": False,
        "model_max_length": int(_scalar(metadata, f"{architecture}.context_length") or 4096),
        "chat_template": template,
    }
    return TokenizerFiles(str(tokenizer.to_str()), config)


def _sentencepiece(tokens: list[str], metadata: dict[str, Any], vocab: dict[str, int]) -> Any:
    """A SentencePiece vocabulary as a `tokenizers` BPE, as transformers converts Llama's: the
    merges are every split of a token into two tokens, the merged token's score first; spaces
    become `▁` with one before the text, unknown bytes fall back to `<0xNN>` tokens, and text
    encoded on its own starts with BOS, as llama.cpp's SentencePiece default is."""
    from tokenizers import Tokenizer, decoders, models, normalizers, processors

    scores = [float(score) for score in metadata["tokenizer.ggml.scores"]]
    found: list[tuple[float, int, int, int, str, str]] = []
    for piece, index in vocab.items():
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in vocab and right in vocab:
                found.append((-scores[index], index, vocab[left], vocab[right], left, right))
    merges = [(left, right) for *_, left, right in sorted(found)]
    unknown = metadata.get("tokenizer.ggml.unknown_token_id")
    tokenizer = Tokenizer(
        models.BPE(
            vocab=vocab,
            merges=merges,
            unk_token=tokens[int(unknown)] if isinstance(unknown, int) else None,
            fuse_unk=True,
            byte_fallback=True,
        )
    )
    spaces = normalizers.Replace(" ", "\u2581")
    prefixed = metadata.get("tokenizer.ggml.add_space_prefix", True)
    steps = [normalizers.Prepend("\u2581"), spaces] if prefixed else [spaces]
    tokenizer.normalizer = normalizers.Sequence(steps)
    bos = metadata.get("tokenizer.ggml.bos_token_id")
    if metadata.get("tokenizer.ggml.add_bos_token", True) and isinstance(bos, int):
        tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{tokens[bos]} $A",
            pair=f"{tokens[bos]} $A $B",
            special_tokens=[(tokens[bos], bos)],
        )
    tokenizer.decoder = decoders.Sequence(
        [
            decoders.Replace("\u2581", " "),
            decoders.ByteFallback(),
            decoders.Fuse(),
            decoders.Strip(" ", 1, 0),
        ]
    )
    return tokenizer


def _pair(merge: str) -> tuple[str, str]:
    left, _, right = merge.partition(" ")
    return left, right


def check_vocabulary(metadata: dict[str, Any], name: str) -> PreTokenizer:
    """The pre-tokenizer of a vocabulary this module can build, or `ModelLoadError` saying why
    not (read from the header alone, before anything is imported)."""
    kind = _scalar(metadata, "tokenizer.ggml.model")
    if kind not in ("gpt2", "llama"):
        raise ModelLoadError(
            f"{name} has a {kind!r} tokenizer: Counterfoil imports byte-level BPE (gpt2) and "
            "SentencePiece (llama) vocabularies; serve it with llama.cpp's llama-server and pass "
            "--endpoint instead"
        )
    tokens = metadata.get("tokenizer.ggml.tokens")
    if not isinstance(tokens, list) or not all(isinstance(token, str) for token in tokens):
        raise ModelLoadError(f"{name} has no list of tokens in its metadata")
    template = _scalar(metadata, "tokenizer.chat_template")
    if not isinstance(template, str) or not template:
        raise ModelLoadError(f"{name} has no chat template in its metadata, so it cannot chat")
    if kind == "llama":
        scores = metadata.get("tokenizer.ggml.scores")
        if not isinstance(scores, list) or len(scores) != len(tokens):
            raise ModelLoadError(f"{name} has a SentencePiece vocabulary without its scores")
        return SENTENCEPIECE
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
