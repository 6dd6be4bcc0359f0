"""Prompt-lookup decoding: draft the next tokens from the conversation, verify them in one pass.

An edit action copies its `old` text, and often most of `new`, from a file the model has just
read; a `write_file` that rewrites a file copies most of it. So the tokens that follow the last
few generated ones are often already in the conversation. Each step looks up the last n tokens
(n from `max_ngram` down to 1) in the prompt and the response so far, drafts the tokens that
followed their latest earlier occurrence, feeds the last token and the draft through the model
in one forward pass, and keeps the longest drafted prefix the model itself would have chosen,
plus the model's own next token. The KV cache is trimmed back past the rejected part.

An action is JSON, so what it copies is JSON-escaped: a file read shows raw in the conversation
(a newline is a newline) but is written back as a JSON string (`\n`, `\"`), and a draft from
the raw text fails at every line's end. So the conversation's texts are also searched as they
read inside a JSON string (`sources`, `json_string_sources`): the response's own earlier tokens
first (the `new` text of an edit repeats its `old`), then those, then the raw conversation.
A draft whose match lies right before the tail (text repeating itself) goes on repeating it
rather than stopping where the tokens end.

Greedy only (the MLX loop decodes greedily): each kept token is the argmax of the same logits
the plain loop would compute, after the same logits processors, so the output is the plain
output token for token. The constrained decoder's processor is called once per kept position,
in order, exactly as in the plain loop, so its matcher only ever consumes accepted tokens; a
processor that can tell how much of a draft its grammar accepts (`allowed_draft`) cuts the draft
there before the forward pass. The draft length grows while drafts are accepted and shrinks on
a rejection; after several drafts in a row are rejected outright, drafting pauses for a while
(longer each time), so text with nothing to copy decodes as it would without lookup. A cache
that cannot be trimmed (a rotating window past its size, a recurrent state) is decoded plainly.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LookupConfig:
    """How drafts are found and sized."""

    max_ngram: int = 3
    first_draft: int = 4
    max_draft: int = 24
    # Drafts rejected outright in a row before drafting pauses, and the pauses' bounds (tokens).
    patience: int = 3
    first_pause: int = 8
    max_pause: int = 256


@dataclass
class LookupStats:
    """What lookup did, summed over the responses it decoded."""

    drafted: int = 0
    accepted: int = 0
    verify_passes: int = 0
    plain_steps: int = 0
    cut_by_mask: int = 0
    generated: int = 0

    @property
    def acceptance(self) -> float:
        """Accepted drafted tokens over drafted tokens (0 when nothing was drafted)."""
        return self.accepted / self.drafted if self.drafted else 0.0


NgramTable = list[dict[tuple[int, ...], int]]  # per n: each n-gram, the position after it


def _index(tokens: Sequence[int], max_ngram: int, table: NgramTable, offset: int = 0) -> None:
    for position in range(offset, len(tokens)):
        for n in range(1, min(max_ngram, position) + 1):
            table[n][tuple(tokens[position - n : position])] = position


class NgramIndex:
    """The conversation's tokens, and for each n-gram the position after its latest occurrence;
    likewise for `sources`, other token sequences drafts may come from (the conversation's
    texts as they read inside a JSON string)."""

    def __init__(
        self, tokens: Sequence[int], max_ngram: int, sources: Sequence[Sequence[int]] = ()
    ) -> None:
        self.tokens: list[int] = list(tokens)
        self.max_ngram = max_ngram
        self.response_start = len(self.tokens)
        self._next: NgramTable = [{} for _ in range(max_ngram + 1)]
        _index(self.tokens, max_ngram, self._next)
        self.source: list[int] = []
        self._source_next: NgramTable = [{} for _ in range(max_ngram + 1)]
        for source in sources:
            start = len(self.source)
            self.source.extend(source)
            _index(self.source, max_ngram, self._source_next, start + 1)

    def append(self, token: int) -> None:
        tokens = self.tokens
        position = len(tokens)
        for n in range(1, min(self.max_ngram, position) + 1):
            self._next[n][tuple(tokens[position - n :])] = position
        tokens.append(token)

    def draft(self, length: int) -> list[int]:
        """Up to `length` tokens that followed the latest earlier occurrence of the longest
        matching tail (n-gram) of the conversation: in the response itself, else in the
        sources, else in the prompt; empty when no tail has occurred before."""
        tokens = self.tokens
        for n in range(min(self.max_ngram, len(tokens)), 0, -1):
            tail = tuple(tokens[-n:])
            start = self._next[n].get(tail)
            if start is None or start < self.response_start:
                elsewhere = self._source_next[n].get(tail)
                if elsewhere is not None:
                    return self.source[elsewhere : elsewhere + length]
            if start is not None:
                return _continued(tokens, start, length)
        return []


def _continued(tokens: list[int], start: int, length: int) -> list[int]:
    """`length` tokens from `start` on; past the end, the stretch from `start` to the end
    repeated (the tail matched right before it, so the text is repeating with that period)."""
    end = len(tokens)
    draft = tokens[start : start + length]
    while len(draft) < length:
        draft.append(draft[len(draft) - (end - start)])
    return draft


def json_string_sources(
    encode: Callable[[str], list[int]], texts: Iterable[str]
) -> list[list[int]]:
    """Each of `texts` that reads differently inside a JSON string, as tokens of it there
    (what an action that copies it writes)."""
    sources = []
    for text in texts:
        escaped = json.dumps(text, ensure_ascii=False)[1:-1]
        if escaped != text:
            sources.append(encode(escaped))
    return sources


class DraftLength:
    """The draft length, adapted to the acceptance seen, with pauses after repeated failures."""

    def __init__(self, config: LookupConfig) -> None:
        self._config = config
        self.length = config.first_draft
        self._failures = 0
        self._pause = config.first_pause
        self._paused_for = 0

    @property
    def paused_for(self) -> int:
        """Tokens still to decode plainly before drafting again."""
        return self._paused_for

    def decoded_plainly(self, tokens: int) -> None:
        self._paused_for = max(0, self._paused_for - tokens)

    def record(self, drafted: int, accepted: int) -> None:
        config = self._config
        if accepted == drafted:
            self.length = min(config.max_draft, self.length * 2)
        else:
            self.length = max(1, accepted + 1)
        if accepted > 0:
            self._failures = 0
            self._pause = config.first_pause
            return
        self._failures += 1
        if self._failures >= config.patience:
            self._paused_for = self._pause
            self._pause = min(config.max_pause, self._pause * 2)
            self._failures = 0


def lookup_generate_step(
    prompt: Any,
    model: Any,
    stream: Any = None,
    *,
    context: Sequence[int],
    max_tokens: int = 256,
    logits_processors: list[Callable[[Any, Any], Any]] | None = None,
    prompt_cache: list[Any],
    prefill_step_size: int = 2048,
    config: LookupConfig | None = None,
    stats: LookupStats | None = None,
    eos_token_ids: Collection[int] = (),
    sources: Sequence[Sequence[int]] = (),
) -> Generator[tuple[int, Any, bool], None, None]:
    """`mlx_lm.generate_step` for greedy decoding, with prompt lookup: yields (token, logprobs,
    from_draft). `prompt` is the suffix still to prefill; `context` the conversation's tokens
    (the whole prompt, ending with `prompt`, or only what precedes it), searched for drafts
    along with the response and `sources` (see `NgramIndex`). It ends after an end-of-sequence token or `max_tokens` tokens, the
    cache then holding the prompt and every token yielded, as the plain loop leaves it; closed
    earlier, it trims the cache back to tokens it yielded (without computing the last one).
    Long because it follows `mlx_lm.generate_step` step for step (prefill, draft, verify,
    accept, trim), so the two read side by side; split, the cache's state would cross calls.
    """
    from mlx_lm.generate import generation_stream
    from mlx_lm.models.cache import can_trim_prompt_cache, trim_prompt_cache

    mx = _mlx()
    config = config or LookupConfig()
    stats = stats if stats is not None else LookupStats()
    processors = logits_processors or []
    suffix = [int(token) for token in prompt.tolist()]
    if not suffix:
        raise ValueError("prompt must hold at least one token")
    conversation = list(context)
    if conversation[len(conversation) - len(suffix) :] != suffix:
        conversation += suffix
    index = NgramIndex(conversation, config.max_ngram, sources)
    sequence = list(suffix)  # what the processors see: the suffix, then the response
    fed: list[int] = list(suffix[:-1])  # the tokens the cache holds past the prefix, in order
    lengths = DraftLength(config)
    generated = 0
    stream = stream if stream is not None else generation_stream

    def forward(tokens: list[int]) -> Any:
        logits = model(mx.array(tokens, dtype=mx.uint32)[None], cache=prompt_cache)
        fed.extend(tokens)
        return logits[0]

    def pick(row: Any, position: int) -> tuple[int, Any]:
        """The greedy token at one position after the processors, as generate_step picks it."""
        row = row[None]
        if processors:
            seen = mx.array(sequence[: position + 1])
            for processor in processors:
                row = processor(seen, row)
        logprobs = (row - mx.logsumexp(row, keepdims=True)).squeeze(0)
        return int(mx.argmax(logprobs).item()), logprobs

    def plain_run(count: int) -> Iterator[tuple[int, Any]]:
        """`count` tokens decoded without drafts, each step queued before the last one's token
        is read (as `generate_step` does), so a pause costs nothing over plain decoding."""
        nonlocal generated

        def step(token: Any) -> tuple[Any, Any]:
            row = model(token.reshape(1, 1), cache=prompt_cache)[0, -1]
            logprobs = row - mx.logsumexp(row, keepdims=True)
            return mx.argmax(logprobs), logprobs

        token, logprobs = step(mx.array(sequence[-1], dtype=mx.uint32))
        fed.append(sequence[-1])
        mx.async_eval(token, logprobs)
        for made in range(count):
            if made + 1 < count:
                following = step(token)
                mx.async_eval(*following)
            value = int(token.item())
            sequence.append(value)
            index.append(value)
            generated += 1
            stats.generated += 1
            stats.plain_steps += 1
            if made + 1 < count:
                fed.append(value)
            yield value, logprobs
            if made + 1 < count:
                token, logprobs = following

    def finishing(token: int) -> bool:
        return token in eos_token_ids or generated >= max_tokens

    def reconcile(feed: bool = True) -> None:
        """Trim the cache to what it shares with `sequence`, then feed what is missing."""
        keep = 0
        limit = min(len(fed), len(sequence))
        while keep < limit and fed[keep] == sequence[keep]:
            keep += 1
        excess = len(fed) - keep
        if excess:
            trim_prompt_cache(prompt_cache, excess)
            del fed[keep:]
        missing = sequence[keep:]
        if missing and feed:
            forward(missing)
            mx.eval([layer.state for layer in prompt_cache])

    with mx.stream(stream):
        done = 0
        while len(suffix) - 1 - done > 0:
            chunk = suffix[done : min(done + prefill_step_size, len(suffix) - 1)]
            model(mx.array(chunk, dtype=mx.uint32)[None], cache=prompt_cache)
            mx.eval([layer.state for layer in prompt_cache])
            done += len(chunk)
            mx.clear_cache()
        try:
            while generated < max_tokens:
                room = max_tokens - generated - 1
                if lengths.paused_for and not processors:
                    run = min(lengths.paused_for, room + 1)
                    for token, logprobs in plain_run(run):
                        if finishing(token):
                            reconcile()
                            yield token, logprobs, False
                            return
                        yield token, logprobs, False
                    lengths.decoded_plainly(run)
                    continue
                wanted = 0 if lengths.paused_for else min(lengths.length, room)
                lengths.decoded_plainly(1)
                draft = index.draft(wanted) if wanted > 0 else []
                if draft and not can_trim_prompt_cache(prompt_cache):
                    draft = []
                if draft:
                    draft = _cut_by_processors(processors, sequence, draft, stats)
                logits = forward([sequence[-1], *draft])
                if draft:
                    stats.verify_passes += 1
                    stats.drafted += len(draft)
                else:
                    stats.plain_steps += 1
                if not processors and draft:
                    greedy = mx.argmax(logits, axis=-1).tolist()
                accepted = 0
                for position in range(len(draft) + 1):
                    if processors or not draft:
                        token, logprobs = pick(logits[position], len(sequence) - 1)
                    else:
                        token = int(greedy[position])
                        row = logits[position]
                        logprobs = row - mx.logsumexp(row, keepdims=True)
                    matches = position < len(draft) and token == draft[position]
                    sequence.append(token)
                    index.append(token)
                    generated += 1
                    stats.generated += 1
                    if matches:
                        accepted += 1
                        stats.accepted += 1
                    if finishing(token):
                        reconcile()
                        yield token, logprobs, position > 0
                        return
                    yield token, logprobs, position > 0
                    if not matches:
                        break
                if draft:
                    lengths.record(len(draft), accepted)
                    rejected = len(draft) - accepted
                    if rejected:
                        trim_prompt_cache(prompt_cache, rejected)
                        del fed[len(fed) - rejected :]
                if generated % 256 < len(draft) + 1:
                    mx.clear_cache()
        finally:
            reconcile(feed=False)


def _mlx() -> Any:
    """`mlx.core`, untyped: its stubs type `item()` and `tolist()` as any Python scalar."""
    import mlx.core

    return mlx.core


def _cut_by_processors(
    processors: list[Callable[[Any, Any], Any]],
    sequence: Sequence[int],
    draft: list[int],
    stats: LookupStats,
) -> list[int]:
    """The draft up to its first token a processor's grammar forbids."""
    for processor in processors:
        allowed_draft = getattr(processor, "allowed_draft", None)
        if allowed_draft is None:
            continue
        allowed = int(allowed_draft(sequence, draft))
        if allowed < len(draft):
            stats.cut_by_mask += 1
            draft = draft[:allowed]
    return draft


