import assert from "node:assert/strict";
import { delimiter, join } from "node:path";
import { describe, test } from "node:test";
import {
  firstOnPath,
  pythonLaunch,
  versionProblem,
} from "../../src/daemon/launch";

describe("starting the daemon", () => {
  test("the bundled libraries come first on PYTHONPATH, before the person's own", () => {
    const launch = pythonLaunch(
      "/venv/bin/python",
      "counterfoil.pythonPath",
      "/ext/bundled/libs",
      {
        PYTHONPATH: "/mine",
      },
    );
    assert.deepEqual(launch.argv, [
      "/venv/bin/python",
      "-m",
      "counterfoil",
      "serve",
    ]);
    assert.equal(launch.env.PYTHONPATH, `/ext/bundled/libs${delimiter}/mine`);
    assert.equal(
      launch.description,
      "/venv/bin/python (counterfoil.pythonPath)",
    );
  });

  test("without bundled libraries the environment is left as it is", () => {
    const launch = pythonLaunch(
      "python3",
      "python3 on PATH",
      undefined,
      {},
      "doctor",
    );
    assert.deepEqual(launch.argv, ["python3", "-m", "counterfoil", "doctor"]);
    assert.equal(launch.env.PYTHONPATH, undefined);
  });

  test("python3 is preferred to python, folder by folder along PATH", () => {
    const present = new Set([join("/b", "python3"), join("/a", "python")]);
    const found = firstOnPath(
      ["python3", "python"],
      ["/a", "/b"].join(delimiter),
      (c) => present.has(c),
    );
    assert.equal(found, join("/b", "python3"));
    assert.equal(
      firstOnPath(["python3"], "", () => true),
      undefined,
    );
  });

  test("a Python older than 3.11 gets a sentence naming the interpreter and the way out", () => {
    const problem = versionProblem("/usr/bin/python3", "3.9.2\n");
    assert.match(
      problem ?? "",
      /needs Python 3\.11 or newer; \/usr\/bin\/python3 is Python 3\.9\.2/,
    );
    assert.match(problem ?? "", /Select Interpreter/);
    assert.equal(versionProblem("python3", "3.11.0\n"), undefined);
    assert.equal(versionProblem("python3", "3.13.1"), undefined);
    assert.match(
      versionProblem("python3", "garbage") ?? "",
      /could not read the version/,
    );
  });
});
