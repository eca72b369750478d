#!/usr/bin/env bash
# The GPU check, in one call on a GPU machine with torch and transformers but no network:
# install the carried wheels the machine lacks, then run recipes/gpu_check.py (the GRPO, DPO and
# SFT recipes' two-step paths on the GPU in bf16 with gradient checkpointing, the held-out
# sampler before and after, the watch callback) and write its table under $OUT.
#
#   bash scripts/gpu-check.sh                       # OUT defaults to ./gpu-check-out
#   GPU_WHEELS=DIR OUT=DIR bash scripts/gpu-check.sh
#
# The wheel folder comes from scripts/gpu-wheels.sh (default .gpu-wheels); without one, nothing
# is installed and the packages already here are used (the test suite runs it so, on the CPU).
# Extra arguments go to recipes/gpu_check.py (e.g. --cpu). Exit status: gpu_check.py's.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
OUT=${OUT:-gpu-check-out}
WHEELS=${GPU_WHEELS:-.gpu-wheels}
TARGET=${GPU_CHECK_SITE:-/tmp/whileai-gpu-check-site}
mkdir -p "$OUT"
"$PY" scripts/gpu_wheels.py install "$WHEELS" "$TARGET" --log "$OUT/wheels.log"
echo "installing took ${SECONDS} s"
PYTHONPATH="$TARGET:$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONNOUSERSITE=1 \
  "$PY" recipes/gpu_check.py --out "$OUT" --wheels-log "$OUT/wheels.log" "$@"
