#!/usr/bin/env bash
# The GPU check, in one call on a GPU machine with torch and transformers but no network:
# install the carried wheels the machine lacks, then run recipes/gpu_check.py (the GRPO, DPO and
# SFT recipes' two-step paths on the GPU in bf16 with gradient checkpointing, the held-out
# sampler before and after, the watch callback).
#
#   bash scripts/gpu-check.sh                       # OUT defaults to ./gpu-check-out
#   GPU_WHEELS=DIR OUT=DIR bash scripts/gpu-check.sh
#
# $OUT receives four files, flat, because the device tool returns at most 8 files from it, two
# folders down at most: gpu-check.md (the table, also on stdout), gpu-check.json (every row's
# result and seconds, each recipe's results), gpu-check-watch.png (the GRPO watch curve) and
# gpu-check.log (the install's log and everything printed). The recipes' own outputs and the
# installed wheels go to a scratch folder (GPU_CHECK_WORK; default a fresh temporary folder,
# removed at the end). The 8-minute budget counts from this script's start: installing counts.
#
# The wheel folder comes from scripts/gpu-wheels.sh (default .gpu-wheels); without one, nothing
# is installed and the packages already here are used. Extra arguments go to
# recipes/gpu_check.py (e.g. --cpu). Exit status: gpu_check.py's (the install's when it failed
# to run at all).
set -uo pipefail
cd "$(dirname "$0")/.."
STARTED=$(date +%s.%N)
PY=${PYTHON:-python3}
OUT=${OUT:-gpu-check-out}
WHEELS=${GPU_WHEELS:-.gpu-wheels}
if [ -n "${GPU_CHECK_WORK:-}" ]; then
  WORK=$GPU_CHECK_WORK
  mkdir -p "$WORK"
else
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/whileai-gpu-check.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
fi
TARGET=${GPU_CHECK_SITE:-$WORK/site}
mkdir -p "$OUT"
{
  "$PY" scripts/gpu_wheels.py install "$WHEELS" "$TARGET" --log "$WORK/wheels.log"
  PYTHONPATH="$TARGET:$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONNOUSERSITE=1 PYTHONUNBUFFERED=1 \
    "$PY" recipes/gpu_check.py --out "$OUT" --work "$WORK/recipes" \
    --wheels-log "$WORK/wheels.log" --started-at "$STARTED" "$@"
} 2>&1 | tee "$OUT/gpu-check.log"
