# Sourced by the runners that hold QEMU `-icount` instruction counts to a committed table
# (firmware-demo/run-qemu-tests.sh, firmware-demo-c/run-tests.sh), which define
# `report NAME STATUS` (one test's line; test-tally.sh's, or their own):
#   icount_check BASELINE COUNTS TARGET...
#       COUNTS holds this run's counts, a line `target operation count` each; BASELINE the
#       committed ones in the same form, under `#` comment lines. One test per baseline
#       line, failed when the operation was not counted or its count grew more than 10 %;
#       and one per TARGET, failed when BASELINE lacks an operation COUNTS has for it.
#       With ICOUNT_BASELINE_UPDATE=1 it first rewrites BASELINE's counts from COUNTS,
#       keeping its comment lines (a change on purpose: add its reason to them).
icount_check() {
    local baseline="$1" counts="$2" target name expected got within covered
    shift 2
    if [[ "${ICOUNT_BASELINE_UPDATE:-}" == 1 ]]; then
        { grep '^#' "$baseline"; cat "$counts"; } >"$baseline.new" && mv "$baseline.new" "$baseline"
        echo "rewrote $baseline from this run: add the reason to its header"
    fi
    while read -r target name expected; do
        [[ -z "$target" || "$target" == \#* ]] && continue
        got="$(awk -v t="$target" -v n="$name" '$1 == t && $2 == n { print $3 }' "$counts")"
        within=1
        [[ -n "$got" ]] && (( got * 10 <= expected * 11 )) && within=0
        echo "$target $name: ${got:-not counted} (baseline $expected)"
        report "icount_${name}_within_10_percent_on_$target" "$within"
    done <"$baseline"
    for target in "$@"; do
        covered=0
        while read -r _ name _; do
            grep -q "^$target $name " "$baseline" || { echo "$target $name: not in $baseline"; covered=1; }
        done < <(awk -v t="$target" '$1 == t' "$counts")
        report "icount_baseline_covers_every_operation_on_$target" "$covered"
    done
}