def stream_generate_with_lookup(
    context: Sequence[int],
    stats: LookupStats | None = None,
    config: LookupConfig | None = None,
    *,
    greedy: bool = True,
    sources: Sequence[Sequence[int]] = (),
) -> Callable[..., Iterator[Any]]:
    """A drop-in for `mlx_lm.stream_generate` (same arguments, same `GenerationResponse`s)
    that decodes with prompt lookup over `context` (the conversation's tokens, see
    `lookup_generate_step`).
    Lookup decodes greedily, ignoring `sampler`: a caller that samples says `greedy=False`,
    and then, as with a cache that cannot be trimmed, mlx-lm's own loop decodes."""

    def generate(
        model: Any,
        tokenizer: Any,
        prompt: Any,
        max_tokens: int = 256,
        stream: Any = None,
        **options: Any,
    ) -> Iterator[Any]:
        from mlx_lm import stream_generate
        from mlx_lm.models.cache import can_trim_prompt_cache

        cache = options.get("prompt_cache")
        if not greedy or cache is None or not can_trim_prompt_cache(cache):
            if stream is not None:
                options["stream"] = stream
            yield from stream_generate(model, tokenizer, prompt, max_tokens=max_tokens, **options)
            return
        yield from _responses(
            tokenizer,
            prompt,
            max_tokens,
            lookup_generate_step(
                prompt,
                model,
                stream,
                context=context,
                max_tokens=max_tokens,
                logits_processors=options.get("logits_processors"),
                prompt_cache=cache,
                prefill_step_size=options.get("prefill_step_size", 2048),
                config=config,
                stats=stats,
                eos_token_ids=tokenizer.eos_token_ids,
                sources=sources,
            ),
        )

    return generate


