"""The GGUF architectures Counterfoil imports: each one's mlx-lm model, names and config.

llama.cpp names a layer's tensors `blk.N.attn_q.weight`, …; mlx-lm uses Hugging Face's names.
llama.cpp's converter permutes llama's q/k projection rows for its RoPE layout (the import puts
them back); the others' converters leave them as they are. Phi-3 fuses q/k/v and gate/up into
one matrix each, as mlx-lm's phi3 does; Gemma 3's norms are stored shifted by 1. `config.json` is built from
the `<architecture>.*` metadata; mlx-lm keeps the keys its model class declares.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ModelLoadError

LAYER_NAMES = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "attn_q_norm": "self_attn.q_norm",
    "attn_k_norm": "self_attn.k_norm",
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}
TOP_NAMES = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}
# llama 3.1's RoPE scaling factors: mlx-lm recomputes them from the config.
SKIPPED = frozenset({"rope_freqs"})


# Phi-3 keeps q, k and v in one matrix, and the gate and up projections in another.
FUSED_NAMES = {"attn_qkv": "self_attn.qkv_proj", "ffn_up": "mlp.gate_up_proj"}
# Gemma 3 norms the attention's and the MLP's outputs too; its `ffn_norm` comes before the MLP.
GEMMA3_NAMES = {
    "ffn_norm": "pre_feedforward_layernorm",
    "post_attention_norm": "post_attention_layernorm",
    "post_ffw_norm": "post_feedforward_layernorm",
}


@dataclass(frozen=True)
class Architecture:
    name: str  # general.architecture
    model_type: str  # mlx-lm's model module
    hf_class: str
    permuted_qk: bool  # the converter permuted q/k rows for llama.cpp's RoPE
    fused: bool = False  # q/k/v and gate/up each in one matrix
    names: Mapping[str, str] = field(default_factory=dict)  # layer names of its own
    norm_shift: float = 0.0  # what the converter added to every norm's weights

    def layer_name(self, short: str) -> str | None:
        if short in self.names:
            return self.names[short]
        return LAYER_NAMES.get(short)


ARCHITECTURES = {
    "llama": Architecture("llama", "llama", "LlamaForCausalLM", permuted_qk=True),
    "qwen2": Architecture("qwen2", "qwen2", "Qwen2ForCausalLM", permuted_qk=False),
    "qwen3": Architecture("qwen3", "qwen3", "Qwen3ForCausalLM", permuted_qk=False),
    "phi3": Architecture(
        "phi3", "phi3", "Phi3ForCausalLM", permuted_qk=False, fused=True, names=FUSED_NAMES
    ),
    # llama.cpp's converter adds 1 to Gemma's norms (it computes x * w where Gemma has x * (1 + w)).
    "gemma3": Architecture(
        "gemma3",
        "gemma3_text",
        "Gemma3ForCausalLM",
        permuted_qk=False,
        names=GEMMA3_NAMES,
        norm_shift=1.0,
    ),
}
SUPPORTED = (
    "llama, qwen2, qwen3, phi3 and gemma3 GGUF files with a byte-level BPE or SentencePiece "
    "vocabulary"
)
# llama.cpp's fixed Gemma 3 settings (llama-model.cpp): every sixth layer attends globally, the
# others over a window with a RoPE base of 10,000.
GEMMA3_GLOBAL_EVERY = 6
GEMMA3_LOCAL_ROPE_BASE = 10_000.0
ALTERNATIVE = "serve it with llama.cpp's llama-server and pass --endpoint instead"


def architecture_of(metadata: dict[str, Any], name: str) -> Architecture:
    found = metadata.get("general.architecture")
    architecture = ARCHITECTURES.get(str(found))
    if architecture is None:
        raise ModelLoadError(
            f"{name} is a {found!r} model: Counterfoil imports {SUPPORTED}; {ALTERNATIVE}"
        )
    return architecture


def mlx_name(tensor: str, architecture: Architecture) -> str | None:
    """mlx-lm's name for the GGUF tensor, None for one it does without, or `ModelLoadError`."""
    stem, _, part = tensor.rpartition(".")
    pieces = stem.split(".")
    if len(pieces) == 3 and pieces[0] == "blk" and pieces[1].isdigit():
        name = architecture.layer_name(pieces[2])
        if name is not None:
            return f"model.layers.{int(pieces[1])}.{name}.{part}"
    if stem in TOP_NAMES:
        return f"{TOP_NAMES[stem]}.{part}"
    if stem in SKIPPED:
        return None
    raise ModelLoadError(
        f"the GGUF holds a tensor Counterfoil cannot place ({tensor!r}): it imports {SUPPORTED}; "
        f"{ALTERNATIVE}"
    )


def permuted_heads(tensor: str, architecture: Architecture, config: dict[str, Any]) -> int | None:
    """The head count whose RoPE permutation the import undoes for this tensor, if any."""
    if not architecture.permuted_qk:
        return None
    if tensor.endswith((".attn_q.weight", ".attn_q.bias")):
        return int(config["num_attention_heads"])
    if tensor.endswith((".attn_k.weight", ".attn_k.bias")):
        return int(config["num_key_value_heads"])
    return None


