#!/usr/bin/env bash
# Install everything the tests need into ./.venv (idempotent), then run the whole suite.
# pytest's exit code 5 ("no tests collected") is a failure here: a suite that ran nothing
# proves nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# torch comes from the CPU build already on disk when pip can see it (uv would fetch CUDA).
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test,train,launch]'
set +e
.venv/bin/python -m pytest "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: treating as a failure" >&2
  exit 1
fi
exit "$rc"
