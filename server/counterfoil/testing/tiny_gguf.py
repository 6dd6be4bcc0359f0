"""A small random-weight Llama model as one GGUF file, written offline.

llama.cpp's server (and llama-cpp-python's) enforces a JSON schema during decoding, so it is
the server that proves the remote schema request works end to end; it needs a GGUF. This
writes one with the `gguf` package: the byte-level BPE tokenizer trained by `tiny_model`, the
same ChatML template, and random weights. The output head leans towards closing quotes and
braces, so strings end and a schema-constrained response completes within a few dozen tokens
instead of wandering until `max_tokens`; which tokens win among the ones the schema allows is
still up to the random weights.

The same builder writes the other architectures the GGUF import reads (`qwen2`, with q/k/v
biases; `qwen3`, with q/k norms) and every quantization llama.cpp writes that the `gguf`
package dequantizes: the package quantizes the legacy formats itself, and K-quant blocks (which
it only reads) are random bytes under small block scales, valid blocks of the format.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .tiny_model import CHAT_TEMPLATE, DEFAULT_SHAPE, EOS_TOKEN, TinyShape, train_tokenizer

CLOSING_TEXT = ('"', "}", '"}')
CLOSING_BIAS = 6.0
# llama.cpp's general.file_type for a file whose matrices are all of one type.
FILE_TYPES = {"F32": 0, "F16": 1, "Q4_0": 2, "Q4_1": 3, "Q8_0": 7, "Q5_0": 8, "Q5_1": 9}
FILE_TYPES.update({"Q2_K": 10, "Q3_K": 12, "Q4_K": 15, "Q5_K": 17, "Q6_K": 18})
# Where each K-quant block keeps its float16 scale (and minimum), in bytes from its start.
K_QUANT_SCALES = {"Q2_K": (80, 82), "Q3_K": (108,), "Q4_K": (0, 2), "Q5_K": (0, 2), "Q6_K": (208,)}
# About how many block scales a random level times a random sub-block scale comes to.
K_QUANT_TYPICAL = {"Q2_K": 12, "Q3_K": 32, "Q4_K": 240, "Q5_K": 480, "Q6_K": 1024}


def build_tiny_gguf(
    path: str | Path,
    *,
    shape: TinyShape = DEFAULT_SHAPE,
    vocab_size: int = 2048,
    corpus_bytes: int = 1_000_000,
    seed: int = 0,
    quantization: str = "F32",
    file_type: int | None = None,
    architecture: str = "llama",
    sentencepiece: bool = False,
) -> Path:
    """Write the model to `path` (a .gguf file) and return it.

    `quantization` (`F32`, `Q4_0`, `Q4_1`, `Q8_0`, …: a `gguf.GGMLQuantizationType` name) is
    the type of every matrix, blocks quantized by the `gguf` package as llama.cpp's quantizer
    writes them; `file_type` overrides the `general.file_type` the file declares (to test a
    refusal); `architecture` the `general.architecture` (`llama`, `qwen2`, `qwen3`, `phi3` with
    its fused matrices, `gemma3` with its extra norms, or another name written with llama's
    tensors); `sentencepiece` writes a SentencePiece vocabulary
    (pieces, scores and types as llama.cpp's converter writes them, from `train_sentencepiece`)
    instead of the byte-level BPE one.
    Long because it writes the file's metadata and tensors in the order a GGUF file lays them
    out, each architecture's variant beside the common one, so the file reads as its format.
    """
    import gguf
    import numpy as np

    tensor_type = gguf.GGMLQuantizationType[quantization]

    tokenizer = json.loads(train_tokenizer(vocab_size, corpus_bytes))
    vocab: dict[str, int] = dict(tokenizer["model"]["vocab"])
    specials = {token["content"]: token["id"] for token in tokenizer["added_tokens"]}
    vocab.update(specials)
    size = max(vocab.values()) + 1
    tokens = [f"[UNUSED{index}]" for index in range(size)]
    for text, index in vocab.items():
        tokens[index] = text
    token_types = [
        int(gguf.TokenType.CONTROL if text in specials else gguf.TokenType.NORMAL)
        for text in tokens
    ]
    merges = [
        merge if isinstance(merge, str) else " ".join(merge)
        for merge in tokenizer["model"].get("merges", [])
    ]
    if sentencepiece:
        pieces = sentencepiece_vocabulary(train_sentencepiece(vocab_size, corpus_bytes))
        tokens, scores, token_types = pieces
        size = len(tokens)

    rng = np.random.default_rng(seed)
    hidden_size, head_dim, feed_forward = shape.hidden_size, shape.head_dim, shape.feed_forward

    def matrix(rows: int, columns: int, scale: float = 0.5) -> Any:
        return (rng.standard_normal((rows, columns)) * scale).astype(np.float32)

    embedding = matrix(size, hidden_size, 1.0)
    embedding[:, 0] = 4.0  # a direction every hidden state shares, for the closing bias
    output = matrix(size, hidden_size, 1.0)
    for text in CLOSING_TEXT:
        if text in vocab:
            output[vocab[text], 0] = CLOSING_BIAS

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(str(target), architecture)
    writer.add_name("counterfoil-tiny-random")
    writer.add_context_length(4096)
    writer.add_embedding_length(hidden_size)
    writer.add_block_count(shape.num_layers)
    writer.add_feed_forward_length(feed_forward)
    writer.add_head_count(shape.num_heads)
    writer.add_head_count_kv(shape.num_kv_heads)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_rope_dimension_count(head_dim)
    writer.add_rope_freq_base(10_000.0)
    writer.add_file_type(file_type if file_type is not None else FILE_TYPES.get(quantization, 0))
    if architecture in ("qwen3", "gemma3"):
        writer.add_key_length(head_dim)
        writer.add_value_length(head_dim)
    if architecture == "gemma3":
        writer.add_sliding_window(4)
    if sentencepiece:
        writer.add_tokenizer_model("llama")
        writer.add_token_list(tokens)
        writer.add_token_scores(scores)
        writer.add_token_types(token_types)
        writer.add_unk_token_id(0)
        writer.add_bos_token_id(1)
        writer.add_eos_token_id(2)
    else:
        writer.add_tokenizer_model("gpt2")
        writer.add_tokenizer_pre("gpt-2")
        writer.add_token_list(tokens)
        writer.add_token_types(token_types)
        writer.add_token_merges(merges)
        writer.add_eos_token_id(specials[EOS_TOKEN])
        writer.add_bos_token_id(specials[EOS_TOKEN])
        writer.add_add_bos_token(False)
    writer.add_chat_template(CHAT_TEMPLATE)

    def add_matrix(name: str, values: Any) -> None:
        if tensor_type == gguf.GGMLQuantizationType.F32:
            writer.add_tensor(name, values)
        elif quantization in K_QUANT_SCALES:
            blocks = k_quant_blocks(rng, values.shape, quantization, float(values.std()))
            writer.add_tensor(name, blocks, raw_dtype=tensor_type)
        else:
            writer.add_tensor(
                name, gguf.quants.quantize(values, tensor_type), raw_dtype=tensor_type
            )

    add_matrix("token_embd.weight", embedding)
    writer.add_tensor("output_norm.weight", np.ones(hidden_size, dtype=np.float32))
    add_matrix("output.weight", output)
    kv_size = shape.num_kv_heads * head_dim
    for layer in range(shape.num_layers):
        prefix = f"blk.{layer}"
        writer.add_tensor(f"{prefix}.attn_norm.weight", np.ones(hidden_size, dtype=np.float32))
        fused = architecture == "phi3"  # q/k/v in one matrix, gate and up in another
        if fused:
            rows = hidden_size + 2 * kv_size
            add_matrix(f"{prefix}.attn_qkv.weight", matrix(rows, hidden_size, 0.1))
        else:
            add_matrix(f"{prefix}.attn_q.weight", matrix(hidden_size, hidden_size, 0.1))
            add_matrix(f"{prefix}.attn_k.weight", matrix(kv_size, hidden_size, 0.1))
            add_matrix(f"{prefix}.attn_v.weight", matrix(kv_size, hidden_size, 0.1))
        if architecture == "qwen2":
            for name, rows in (("attn_q", hidden_size), ("attn_k", kv_size), ("attn_v", kv_size)):
                writer.add_tensor(f"{prefix}.{name}.bias", matrix(1, rows, 0.1)[0])
        if architecture in ("qwen3", "gemma3"):
            for name in ("attn_q_norm", "attn_k_norm"):
                norm = (1 + matrix(1, head_dim, 0.1)[0]).astype(np.float32)
                writer.add_tensor(f"{prefix}.{name}.weight", norm)
        if architecture == "gemma3":  # norms after attention and MLP; all stored as 1 + w
            for name in ("post_attention_norm", "post_ffw_norm"):
                norm = (1 + matrix(1, hidden_size, 0.1)[0]).astype(np.float32)
                writer.add_tensor(f"{prefix}.{name}.weight", norm)
        add_matrix(f"{prefix}.attn_output.weight", matrix(hidden_size, hidden_size, 0.1))
        writer.add_tensor(f"{prefix}.ffn_norm.weight", np.ones(hidden_size, dtype=np.float32))
        if fused:
            add_matrix(f"{prefix}.ffn_up.weight", matrix(2 * feed_forward, hidden_size, 0.1))
        else:
            add_matrix(f"{prefix}.ffn_gate.weight", matrix(feed_forward, hidden_size, 0.1))
            add_matrix(f"{prefix}.ffn_up.weight", matrix(feed_forward, hidden_size, 0.1))
        add_matrix(f"{prefix}.ffn_down.weight", matrix(hidden_size, feed_forward, 0.1))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return target


def k_quant_blocks(rng: Any, shape: tuple[int, ...], kind: str, spread: float) -> Any:
    """Random valid blocks of the K-quant `kind` for a (rows, columns) matrix: random levels and
    sub-block scales under a float16 block scale that keeps values near `spread`."""
    import gguf
    import numpy as np

    block, block_bytes = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType[kind]]
    rows, columns = shape
    blocks = rng.integers(0, 256, size=(rows, columns // block, block_bytes), dtype=np.uint8)
    scale = np.full((rows, columns // block, 1), spread / K_QUANT_TYPICAL[kind], dtype=np.float16)
    scale = scale.view(np.uint8)
    for start in K_QUANT_SCALES[kind]:
        blocks[..., start : start + 2] = scale
    return blocks.reshape(rows, columns // block * block_bytes)


def train_sentencepiece(vocab_size: int, corpus_bytes: int) -> bytes:
    """A SentencePiece BPE model trained as Llama's was (no normalization, whitespace kept, digits
    split, byte fallback; `<unk>`, `<s>`, `</s>` as ids 0 to 2) on the standard library's text,
    as the serialized model."""
    import io

    import sentencepiece

    from .tiny_model import standard_library_text

    model = io.BytesIO()
    lines = (line for text in standard_library_text(corpus_bytes) for line in text.splitlines())
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=(line for line in lines if line.strip()),
        model_writer=model,
        vocab_size=vocab_size,
        model_type="bpe",
        byte_fallback=True,
        character_coverage=1.0,
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        allow_whitespace_only_pieces=True,
        split_digits=True,
        minloglevel=2,
    )
    return model.getvalue()


def sentencepiece_vocabulary(model: bytes) -> tuple[list[str], list[float], list[int]]:
    """Pieces, scores and token types as llama.cpp's converter writes a SentencePiece model."""
    import gguf
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor(model_proto=model)
    tokens, scores, types = [], [], []
    for index in range(processor.get_piece_size()):
        tokens.append(processor.id_to_piece(index))
        scores.append(processor.get_score(index))
        if processor.is_unknown(index):
            kind = gguf.TokenType.UNKNOWN
        elif processor.is_control(index):
            kind = gguf.TokenType.CONTROL
        elif processor.is_unused(index):
            kind = gguf.TokenType.UNUSED
        elif processor.is_byte(index):
            kind = gguf.TokenType.BYTE
        else:
            kind = gguf.TokenType.NORMAL
        types.append(int(kind))
    return tokens, scores, types
