#!/usr/bin/env bash
# Install everything the tests need into ./.venv (idempotent), then run the whole suite.
# pytest's exit code 5 ("no tests collected") is a failure here: a suite that ran nothing
# proves nothing.
#
# torch (the `train` extra) is the big download. PyPI's Linux wheel is the CUDA build, about
# 3 GB with its nvidia-* packages; the CPU build is a 192 MB download (0.75 GB installed) and is
# all the tests need. So,
# before the rest, when torch is not installed yet:
#   - TORCH_INDEX_URL set: torch comes from that index (e.g. https://download.pytorch.org/whl/cpu);
#   - a CPU build pip can install without a network (a local wheel in pip's find-links): that one;
#   - no NVIDIA GPU (no nvidia-smi): the CPU build from https://download.pytorch.org/whl/cpu;
#   - otherwise PyPI's default build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
TORCH=torch==2.13.0   # keep in step with the `train` extra in pyproject.toml
CPU_INDEX=https://download.pytorch.org/whl/cpu
[ -x .venv/bin/python ] || "$PY" -m venv .venv
PIP=(.venv/bin/python -m pip --disable-pip-version-check)
say() { echo "scripts/test.sh: $*" >&2; }
if ! .venv/bin/python -c "import torch, trl, modal, inspect_ai, xdist" >/dev/null 2>&1; then
  say "installing into .venv what the tests need: the core, and the test, train and launch" \
      "extras (torch's CPU build without an NVIDIA GPU, transformers, TRL, PEFT, datasets," \
      "modal, inspect_ai, pytest and pytest-xdist); the first time this downloads about 1 GB" \
      "and usually takes 3-10 minutes"
else
  say "checking that .venv has what the tests need (everything is installed: usually about" \
      "30 s)"
fi

local_cpu_torch() {  # is a CPU build of $TORCH installable with no network?
  local report
  report=$(mktemp)
  "${PIP[@]}" install -q --dry-run --no-index --no-deps --ignore-installed --report "$report" \
    "$TORCH" >/dev/null 2>&1 || { rm -f "$report"; return 1; }
  .venv/bin/python - "$report" <<'EOF'
import json, sys
versions = [i["metadata"]["version"] for i in json.load(open(sys.argv[1]))["install"]]
sys.exit(0 if versions and versions[0].endswith("+cpu") else 1)
EOF
  local rc=$?
  rm -f "$report"
  return $rc
}

if ! .venv/bin/python -c "import torch" >/dev/null 2>&1; then
  if [ -n "${TORCH_INDEX_URL:-}" ]; then
    "${PIP[@]}" install -q --index-url "$TORCH_INDEX_URL" "$TORCH"
  elif local_cpu_torch; then
    "${PIP[@]}" install -q --no-index --no-deps "$TORCH"
  elif ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "no NVIDIA GPU: installing the CPU build of torch from $CPU_INDEX" >&2
    "${PIP[@]}" install -q --index-url "$CPU_INDEX" "$TORCH"
  fi
fi
"${PIP[@]}" install -q -e '.[test,train,launch]'
set +e
.venv/bin/python -m pytest "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: treating as a failure" >&2
  exit 1
fi
exit "$rc"
