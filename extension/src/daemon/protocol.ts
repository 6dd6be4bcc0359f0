// The daemon's wire format: the types are generated from the daemon's message dataclasses
// (server/counterfoil/protocol/) into protocol.generated.ts. Plain types only, so the
// pure modules and their unit tests can use them without VS Code.

export * from "./protocol.generated";

/** `counterfoil/revert` answers as a validation does. */
export type { ValidationResult as RevertResult } from "./protocol.generated";

/** `counterfoil/runState`. */
export type { RunStateNotice } from "./protocol.generated";
