import assert from "node:assert/strict";
import { test } from "node:test";
import { describeModelState } from "../../src/model/modelState";
import type { ModelState } from "../../src/daemon/protocol";

/** A modelState notification with the fields a test does not name left null. */
const shown = (
  fields: Partial<ModelState> & Pick<ModelState, "state">,
): ModelState => ({
  model: null,
  endpoint: null,
  message: null,
  tokens: null,
  tokensPerSecond: null,
  promptTokens: null,
  ...fields,
});

test("generating shows tokens per second", () => {
  const { text, tooltip } = describeModelState(
    shown({
      state: "generating",
      model: "qwen3-4b",
      tokens: 40,
      tokensPerSecond: 12.345,
    }),
  );
  assert.equal(text, "$(sync~spin) Counterfoil: generating 12.3 tok/s");
  assert.match(tooltip, /Model: qwen3-4b/);
  assert.match(tooltip, /Tokens: 40/);
});

test("loading and errors carry the daemon's message in the tooltip", () => {
  assert.equal(
    describeModelState(shown({ state: "loading", model: "m" })).text,
    "$(loading~spin) Counterfoil: loading",
  );
  assert.match(
    describeModelState(
      shown({ state: "error", model: "m", message: "no such model" }),
    ).tooltip,
    /no such model/,
  );
});

test("a model on a server shows the server's host", () => {
  const { text, tooltip } = describeModelState(
    shown({
      state: "generating",
      model: "qwen at http://10.0.0.5:8000/v1",
      endpoint: "http://10.0.0.5:8000/v1",
      tokens: 40,
      tokensPerSecond: 20,
    }),
  );
  assert.equal(
    text,
    "$(sync~spin) Counterfoil: generating 20.0 tok/s @ 10.0.0.5:8000",
  );
  assert.match(tooltip, /Model: qwen at http:\/\/10\.0\.0\.5:8000\/v1/);
});

test("ready shows no speed", () => {
  assert.equal(
    describeModelState(shown({ state: "ready", tokensPerSecond: 10 })).text,
    "$(check) Counterfoil: ready",
  );
});

test("a prompt being read says so, not generating, with the prefill's rate", () => {
  const { text } = describeModelState(
    shown({
      state: "generating",
      model: "qwen3-4b",
      tokens: 0,
      promptTokens: 1024,
      tokensPerSecond: 250,
    }),
  );
  assert.equal(
    text,
    "$(sync~spin) Counterfoil: reading the prompt 250.0 tok/s",
  );
});

test("a step's start reads as the prompt being read before any prefill or token is reported", () => {
  assert.equal(
    describeModelState(
      shown({
        state: "generating",
        model: "model.gguf",
        tokens: 0,
        message: "reading the prompt…",
      }),
    ).text,
    "$(sync~spin) Counterfoil: reading the prompt",
  );
});
