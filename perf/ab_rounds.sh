# Sourced by perf/ab.sh (two commits) and perf/env_ab.sh (two environments): the rounds, base
# and new alternating within every round and which goes first alternating between rounds, so
# that the machine's drift hits both alike; then perf/ab_compare.py's verdict.
# The sourcing script sets ROOT and OUT and defines `run_side LABEL COLL RANKS ROUND` (LABEL:
# base or new), which runs one sweep through bench_csv.

# One chorus-bench sweep: bench_csv BIN_DIR COLL RANKS FILE.
bench_csv() {
  "$1/chorus-run" -n "$3" --no-tag-output -- "$1/chorus-bench" "$2" ${SIZES:--b 8 -e 256M -f 2} \
    -t "${TIME:-0.2}" --placement "${PLACEMENT:-oop}" -c 0 --no-progress --csv > "$4"
}

ab_rounds() {
  for round in $(seq 1 "${ROUNDS:-5}"); do
    for coll in ${COLLECTIVES:-allreduce allgather reduce_scatter}; do
      for n in ${RANKS:-2 4}; do
        if ((round % 2)); then
          run_side base "$coll" "$n" "$round"
          run_side new "$coll" "$n" "$round"
        else
          run_side new "$coll" "$n" "$round"
          run_side base "$coll" "$n" "$round"
        fi
      done
    done
    echo "# round $round done, load: $(cut -d' ' -f1-3 /proc/loadavg)"
  done
  AB_COLUMN="${PLACEMENT:-oop}_us" python3 "$ROOT/perf/ab_compare.py" "$OUT" | tee -a "$OUT/README.txt"
}
