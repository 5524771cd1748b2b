#!/usr/bin/env node
// The `screenpilot` command of the npm package: finds the native binary and runs it with this
// process's arguments, standard streams (so `screenpilot mcp` speaks MCP over them directly),
// signals and exit status. The binary comes from the per-platform package installed beside this one
// (`@screenpilot/<platform>-<arch>`, an optional dependency that npm installs only where it fits),
// or from $SCREENPILOT_BINARY.
"use strict";

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

// The platforms with a prebuilt binary are the per-platform packages this package depends on (a
// target is added by listing its package there), so the list never names one that has no package.
const SCOPE = "@screenpilot/";
const SUPPORTED = Object.keys(require("../package.json").optionalDependencies || {})
  .filter((name) => name.startsWith(SCOPE))
  .map((name) => name.slice(SCOPE.length));

function findBinary() {
  const given = process.env.SCREENPILOT_BINARY;
  if (given) {
    if (!fs.existsSync(given)) {
      fail(`SCREENPILOT_BINARY is set to ${given}, which does not exist`);
    }
    return given;
  }
  const target = `${process.platform}-${process.arch}`;
  const pkg = `${SCOPE}${target}`;
  try {
    return require.resolve(`${pkg}/bin/screenpilot`);
  } catch (e) {
    if (!SUPPORTED.includes(target)) {
      fail(
        `there is no prebuilt binary for ${target} (there are: ${SUPPORTED.join(", ")}). ` +
          "Build it from source with `cargo install screenpilot` and set SCREENPILOT_BINARY to it.",
      );
    }
    fail(
      `the package ${pkg}, which holds the screenpilot binary for this platform, is not installed. ` +
        "npm skips it when optional dependencies are turned off (--omit=optional, --no-optional): " +
        `reinstall without that, or install ${pkg} yourself, or set SCREENPILOT_BINARY.`,
    );
  }
}

function fail(message) {
  process.stderr.write(`screenpilot: ${message}\n`);
  process.exit(127);
}

const binary = findBinary();
const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });
// Signals sent to this launcher go to the binary; the launcher exits as the binary does.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"]) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}
child.on("error", (e) => fail(`cannot run ${binary}: ${e.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
