"""A small random-weight Qwen3 model directory, built offline.

Tests, benchmarks and demos need a model that `mlx_lm.load` accepts exactly as it accepts a
downloaded one, without downloading anything: the weights are saved from mlx-lm's own Qwen3
class (so parameter names match), and the byte-level BPE tokenizer is trained locally on the
Python standard library's sources, which are on every machine. Its answers are random; its
shapes, tokenizer and chat template are real.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sysconfig
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>")
EOS_TOKEN = "<|im_end|>"
PAD_TOKEN = "<|endoftext|>"


@dataclass(frozen=True)
class TinyShape:
    """The transformer's sizes, the same for the MLX directory and the GGUF file."""

    hidden_size: int = 64
    num_layers: int = 2
    num_heads: int = 4
    num_kv_heads: int = 2

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_heads

    @property
    def feed_forward(self) -> int:
        return self.hidden_size * 3


DEFAULT_SHAPE = TinyShape()


# ChatML as Qwen3 writes it: earlier assistant turns lose their <think> block, and with
# thinking disabled the generation prompt carries an empty one.
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{%- set content = message['content'] %}"
    "{%- if message['role'] == 'assistant' and '</think>' in content %}"
    "{%- set content = content.split('</think>')[-1].lstrip('\\n') %}"
    "{%- endif %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + content + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}"
    "{{- '<think>\\n\\n</think>\\n\\n' }}"
    "{%- endif %}"
    "{%- endif %}"
)


def standard_library_text(max_bytes: int = 3_000_000) -> Iterator[str]:
    """The standard library's top-level modules, in a fixed order, up to `max_bytes`."""
    root = Path(sysconfig.get_paths()["stdlib"])
    total = 0
    for source in sorted(root.glob("*.py")):
        if total >= max_bytes:
            return
        try:
            text = source.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        text = text[: max_bytes - total]
        total += len(text.encode("utf-8"))
        yield text


def train_tokenizer(vocab_size: int, corpus_bytes: int = 3_000_000) -> str:
    """A byte-level BPE tokenizer as Qwen's are built, returned as tokenizer.json text."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(standard_library_text(corpus_bytes), trainer=trainer)
    return str(tokenizer.to_str())


def token_ids(tokenizer_json: str) -> dict[str, int]:
    """Every token's id, the learned vocabulary's and the added tokens'."""
    data = json.loads(tokenizer_json)
    ids = dict(data["model"]["vocab"])
    ids.update({token["content"]: token["id"] for token in data["added_tokens"]})
    return ids


def write_model_files(
    target: Path,
    tokenizer_json: str,
    shape: TinyShape,
    *,
    chat_template: str = CHAT_TEMPLATE,
    tie_word_embeddings: bool = True,
) -> dict[str, Any]:
    """Write the tokenizer, its config and the model's config.json; return that config.

    The embedding is as large as the tokenizer's highest id, so every token has a row.
    """
    (target / "tokenizer.json").write_text(tokenizer_json, encoding="utf-8")
    ids = token_ids(tokenizer_json)
    config = {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": shape.hidden_size,
        "num_hidden_layers": shape.num_layers,
        "intermediate_size": shape.feed_forward,
        "num_attention_heads": shape.num_heads,
        "num_key_value_heads": shape.num_kv_heads,
        "head_dim": shape.head_dim,
        "rms_norm_eps": 1e-6,
        "vocab_size": max(ids.values()) + 1,
        "max_position_embeddings": 32768,
        "rope_theta": 1_000_000.0,
        "tie_word_embeddings": tie_word_embeddings,
        "torch_dtype": "float32",
        "bos_token_id": None,
        "eos_token_id": ids[EOS_TOKEN],
    }
    (target / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": None,
        "eos_token": EOS_TOKEN,
        "pad_token": PAD_TOKEN,
        "model_max_length": 32768,
        "clean_up_tokenization_spaces": False,
        "chat_template": chat_template,
    }
    (target / "tokenizer_config.json").write_text(
        json.dumps(tokenizer_config, indent=2), encoding="utf-8"
    )
    return config


def build_tiny_model(
    directory: str | Path,
    *,
    shape: TinyShape = DEFAULT_SHAPE,
    vocab_size: int = 4096,
    corpus_bytes: int = 3_000_000,
    weight_scale: float = 4.0,
    seed: int = 0,
) -> Path:
    """Write a loadable Qwen3 model directory with random float32 weights and return its path.

    `vocab_size` is the tokenizer's target size; the model's embedding matches what the
    tokenizer actually learned. `weight_scale` widens the random matrices so that greedy
    decoding wanders over the vocabulary instead of repeating one token.
    """
    import mlx.core as mx
    from mlx.utils import tree_flatten, tree_map
    from mlx_lm.models import qwen3

    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    tokenizer_json = train_tokenizer(vocab_size, corpus_bytes)
    config = write_model_files(target, tokenizer_json, shape)
    mx.random.seed(seed)
    model = qwen3.Model(qwen3.ModelArgs.from_dict(config))
    model.update(
        tree_map(
            lambda weight: weight * weight_scale if weight.ndim == 2 else weight, model.parameters()
        )
    )
    weights = dict(tree_flatten(model.parameters()))
    mx.save_safetensors(str(target / "model.safetensors"), weights, metadata={"format": "mlx"})
    return target


def cached_tiny_model(
    cache_directory: str | Path | None = None, shape: TinyShape = DEFAULT_SHAPE, **options: Any
) -> Path:
    """`build_tiny_model(shape=shape, **options)` once per shape and options, kept under
    `cache_directory` (default: ~/.cache/counterfoil/tiny-models) so benchmarks and demos reuse
    it. The folder is named by the options and the sizes that differ from the defaults."""
    root = Path(cache_directory or Path.home() / ".cache" / "counterfoil" / "tiny-models")
    default = asdict(DEFAULT_SHAPE)
    named = {name: size for name, size in asdict(shape).items() if size != default[name]}
    named.update(options)
    key = "-".join(f"{name}={named[name]}" for name in sorted(named)) or "default"
    target = root / key.replace("/", "_")
    if not (target / "model.safetensors").is_file():
        # Built beside under this process's own name: two processes (benchmarks run side by
        # side) may build the same model at once, and the first rename wins; the other's copy
        # is dropped rather than replacing a folder that may already be loading.
        partial = root / f"{target.name}.partial-{os.getpid()}"
        if partial.exists():
            shutil.rmtree(partial)
        build_tiny_model(partial, shape=shape, **options)
        try:
            partial.rename(target)
        except OSError:
            if not (target / "model.safetensors").is_file():
                shutil.rmtree(target, ignore_errors=True)
                partial.rename(target)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    return target


def model_parser(doc: str) -> argparse.ArgumentParser:
    """The command line of a script that builds a model into a directory, described by the
    first line of the script's docstring."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("directory")
    return parser


def main() -> None:
    parser = model_parser(__doc__)
    parser.add_argument("--hidden-size", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--vocab-size", type=int, default=4096)
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args()
    path = build_tiny_model(
        arguments.directory,
        shape=TinyShape(hidden_size=arguments.hidden_size, num_layers=arguments.layers),
        vocab_size=arguments.vocab_size,
        seed=arguments.seed,
    )
    print(path)


if __name__ == "__main__":
    main()
