#!/usr/bin/env bash
# Build the install-without-Rust packages from a built screenpilot binary:
#   - npm: `screenpilot` (a JS launcher, bin `screenpilot`) and `@screenpilot/<os>-<arch>` (the binary,
#     an optional dependency of the first with `os`/`cpu` set, the convention esbuild uses);
#   - Python: a binary-only wheel `screenpilot-VERSION-py3-none-manylinux_2_N_ARCH.whl`, built by
#     maturin from packages/python/pyproject.toml (`bindings = "bin"`).
#
#   packages/build.sh [BINARY] [OUTDIR]
#
# BINARY defaults to target/release/screenpilot (build it with `cargo build --release --locked`);
# OUTDIR to packages/dist. The npm binary is BINARY, stripped on the way in. maturin builds the wheel
# from the workspace itself, with the cargo profile BINARY was built with (so BINARY must be
# TARGET_DIR/PROFILE/screenpilot) and no flags of its own: cargo finds everything built.
# Only the host's platform is built; other targets (linux-arm64, ...) are the same steps on a binary
# built for them: one more `@screenpilot/<os>-<arch>` package listed in the launcher's
# optionalDependencies, one more wheel. Needs python3, strip, cargo, npm (for `npm pack`; $NPM names
# another npm command, e.g. "node /path/to/npm-cli.js") and maturin ($MATURIN names another).
# Publishing is not done here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
binary=${1:-$root/target/release/screenpilot}
out=${2:-$here/dist}
read -ra npm <<< "${NPM:-npm}"
read -ra maturin <<< "${MATURIN:-maturin}"

[ -x "$binary" ] || { echo "no screenpilot binary at $binary (cargo build --release --locked)" >&2; exit 1; }
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
reported=$("$binary" --version)
[ "$reported" = "screenpilot $version" ] || { echo "$binary reports '$reported', the workspace is $version" >&2; exit 1; }

case "$(uname -s)" in Linux) os=linux ;; *) echo "only Linux binaries are packaged" >&2; exit 1 ;; esac
machine=$(uname -m)
case "$machine" in x86_64) cpu=x64 ;; aarch64) cpu=arm64 ;; *) echo "unknown machine $machine" >&2; exit 1 ;; esac
# The cargo profile whose output BINARY is (target/debug is the dev profile's directory).
target_dir=$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
case "$(cd "$(dirname "$binary")" && pwd)" in
  "$target_dir/debug") profile=dev ;;
  "$target_dir"/*) profile=$(basename "$(dirname "$binary")") ;;
  *) echo "$binary is not in $target_dir/PROFILE/: maturin builds the wheel from the workspace, with BINARY's profile" >&2; exit 1 ;;
esac

rm -rf "$out"
mkdir -p "$out/stage"
stage=$out/stage

# The per-platform npm package: the binary and a manifest that npm installs only where it runs.
plat=$stage/$os-$cpu
mkdir -p "$plat/bin"
strip -o "$plat/bin/screenpilot" "$binary"
chmod 755 "$plat/bin/screenpilot"
python3 - "$plat/package.json" "$version" "$os" "$cpu" <<'PY'
import json, sys
path, version, os_, cpu = sys.argv[1:]
json.dump({
    "name": f"@screenpilot/{os_}-{cpu}",
    "version": version,
    "description": f"The screenpilot binary for {os_}-{cpu} (installed by the screenpilot package).",
    "license": "MIT OR Apache-2.0",
    "os": [os_],
    "cpu": [cpu],
    "files": ["bin/screenpilot"],
    "preferUnplugged": True,
}, open(path, "w"), indent=2)
PY
printf '# @screenpilot/%s-%s\n\nThe prebuilt screenpilot binary for %s-%s; install the `screenpilot` package, which uses it.\n' \
  "$os" "$cpu" "$os" "$cpu" > "$plat/README.md"

# The main npm package: the launcher, with every platform package at this exact version.
main=$stage/screenpilot
cp -r "$here/npm/screenpilot" "$main"
python3 - "$main/package.json" "$version" <<'PY'
import json, sys
path, version = sys.argv[1:]
manifest = json.load(open(path))
manifest["version"] = version
manifest["optionalDependencies"] = {name: version for name in manifest["optionalDependencies"]}
json.dump(manifest, open(path, "w"), indent=2)
PY

(cd "$out" && "${npm[@]}" pack --silent "$plat" "$main" >/dev/null)
rm -rf "$stage"

# The wheel, with the binary as its profile built it: the release profile strips it already (stripping
# here would make maturin compile the crate again with `-C strip=symbols`), and a debug binary keeps
# the debug information the debug build others use has.
(cd "$here/python" && "${maturin[@]}" build --quiet --locked --profile "$profile" --strip false --out "$out")
ls -la "$out"
