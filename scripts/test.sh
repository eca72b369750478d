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
# The MCP Inspector tests need the Inspector and Node >= 22.19: with npm on the machine they are
# installed into ./.tools (npm's node@22 package is Node 22 itself); without npm those tests skip
# and say how.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
TORCH=torch==2.13.0   # keep in step with the `train` extra in pyproject.toml
CPU_INDEX=https://download.pytorch.org/whl/cpu
[ -x .venv/bin/python ] || "$PY" -m venv .venv
PIP=(.venv/bin/python -m pip --disable-pip-version-check)
INSPECTOR=.tools/node_modules/.bin/mcp-inspector

if ! .venv/bin/python -c "import torch, trl, pytest, uv, xdist" >/dev/null 2>&1 \
    || { command -v npm >/dev/null 2>&1 && [ ! -x "$INSPECTOR" ]; }; then
  cat >&2 <<'EOF'
scripts/test.sh: installing what the tests need (once; a later run only checks it):
  - into .venv: torch 2.13.0 (the CPU build without an NVIDIA GPU), the test, train and launch
    extras (transformers, trl, peft, datasets, modal, inspect_ai, matplotlib, uv, pipx...),
    leaving a venv of about 2 GB
  - into .tools, with npm: Node 22 and the MCP Inspector (about 300 MB)
EOF
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
if command -v npm >/dev/null 2>&1 && [ ! -x "$INSPECTOR" ]; then
  npm install --prefix .tools --no-audit --no-fund --loglevel=error \
    node@22 @modelcontextprotocol/inspector@2 >/dev/null \
    || echo "scripts/test.sh: npm could not install the MCP Inspector into .tools; its tests will skip" >&2
fi
# One pytest worker per core, at most 4 (pytest-xdist; WHILEAI_TEST_WORKERS=1 runs serially). On
# this project's 2-core machine two workers took the server tests from 127 s to 76 s.
WORKERS=${WHILEAI_TEST_WORKERS:-$(.venv/bin/python -c "import os; print(min(4, len(
    os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count() or 1))")}
.venv/bin/python -c "import xdist" >/dev/null 2>&1 || WORKERS=1
PARALLEL=()
# worksteal: a worker left idle takes tests queued on the other (the slow ones run minutes apart)
[ "$WORKERS" -gt 1 ] && PARALLEL=(-n "$WORKERS" --dist worksteal)
echo "scripts/test.sh: running the suite on $WORKERS worker(s) (pytest prints its progress;" \
  "docs/development.md has the times measured)" >&2
set +e
# --slow: the tests marked slow too (a plain pytest skips them; tests/conftest.py)
.venv/bin/python -m pytest --slow ${PARALLEL[@]+"${PARALLEL[@]}"} "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: treating as a failure" >&2
  exit 1
fi
exit "$rc"
