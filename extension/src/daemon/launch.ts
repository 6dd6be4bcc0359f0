// How the daemon is started: the interpreter's argv, the bundled libraries on PYTHONPATH, and the
// interpreter's version checked first so an old Python gets a sentence, not a traceback. Pure.

import { delimiter, join } from "node:path";

/** The oldest Python the daemon runs on (pyproject's requires-python). */
export const MINIMUM_PYTHON: readonly [number, number] = [3, 11];

/** The argv and environment that start the daemon, and a sentence on where they came from. */
export interface DaemonLaunch {
  argv: string[];
  env: NodeJS.ProcessEnv;
  /** e.g. "/usr/bin/python3 (python3 on PATH)"; shown in the trace and the status bar. */
  description: string;
  /** The interpreter, when the daemon runs as `python -m counterfoil`; absent for serverCommand. */
  python?: string;
}

export function isArgv(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((part) => typeof part === "string" && part !== "")
  );
}

/** `python -m counterfoil SUBCOMMAND` with the bundled libraries first on PYTHONPATH. */
export function pythonLaunch(
  python: string,
  source: string,
  bundledLibs: string | undefined,
  env: NodeJS.ProcessEnv,
  subcommand = "serve",
): DaemonLaunch {
  const withLibs = { ...env };
  if (bundledLibs) {
    withLibs.PYTHONPATH = [bundledLibs, env.PYTHONPATH]
      .filter((part) => part)
      .join(delimiter);
  }
  return {
    argv: [python, "-m", "counterfoil", subcommand],
    env: withLibs,
    description: `${python} (${source})`,
    python,
  };
}

/** The first of `names` that is a file in one of PATH's folders. */
export function firstOnPath(
  names: readonly string[],
  pathVariable: string | undefined,
  isExecutable: (candidate: string) => boolean,
): string | undefined {
  const folders = (pathVariable ?? "").split(delimiter).filter((d) => d);
  for (const name of names) {
    for (const folder of folders) {
      const candidate = join(folder, name);
      if (isExecutable(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

/** The code the interpreter runs to report its version, printed as "3.11.7". */
export const VERSION_PROBE =
  "import sys; print('%d.%d.%d' % sys.version_info[:3])";

/** Why this interpreter cannot run the daemon, or undefined when it can. */
export function versionProblem(
  python: string,
  probeOutput: string,
): string | undefined {
  const match = /^(\d+)\.(\d+)\.(\d+)/.exec(probeOutput.trim());
  if (!match) {
    return `Counterfoil could not read the version of ${python} (it printed ${JSON.stringify(probeOutput.trim())}).`;
  }
  const [major, minor] = [Number(match[1]), Number(match[2])];
  const [needMajor, needMinor] = MINIMUM_PYTHON;
  if (major < needMajor || (major === needMajor && minor < needMinor)) {
    return `Counterfoil needs Python ${needMajor}.${needMinor} or newer; ${python} is Python ${match[0]}. Choose another interpreter (Python: Select Interpreter, or counterfoil.pythonPath).`;
  }
  return undefined;
}
