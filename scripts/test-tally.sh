# Sourced by the test runners that print `test NAME ... ok|FAILED` and close with one
# `N passed, N failed` line (ffi/run-c-tests.sh, firmware-demo-c/run-tests.sh):
#   report NAME STATUS        one check, passed when STATUS is 0
#   tally LOG STATUS NAME     adds the closing counts a test binary printed to LOG; a
#                             binary that failed (STATUS ≠ 0) without reporting a failure —
#                             stopped by a sanitizer, a fault or a time-out — counts as the
#                             failed check NAME
#   finish                    prints the closing line; its status is 1 when anything failed
passed=0
failed=0

report() {
    if [[ "$2" == 0 ]]; then
        echo "test $1 ... ok"
        passed=$((passed + 1))
    else
        echo "test $1 ... FAILED"
        failed=$((failed + 1))
    fi
}

tally() {
    local counted_passed counted_failed
    read -r counted_passed counted_failed < <(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$1")
    passed=$((passed + ${counted_passed:-0}))
    failed=$((failed + ${counted_failed:-0}))
    if [[ "$2" != 0 && "${counted_failed:-0}" == 0 ]]; then
        report "$3" 1
    fi
}

finish() {
    echo "$passed passed, $failed failed"
    (( failed == 0 ))
}
