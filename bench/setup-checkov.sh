#!/usr/bin/env bash
# Install checkov into bench/work/checkov-venv (its own virtualenv, apart from
# the project's), for the comparison column of bench/run.py. Optional.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/work/checkov-venv"
python="${PYTHON:-python3}"
mkdir -p "$here/work"
if [ ! -x "$venv/bin/checkov" ]; then
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "checkov${CHECKOV_VERSION:+==$CHECKOV_VERSION}"
fi
"$venv/bin/checkov" --version
