#!/usr/bin/env bash
# MuJoCo for the MJCF/URDF import (docs/import.md), from PyPI: downloads the pinned mujoco-core wheel
# (MuJoCo's own build of libmujoco and its headers; since 4.0 the `mujoco` wheel's library half),
# without its dependencies and without installing it, and unpacks
#   <dest>/include/mujoco/*.h
#   <dest>/lib/libmujoco.so.<version>, and libmujoco.so linking to it (the wheel has no plain name)
# then prints <dest>. An existing <dest> with both is reused (nothing is downloaded).
#   bash tools/fetch_mujoco.sh [dest]     # dest defaults to $STEER_DEPS_DIR/mujoco-<version>,
#                                         # STEER_DEPS_DIR to <repository>/.deps
# The version is the one dm_control 1.0.52 requires (Requires-Dist: mujoco>=4.0.1), so that files
# written for it compile as they do there. Exit 1, saying why on stderr, where PyPI (or pip) is
# not reachable; tools/bootstrap.sh then builds against what CMake finds, or without the import.
set -euo pipefail
version=4.0.1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest=${1:-${STEER_DEPS_DIR:-$root/.deps}/mujoco-$version}
lib=libmujoco.so.$version
if [[ -f "$dest/lib/$lib" && -f "$dest/include/mujoco/mujoco.h" ]]; then
  echo "$dest"
  exit 0
fi

# a pip: the interpreter's own, else one from a throwaway venv (Debian's python3 has no pip
# unless python3-pip is installed; python3-venv brings one)
py=$(command -v python3 || true)
if [[ -z "$py" ]]; then
  echo "steer: fetch_mujoco: no python3 to run pip" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pip=("$py" -m pip)
if ! "$py" -m pip --version >/dev/null 2>&1; then
  if ! "$py" -m venv "$tmp/venv" >/dev/null 2>&1; then
    echo "steer: fetch_mujoco: $py has no pip and cannot make a venv (install python3-venv or python3-pip)" >&2
    exit 1
  fi
  pip=("$tmp/venv/bin/python" -m pip)
fi

# the wheel for this machine's architecture; its Python tag does not matter (only libmujoco and
# the headers are used), so it is named explicitly and any python3 can download it
arch=$(uname -m)
if ! "${pip[@]}" download --disable-pip-version-check -q --timeout 30 --retries 1 --no-deps \
    --only-binary=:all: --python-version 3.11 --platform "manylinux_2_28_$arch" \
    -d "$tmp/wheel" "mujoco-core==$version" >"$tmp/pip.log" 2>&1; then
  echo "steer: fetch_mujoco: pip could not download mujoco-core==$version:" >&2
  tail -n 3 "$tmp/pip.log" >&2
  exit 1
fi
wheel=$(ls "$tmp"/wheel/mujoco_core-"$version"-*.whl)
"$py" - "$wheel" "$tmp/unpacked" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    z.extractall(sys.argv[2], [n for n in z.namelist()
                               if n.startswith("mujoco/include/") or n.startswith("mujoco/libmujoco.so")])
EOF
mkdir -p "$tmp/out/lib"
mv "$tmp/unpacked/mujoco/include" "$tmp/out/include"
mv "$tmp/unpacked/mujoco/$lib" "$tmp/out/lib/$lib"
ln -s "$lib" "$tmp/out/lib/libmujoco.so"
(cd "$tmp/wheel" && sha256sum ./*.whl) >"$tmp/out/WHEEL.sha256"
mkdir -p "$(dirname "$dest")"
rm -rf "$dest"
mv "$tmp/out" "$dest"
echo "steer: fetched MuJoCo $version (PyPI mujoco-core) into $dest" >&2
echo "$dest"
