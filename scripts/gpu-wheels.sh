#!/usr/bin/env bash
# Collect the GPU check's wheels (scripts/gpu-wheels.txt: only what the GPU machine lacks) for
# that machine's Python and pack them into one folder, the folder the device tool carries:
#
#   bash scripts/gpu-wheels.sh [PYTHON_VERSION] [FOLDER]     # default 3.12 .gpu-wheels
#
# Needs PyPI (this machine's pip); the GPU machine needs nothing. Compiled wheels (pydantic-core,
# msgspec) exist per Python version: pack for the Python the GPU machine runs (3.12, as
# scripts/gpu-machine-packages.txt says); scripts/gpu-check.sh says which one it is when they
# differ. Packed for 3.12, the manifest is also written to scripts/gpu-wheels.lock.json (commit
# it: the tests check the carried list against it). The last line is the whole carry (tree +
# folder) against the 64 MiB one call takes; exit status 1 with under 16 MiB to spare.
set -euo pipefail
cd "$(dirname "$0")/.."
PYVER=${1:-3.12}
FOLDER=${2:-.gpu-wheels}
PY=${PYTHON:-.venv/bin/python}
STAGING=$(mktemp -d)
trap 'rm -rf "$STAGING"' EXIT
"$PY" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  --python-version "$PYVER" --implementation cp --platform manylinux_2_28_x86_64 \
  --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --dest "$STAGING" -r scripts/gpu-wheels.txt
rm -rf "$FOLDER"
LOCK=()
[ "$PYVER" = 3.12 ] && LOCK=(--lock scripts/gpu-wheels.lock.json)
"$PY" scripts/gpu_wheels.py pack "$STAGING" "$FOLDER" --python "$PYVER" ${LOCK[@]+"${LOCK[@]}"}
