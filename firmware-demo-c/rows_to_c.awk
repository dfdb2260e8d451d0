# NAME.csv (a header, then rows with the label last) and NAME.expected (per row, the f32
# bits of the host's prediction in hex) as a C header: NAME_rows[] holds each feature as the
# decimal text of the file, a double literal, so the device converts it to float exactly as
# the host's reader does (parse as f64, then round to f32); NAME_expected[] the bits.
# Usage: awk -F, -v name=NAME -f rows_to_c.awk NAME.csv NAME.expected
FNR == NR {
    if (FNR > 1 && NF > 1) {
        for (i = 1; i < NF; i++) rows = rows " " $i ","
        rows = rows "\n"
        n++
    }
    next
}
NF > 0 {
    split($0, fields, " ")
    expected = expected " " fields[1] ",\n"
}
END {
    upper = toupper(name)
    printf "/* Generated from %s.csv and %s.expected by rows_to_c.awk. */\n", name, name
    printf "#define %s_ROWS %d\n", upper, n
    printf "static const double %s_rows[] = {\n%s};\n", name, rows
    printf "static const uint32_t %s_expected[] = {\n%s};\n", name, expected
}