def model_config(
    architecture: Architecture, metadata: dict[str, Any], shapes: dict[str, tuple[int, ...]]
) -> dict[str, Any]:
    """mlx-lm's `config.json` from the `<architecture>.*` metadata and the tensors' shapes."""
    prefix = architecture.name

    def number(key: str, default: Any = None) -> Any:
        value = metadata.get(f"{prefix}.{key}", default)
        if value is None or isinstance(value, (str, list)):
            raise ModelLoadError(f"the GGUF metadata has no number {prefix}.{key}")
        return value

    hidden = int(number("embedding_length"))
    heads = int(number("attention.head_count"))
    if heads <= 0 or hidden % heads:
        raise ModelLoadError(f"the GGUF metadata's {prefix}.attention.head_count is not usable")
    embedding = shapes.get("token_embd.weight")
    if embedding is None or len(embedding) != 2:
        raise ModelLoadError("the GGUF holds no two-dimensional token_embd.weight")
    head_dim = metadata.get(f"{prefix}.attention.key_length") or metadata.get(
        f"{prefix}.rope.dimension_count", hidden // heads
    )
    config = {
        "architectures": [architecture.hf_class],
        "model_type": architecture.model_type,
        "hidden_size": hidden,
        "num_hidden_layers": int(number("block_count")),
        "intermediate_size": int(number("feed_forward_length")),
        "num_attention_heads": heads,
        "num_key_value_heads": int(number("attention.head_count_kv", heads)),
        "head_dim": int(head_dim),
        "rms_norm_eps": float(number("attention.layer_norm_rms_epsilon", 1e-6)),
        "rope_theta": float(number("rope.freq_base", 10_000.0)),
        "vocab_size": int(embedding[1]),
        "max_position_embeddings": int(number("context_length", 4096)),
        "tie_word_embeddings": "output.weight" not in shapes,
        "attention_bias": "blk.0.attn_q.bias" in shapes,
        "mlp_bias": False,
        "bos_token_id": _token_id(metadata, "bos"),
        "eos_token_id": _token_id(metadata, "eos"),
    }
    if architecture.name == "gemma3":
        config.update(_gemma3_config(metadata, config))
    _check_shapes(architecture, config, shapes)
    return config


def _gemma3_config(metadata: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Gemma 3's own keys, as llama.cpp reads the file (its 27B scales queries by the hidden
    size per head, the others by the head size)."""
    layers, heads = config["num_hidden_layers"], config["num_attention_heads"]
    scalar = config["hidden_size"] // heads if layers == 62 else config["head_dim"]
    extra: dict[str, Any] = {
        "sliding_window": int(metadata.get("gemma3.attention.sliding_window", 512)),
        "sliding_window_pattern": GEMMA3_GLOBAL_EVERY,
        "rope_local_base_freq": GEMMA3_LOCAL_ROPE_BASE,
        "query_pre_attn_scalar": scalar,
    }
    factor = metadata.get("gemma3.rope.scaling.factor")
    if isinstance(factor, (int, float)) and factor != 1:
        extra["rope_scaling"] = {"rope_type": "linear", "factor": float(factor)}
    return extra


def _check_shapes(
    architecture: Architecture, config: dict[str, Any], shapes: dict[str, tuple[int, ...]]
) -> None:
    """The metadata's sizes must be the tensors' own, so the model built from the config
    holds exactly the weights written."""
    layers = {name.split(".")[1] for name in shapes if name.startswith("blk.")}
    if layers != {str(layer) for layer in range(min(config["num_hidden_layers"], len(shapes)))}:
        raise ModelLoadError("the GGUF's layers are not the block count its metadata states")
    hidden, head_dim = config["hidden_size"], config["head_dim"]
    expected = {
        "token_embd.weight": (hidden, config["vocab_size"]),
        "output_norm.weight": (hidden,),
    }
    queries = config["num_attention_heads"] * head_dim
    keys = config["num_key_value_heads"] * head_dim
    for layer in range(config["num_hidden_layers"]):
        if architecture.fused:
            expected[f"blk.{layer}.attn_qkv.weight"] = (hidden, queries + 2 * keys)
            expected[f"blk.{layer}.ffn_up.weight"] = (hidden, 2 * config["intermediate_size"])
        else:
            expected[f"blk.{layer}.attn_q.weight"] = (hidden, queries)
            expected[f"blk.{layer}.attn_k.weight"] = (hidden, keys)
            expected[f"blk.{layer}.ffn_up.weight"] = (hidden, config["intermediate_size"])
    for name, shape in expected.items():
        if shapes.get(name) != shape:
            raise ModelLoadError(
                f"the GGUF's metadata does not match its tensors ({name} is "
                f"{shapes.get(name, 'missing')}, the metadata implies {shape})"
            )


def _token_id(metadata: dict[str, Any], which: str) -> int | None:
    value = metadata.get(f"tokenizer.ggml.{which}_token_id")
    return None if value is None else int(value)
