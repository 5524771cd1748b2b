#!/usr/bin/env node
// The `screenpilot` command of the npm package: finds the native binary (`lib/find-binary.js`: the
// per-platform package's, or $SCREENPILOT_BINARY) and runs it with this process's arguments,
// standard streams (so `screenpilot mcp` speaks MCP over them directly), signals and exit status.
"use strict";

const { spawn } = require("node:child_process");
const { findBinary } = require("../lib/find-binary.js");

function fail(message) {
  process.stderr.write(`screenpilot: ${message}\n`);
  process.exit(127);
}

let binary;
try {
  binary = findBinary();
} catch (e) {
  fail(e.message);
}
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
