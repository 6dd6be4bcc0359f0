"""A tiny Qwen3 model whose greedy answers are given texts: a scripted model in real weights.

A test of a model server (mlx_lm.server, in the editor or the CLI) needs a model that writes
valid actions, offline, in a second. A random model cannot, and a downloaded one is gigabytes.
This one is a real model directory that the server loads, tokenizes for, samples and streams
from like any other; only its weights are set by hand so that it answers a script:

- each answer is one token of the vocabulary (its byte-level spelling), so it decodes exactly;
- the chat template ends the generation prompt with a step token `<|step_N|>`, N being the
  number of assistant turns so far plus one (the last answer repeats after the script ends);
- the layers add nothing to the residual stream (zero output projections), so the final
  hidden state is the last token's embedding, and the output head maps step token N to answer N
  and every answer to the end-of-turn token. Greedy decoding therefore writes answer N, then
  stops.

It is a test double for a capable model, never a product model: the weights are a lookup table.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from .tiny_model import (
    EOS_TOKEN,
    TinyShape,
    model_parser,
    token_ids,
    train_tokenizer,
    write_model_files,
)

STEP_TOKEN = "<|step_{}|>"
LOGIT_SCALE = 40.0  # the chosen token's logit; every other one is 0


def step_template(steps: int) -> str:
    """ChatML, with the step token `<|step_N|>` closing the generation prompt."""
    return (
        "{%- set ns = namespace(step=1) %}"
        "{%- for message in messages %}"
        "{%- if message['role'] == 'assistant' %}{%- set ns.step = ns.step + 1 %}{%- endif %}"
        "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
        "{%- endfor %}"
        "{%- if add_generation_prompt %}"
        f"{{{{- '<|im_start|>assistant\\n<|step_' ~ ([ns.step, {steps}] | min) ~ '|>' }}}}"
        "{%- endif %}"
    )


def byte_level(text: str) -> str:
    """`text` spelled in the byte-level alphabet GPT-2-style vocabularies use (the tokenizers
    library's own mapping, applied to the whole text as one piece)."""
    from tokenizers import pre_tokenizers

    pieces = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False).pre_tokenize_str(
        text
    )
    return "".join(piece for piece, _ in pieces)


def scripted_tokenizer(answers: Sequence[str], vocab_size: int, corpus_bytes: int) -> str:
    """A trained byte-level BPE tokenizer plus one vocabulary entry per answer and the step
    tokens; returned as tokenizer.json text."""
    data = json.loads(train_tokenizer(vocab_size, corpus_bytes))
    vocab: dict[str, int] = data["model"]["vocab"]
    next_id = max(token_ids(json.dumps(data)).values()) + 1
    for answer in answers:
        spelled = byte_level(answer)
        if spelled not in vocab:
            vocab[spelled] = next_id
            next_id += 1
    for step in range(1, len(answers) + 1):
        data["added_tokens"].append(
            {
                "id": next_id,
                "content": STEP_TOKEN.format(step),
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
        )
        next_id += 1
    return json.dumps(data, ensure_ascii=False)


def build_scripted_weights_model(
    directory: str | Path,
    answers: Sequence[str],
    *,
    vocab_size: int = 1024,
    corpus_bytes: int = 300_000,
) -> Path:
    """Write a model directory whose k-th greedy answer is `answers[k-1]`; return its path."""
    import mlx.core as mx
    from mlx.utils import tree_flatten
    from mlx_lm.models import qwen3

    if not answers:
        raise ValueError("a scripted model needs at least one answer")
    shape = TinyShape(hidden_size=max(64, 2 * len(answers) + 2), num_layers=1)
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    tokenizer_json = scripted_tokenizer(answers, vocab_size, corpus_bytes)
    config = write_model_files(
        target,
        tokenizer_json,
        shape,
        chat_template=step_template(len(answers)),
        tie_word_embeddings=False,
    )
    ids = token_ids(tokenizer_json)
    # Each source token (a step token or an answer) gets its own axis; the head reads it back.
    transitions = [
        (ids[STEP_TOKEN.format(step)], ids[byte_level(answer)])
        for step, answer in enumerate(answers, start=1)
    ] + [(ids[byte_level(answer)], ids[EOS_TOKEN]) for answer in answers]
    size, width = config["vocab_size"], shape.hidden_size
    embedding = [[0.0] * width for _ in range(size)]
    head = [[0.0] * width for _ in range(size)]
    for axis, (source, target_token) in enumerate(dict(transitions).items()):
        embedding[source][axis] = 1.0
        head[target_token][axis] = LOGIT_SCALE / width**0.5  # RMS norm scales a unit row by √width
    model = qwen3.Model(qwen3.ModelArgs.from_dict(config))
    weights = dict(tree_flatten(model.parameters()))
    for name, value in weights.items():
        if name.endswith(("o_proj.weight", "down_proj.weight")):
            weights[name] = mx.zeros_like(value)
    weights["model.embed_tokens.weight"] = mx.array(embedding)
    weights["lm_head.weight"] = mx.array(head)
    mx.save_safetensors(str(target / "model.safetensors"), weights, metadata={"format": "mlx"})
    return target


def main() -> None:
    parser = model_parser(__doc__)
    parser.add_argument(
        "answers", help="a file with one answer per line (JSON Lines: each line is one answer)"
    )
    arguments = parser.parse_args()
    lines = Path(arguments.answers).read_text(encoding="utf-8").splitlines()
    print(build_scripted_weights_model(arguments.directory, [line for line in lines if line]))


if __name__ == "__main__":
    main()
