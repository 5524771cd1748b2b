// Where the screenpilot binary is: the one lookup of the npm package `screenpilot`, used by its
// launcher (`bin/screenpilot.js`) and by the pi package `@screenpilot/pi`, which depends on this one.
//
//     const { findBinary } = require("screenpilot");
//     findBinary()                      // $SCREENPILOT_BINARY, else the per-platform package's
//     findBinary({ searchPath: true })  // ... else `screenpilot` on PATH
//
// The binary comes from the per-platform package installed beside this one
// (`@screenpilot/<platform>-<arch>`, an optional dependency that npm installs only where it fits),
// resolved from here: it is this package's dependency, wherever npm put it.
"use strict";

const fs = require("node:fs");
const path = require("node:path");

// The platforms with a prebuilt binary are the per-platform packages this package depends on (a
// target is added by listing its package there), so the list never names one that has no package.
const SCOPE = "@screenpilot/";
const SUPPORTED = Object.keys(require("../package.json").optionalDependencies || {})
  .filter((name) => name.startsWith(SCOPE))
  .map((name) => name.slice(SCOPE.length));

/** Why no binary was found; `code` is "SCREENPILOT_NO_BINARY". */
class NoBinary extends Error {
  constructor(message) {
    super(message);
    this.name = "NoBinary";
    this.code = "SCREENPILOT_NO_BINARY";
  }
}

/** Is `file` an executable regular file? */
function executable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The screenpilot binary, looked for in this order:
 * 1. `$SCREENPILOT_BINARY` when it is set (a build of one's own; it must exist);
 * 2. the binary of the per-platform package `@screenpilot/<platform>-<arch>`;
 * 3. with `searchPath`, `screenpilot` on PATH (`cargo install`, the Python wheel). The launcher
 *    leaves this out: on PATH, `screenpilot` is usually the launcher itself.
 * Throws a `NoBinary` saying what is missing and what to do.
 */
function findBinary({ searchPath = false } = {}) {
  const given = process.env.SCREENPILOT_BINARY;
  if (given) {
    if (!fs.existsSync(given)) {
      throw new NoBinary(`SCREENPILOT_BINARY is set to ${given}, which does not exist`);
    }
    return given;
  }
  const target = `${process.platform}-${process.arch}`;
  const pkg = `${SCOPE}${target}`;
  try {
    return require.resolve(`${pkg}/bin/screenpilot`);
  } catch {}
  if (searchPath) {
    for (const dir of (process.env.PATH || "").split(path.delimiter)) {
      if (dir && executable(path.join(dir, "screenpilot"))) return path.join(dir, "screenpilot");
    }
  }
  const why = SUPPORTED.includes(target)
    ? `the package ${pkg}, which holds the screenpilot binary for this platform, is not installed. ` +
      "npm skips it when optional dependencies are turned off (--omit=optional, --no-optional): " +
      `reinstall without that, or install ${pkg} yourself, or set SCREENPILOT_BINARY.`
    : `there is no prebuilt binary for ${target} (there are: ${SUPPORTED.join(", ")}). ` +
      "Build it from source with `cargo install screenpilot` and set SCREENPILOT_BINARY to it.";
  throw new NoBinary(searchPath ? `no screenpilot binary: ${why} There is no screenpilot on PATH either.` : why);
}

module.exports = { findBinary, NoBinary };
