#!/usr/bin/env bash
# Several small evals inside ONE hold of the bench lock (each capped at CAP
# seconds; the runner resumes, so a capped eval keeps its finished problems).
# Usage: CAP=140 benchmarks/sculpt_slot.sh TASK DATA N "STRATEGY[:--set k=v ...]" ...
set -u
TASK=$1; DATA=$2; N=$3; shift 3
MODEL=$(/work/shared/tools/get-bench-model)
OUT=${OUT:-/tmp/sculpt-bench}; CACHE=${CACHE:-/tmp/sculpt-cache.sqlite}; EXTRA=${EXTRA:-}; CAP=${CAP:-140}
for spec in "$@"; do
  strat=${spec%%:*}; sets=""
  [[ "$spec" == *:* ]] && sets=${spec#*:}
  echo "== $TASK $strat $sets $EXTRA (cap ${CAP}s)"
  timeout "$CAP" env PYTHONPATH=src python -m thoughtloom eval --strategy "$strat" --task "$TASK" \
    --data "$DATA" --limit "$N" --model "$MODEL" --cache "$CACHE" --out "$OUT/${TASK}_${strat}" $sets $EXTRA
done
