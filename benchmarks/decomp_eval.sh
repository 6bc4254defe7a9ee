#!/usr/bin/env bash
# Regenerates the Decomposed Prompting results tables (README "## Decomposed Prompting").
#   benchmarks/decomp_eval.sh MODEL TAG N_SYNTH N_QA [FAMILY...]
# MODEL: embedded | path to a .gguf; TAG: folder under runs/decomp/; N_SYNTH: questions per
# letter_cat / list_reversal / math file; N_QA: questions for CommaQA and open-domain QA.
# Families: check letter rev math commaqa odqa hotpotqa 2wiki musique ksel (default: all but the
# per-dataset ones and ksel). ksel picks K (passages per retrieval) on N_QA held-aside questions
# (--offset KSEL_OFFSET, default 900, past every evaluated slice) of KSEL_TASKS (default hotpotqa):
# Decomp-Ctxt K in {2,4,6}, NoDecomp-Ctxt K in {2,4,6,8,10}. Call it under the bench lock (flock /tmp/tl-bench.lock); each eval has a
# 570 s timeout (less if DEADLINE, epoch seconds, comes first), reruns resume, and all runs share one completion cache. Open-domain QA uses
# INDEX_ROOT/<task> (built with `thoughtloom index build`) when INDEX_ROOT is set.
set -u
MODEL=$1; TAG=$2; NS=$3; NQ=$4; shift 4
FAMILIES=${*:-check letter rev math commaqa odqa}
D=${THOUGHTLOOM_DATA:-../shared/data}
OUT=runs/decomp/$TAG
CACHE=${DECOMP_CACHE:-/tmp/decomp-cache.sqlite}
ev() {  # ev NAME STRATEGY TASK DATA N [--set ...]
  local name=$1 strat=$2 task=$3 data=$4 n=$5; shift 5
  local left=570  # DEADLINE (epoch seconds) bounds a whole bundle run under one lock
  [ -n "${DEADLINE:-}" ] && left=$(( DEADLINE - $(date +%s) ))
  [ "$left" -gt 570 ] && left=570
  if [ "$left" -lt 20 ]; then echo "skip $name (bundle deadline)"; return; fi
  timeout "$left" env PYTHONPATH=src python -m thoughtloom eval \
    --strategy "$strat" --task "$task" --data "$data" --limit "$n" --model "$MODEL" \
    --cache "$CACHE" --out "$OUT/$name" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?  # 124: cut by the timeout (a rerun resumes)
  echo "$(date -u +%H:%M:%S) $name rc=$rc"
}
mkdir -p "$OUT"
for fam in $FAMILIES; do case $fam in
check)  # controller check: reference program + symbolic handlers, every file (no LLM calls)
  for f in "$D"/decomp_letter_cat/n*.json; do b=$(basename "$f" .json)
    ev "check_letter_$b" decomp letter_cat "$f" 100 --set decomposer=reference --set handlers=symbolic; done
  for v in reverse_halving reverse_tail; do for f in "$D"/decomp_list_reversal/test_*.json; do b=$(basename "$f" .json)
    ev "check_${v}_$b" decomp list_reversal "$f" 90 --set program=$v --set decomposer=reference --set handlers=symbolic; done; done
 ;;
letter)
  for s in decomp decomp-cot decomp-cot-rollout decomp-least-to-most; do
    ev "letter_n3_semic_$s" $s letter_cat "$D/decomp_letter_cat/n3_eg100_pos2_semic.json" "$NS"; done ;;
structured)  # decomposer steps under a JSON schema (grammar-constrained decoding)
  ev "letter_n3_semic_decomp-structured" decomp letter_cat "$D/decomp_letter_cat/n3_eg100_pos2_semic.json" "$NS" --set structured=true
  ev "commaqa_iid_decomp-fine-structured" decomp commaqa "$D/commaqa_e/iid_test_eg100.json" "$NQ" --set structured=true ;;
letter5)
  for s in decomp decomp-cot; do
    ev "letter_n5_space_$s" $s letter_cat "$D/decomp_letter_cat/n5_eg100_pos2_space.json" "$NS"; done ;;
rev)
  for L in ${REV_LENGTHS:-4 8}; do
    ev "rev_len${L}_decomp" decomp list_reversal "$D/decomp_list_reversal/test_${L}_normal_words.json" "$NS"
    ev "rev_len${L}_decomp-tail" decomp list_reversal "$D/decomp_list_reversal/test_${L}_normal_words.json" "$NS" --set program=reverse_tail
    ev "rev_len${L}_decomp-cot" decomp-cot list_reversal "$D/decomp_list_reversal/test_${L}_normal_words.json" "$NS"; done ;;
math)
  for s in decomp decomp-cot; do
    ev "gsm8k_$s" $s gsm8k "$D/gsm8k/test.jsonl" "$NS"
    ev "multiarith_$s" $s multiarith "$D/multiarith/MultiArith.json" "$NS"; done ;;
commaqa)
  ev commaqa_iid_decomp-fine decomp commaqa "$D/commaqa_e/iid_test_eg100.json" "$NQ"
  ev commaqa_iid_decomp-cot decomp-cot commaqa "$D/commaqa_e/iid_test_eg100.json" "$NQ"
  ev commaqa_iid_decomp-coarse decomp commaqa "$D/commaqa_e/iid_test_eg100.json" "$NQ" --set program=commaqa_coarse ;;
compgen)
  ev commaqa_compgen_decomp-fine decomp commaqa "$D/commaqa_e/compgen_test_eg300.json" "$NQ"
  ev commaqa_compgen_decomp-cot decomp-cot commaqa "$D/commaqa_e/compgen_test_eg300.json" "$NQ" ;;
odqa|hotpotqa|2wiki|musique)
  for t in "hotpotqa hotpotqa/hotpot_dev_distractor_subset.jsonl" "2wiki 2wikimultihopqa/2wiki_dev_subset.jsonl" \
           "musique musique/musique_ans_dev_subset.jsonl"; do set -- $t
    [ "$fam" = odqa ] || [ "$fam" = "$1" ] || continue
    idx=(); [ -n "${INDEX_ROOT:-}" ] && idx=(--index "$INDEX_ROOT/$1")  # else: the task's pooled BM25
    for s in decomp decomp-nodecomp-ctxt decomp-no-ctxt; do ev "$1_$s" $s "$1" "$D/$2" "$NQ" "${idx[@]}"; done; done ;;
ksel)
  for t in "hotpotqa hotpotqa/hotpot_dev_distractor_subset.jsonl" "2wiki 2wikimultihopqa/2wiki_dev_subset.jsonl" \
           "musique musique/musique_ans_dev_subset.jsonl"; do set -- $t
    case " ${KSEL_TASKS:-hotpotqa} " in *" $1 "*) ;; *) continue ;; esac
    idx=(); [ -n "${INDEX_ROOT:-}" ] && idx=(--index "$INDEX_ROOT/$1")
    for k in 2 4 6 8 10; do
      ev "ksel_$1_decomp-nodecomp-ctxt_k$k" decomp-nodecomp-ctxt "$1" "$D/$2" "$NQ" --offset "${KSEL_OFFSET:-900}" --set k=$k "${idx[@]}"; done
    for k in 2 4 6; do
      ev "ksel_$1_decomp_k$k" decomp "$1" "$D/$2" "$NQ" --offset "${KSEL_OFFSET:-900}" --set k=$k "${idx[@]}"; done; done ;;
esac; done
python benchmarks/decomp_table.py "$OUT"