def _responses(
    tokenizer: Any, prompt: Any, max_tokens: int, tokens: Generator[tuple[int, Any, bool]]
) -> Iterator[Any]:
    """`GenerationResponse`s from a token generator, as `mlx_lm.stream_generate` makes them:
    EOS ends the stream (reported only in the last response), as does `max_tokens`."""
    from mlx_lm.generate import GenerationResponse

    mx = _mlx()

    detokenizer = tokenizer.detokenizer
    eos = tokenizer.eos_token_ids
    started = time.perf_counter()
    prompt_tps = 0.0
    token, from_draft, count = 0, False, 0
    logprobs: Any = None

    def response(finish_reason: str | None) -> Any:
        return GenerationResponse(
            text=detokenizer.last_segment,
            token=token,
            logprobs=logprobs,
            from_draft=from_draft,
            prompt_tokens=prompt.size,
            prompt_tps=prompt_tps,
            generation_tokens=count,
            generation_tps=count / max(time.perf_counter() - started, 1e-9),
            peak_memory=mx.get_peak_memory() / 1e9,
            finish_reason=finish_reason,
        )

    try:
        for count, (token, logprobs, from_draft) in enumerate(tokens, start=1):
            if count == 1:
                prompt_tps = prompt.size / max(time.perf_counter() - started, 1e-9)
                started = time.perf_counter()
            if token in eos:
                break
            detokenizer.add_token(token)
            if count == max_tokens:
                break
            yield response(None)
    finally:
        tokens.close()
    detokenizer.finalize()
    yield response("stop" if token in eos else "length")
