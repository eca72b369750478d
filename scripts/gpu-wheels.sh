#!/usr/bin/env bash
# Collect the GPU check's wheels (scripts/gpu-wheels.txt) for the GPU machine's Python and pack
# them into one folder under 64 MiB, the folder the device tool carries:
#
#   bash scripts/gpu-wheels.sh [PYTHON_VERSION] [FOLDER]     # default 3.12 .gpu-wheels
#
# Needs PyPI (this machine's pip); the GPU machine needs nothing. Compiled wheels (pyarrow,
# pandas, scipy, pydantic-core, xxhash...) exist per Python version: pack for the Python the GPU
# machine runs. scripts/gpu-check.sh says which one that is when they differ.
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
"$PY" scripts/gpu_wheels.py pack "$STAGING" "$FOLDER" --python "$PYVER"
