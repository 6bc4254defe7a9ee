#!/usr/bin/env bash
# Small ThoughtSculpt comparison on the bench model (Qwen2.5-Coder-1.5B Q4_K_M).
# Usage: benchmarks/sculpt_bench.sh TASK DATA N "STRATEGY[:--set k=v ...]" ...
# Each strategy runs under the shared bench lock with a 590 s cap; the eval
# runner resumes, so a rerun finishes what a capped run left.
set -u
TASK=$1; DATA=$2; N=$3; shift 3
MODEL=$(/work/shared/tools/get-bench-model)
OUT=${OUT:-/tmp/sculpt-bench}
CACHE=${CACHE:-/tmp/sculpt-cache.sqlite}
EXTRA=${EXTRA:-}
for spec in "$@"; do
  strat=${spec%%:*}; sets=""
  [[ "$spec" == *:* ]] && sets=${spec#*:}
  echo "== $TASK $strat $sets $EXTRA"
  flock /tmp/tl-bench.lock timeout 590 env PYTHONPATH=src python -m thoughtloom eval \
    --strategy "$strat" --task "$TASK" --data "$DATA" --limit "$N" --model "$MODEL" \
    --cache "$CACHE" --out "$OUT/${TASK}_${strat}" $sets $EXTRA
done
