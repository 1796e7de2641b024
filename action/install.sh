#!/usr/bin/env bash
# The Action's install step: a virtual environment of its own in the runner's temp
# directory, with kubelint-ml from the action's checkout (or the version asked for),
# so the Python of the caller's later steps is left as it was.
# Inputs (environment): KUBELINT_ML_PYTHON, KUBELINT_ML_ACTION_PATH, KUBELINT_ML_VERSION,
# RUNNER_TEMP, GITHUB_OUTPUT.
set -euo pipefail

python="${KUBELINT_ML_PYTHON:-python3}"
venv="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/kubelint-ml-venv"
if [ -n "${KUBELINT_ML_VERSION:-}" ] && [[ ! "$KUBELINT_ML_VERSION" =~ ^[A-Za-z0-9.+!_-]+$ ]]; then
  echo "::error title=kubelint-ml::invalid version input" >&2
  exit 2
fi
"$python" -m venv "$venv"
if [ -x "$venv/bin/python" ]; then
  bin="$venv/bin"
else
  bin="$venv/Scripts"  # Windows runners
fi
pip=("$bin/python" -m pip install --disable-pip-version-check --quiet)
if [ -n "${KUBELINT_ML_VERSION:-}" ]; then
  "${pip[@]}" "kubelint-ml==$KUBELINT_ML_VERSION"
else
  # The action's own checkout: the versions its CI tested (constraints.txt, the lock).
  "${pip[@]}" -c "$KUBELINT_ML_ACTION_PATH/constraints.txt" "$KUBELINT_ML_ACTION_PATH"
fi
{
  echo "bin=$bin/kubelint-ml"
  echo "python=$bin/python"
} >> "${GITHUB_OUTPUT:-/dev/null}"
