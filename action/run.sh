#!/usr/bin/env bash
# The Action's check step. Every input arrives as an environment variable, never as
# text spliced into a script, so no input value can run shell code.
# Inputs (environment): KUBELINT_ML_BIN, KUBELINT_ML_PYTHON, KUBELINT_ML_PATHS, KUBELINT_ML_CONFIG,
# KUBELINT_ML_FAIL_LEVEL, KUBELINT_ML_FORMAT, KUBELINT_ML_SARIF_FILE, KUBELINT_ML_BASELINE,
# KUBELINT_ML_SCHEMA, KUBELINT_ML_ARGS, KUBELINT_ML_WORKING_DIRECTORY, RUNNER_TEMP, GITHUB_OUTPUT.
# Outputs: errors, warnings, info, findings (counts), sarif-file (when written), exit-code.
set -euo pipefail

bin="${KUBELINT_ML_BIN:-kubelint-ml}"
python="${KUBELINT_ML_PYTHON:-python3}"
out="${GITHUB_OUTPUT:-/dev/null}"
workdir="${KUBELINT_ML_WORKING_DIRECTORY:-.}"
if [[ "$workdir" == *$'\n'* ]]; then
  echo "::error title=kubelint-ml::invalid working-directory input" >&2
  exit 2
fi
cd -- "${workdir:-.}"

json="$(mktemp "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/kubelint-ml-XXXXXX")"
trap 'rm -f -- "$json"' EXIT
args=(check --fail-level "${KUBELINT_ML_FAIL_LEVEL:-error}" --format "${KUBELINT_ML_FORMAT:-github}" --output -
      --format json --output "$json")
if [ -n "${KUBELINT_ML_CONFIG:-}" ]; then
  args+=(--config "$KUBELINT_ML_CONFIG")
fi
if [ -n "${KUBELINT_ML_BASELINE:-}" ]; then
  args+=(--baseline "$KUBELINT_ML_BASELINE")
fi
case "${KUBELINT_ML_SCHEMA:-}" in
  true|True|TRUE|yes|1) args+=(--schema) ;;
esac
sarif="${KUBELINT_ML_SARIF_FILE:-}"
if [ -n "$sarif" ]; then
  rm -f -- "$sarif"  # a stale report from an earlier step is never uploaded as this run's
  args+=(--format sarif --output "$sarif")
fi
# Split on whitespace without glob expansion: globs reach kubelint-ml as written.
extra=()
read -r -d '' -a extra <<< "${KUBELINT_ML_ARGS:-}" || true
paths=()
read -r -d '' -a paths <<< "${KUBELINT_ML_PATHS:-}" || true
if [ "${#paths[@]}" -eq 0 ]; then
  paths=(.)
fi

set +e
"$bin" "${args[@]}" "${extra[@]}" -- "${paths[@]}"
code=$?
set -e

counts="$("$python" - "$json" <<'PY' 2>/dev/null || true
import json, sys
try:
    with open(sys.argv[1], encoding="utf-8") as fh:
        summary = json.load(fh)["summary"]
except (OSError, ValueError, KeyError):
    sys.exit(0)
by = summary.get("by_severity", {})
print(f"errors={by.get('error', 0)}")
print(f"warnings={by.get('warning', 0)}")
print(f"info={by.get('info', 0)}")
print(f"findings={summary.get('findings', 0)}")
PY
)"
{
  if [ -n "$counts" ]; then
    printf '%s\n' "$counts"
  fi
  if [ -n "$sarif" ] && [ -f "$sarif" ] && [[ "$sarif" != *$'\n'* ]]; then
    case "$sarif" in
      /*) echo "sarif-file=$sarif" ;;
      *) if [ "$workdir" = "." ]; then echo "sarif-file=$sarif"; else echo "sarif-file=$workdir/$sarif"; fi ;;
    esac
  fi
  echo "exit-code=$code"
} >> "$out"
exit "$code"
