// The extension-host test runner: VS Code (code-server) loads this bundle as
// `extensionTestsPath` and calls run(). Mocha runs the suites in extension.test.ts against the
// real `vscode` API and the real daemon; each result is printed as a console line the UI test
// reads from the page ("counterfoil-host: ok 1 - …").

import Mocha from "mocha";

const PREFIX = "counterfoil-host:";

/** A Mocha reporter that writes one console line per test and a summary. */
class ConsoleLines extends Mocha.reporters.Base {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    let index = 0;
    let passed = 0;
    let failed = 0;
    runner.on("pass", (test) => {
      index += 1;
      passed += 1;
      console.log(
        `${PREFIX} ok ${index} - ${test.fullTitle()} (${test.duration ?? 0} ms)`,
      );
    });
    runner.on("fail", (test, error: Error) => {
      index += 1;
      failed += 1;
      console.log(
        `${PREFIX} not ok ${index} - ${test.fullTitle()}\n${error.stack ?? error.message}`,
      );
    });
    runner.on("end", () =>
      console.log(`${PREFIX} ${passed} passed, ${failed} failed`),
    );
  }
}

export async function run(): Promise<void> {
  const mocha = new Mocha({
    ui: "tdd",
    timeout: 60_000,
    reporter: ConsoleLines,
  });
  mocha.suite.emit("pre-require", globalThis, "extension.test", mocha);
  await import("./extension.test");
  const failures = await new Promise<number>((done) => mocha.run(done));
  if (failures > 0) {
    throw new Error(`${failures} extension-host test(s) failed`);
  }
}
