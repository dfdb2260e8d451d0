#!/usr/bin/env bash
# Regenerates docs/report.png, the report picture in README.md: `kestrel demo --report`
# rendered by headless Chromium, the way the report tests render a page (stream/tests/report.rs).
# Needs Chromium (Debian: apt-get install chromium). Runs from any directory.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v chromium >/dev/null || { echo "report-picture.sh: chromium not found" >&2; exit 1; }
cargo build --quiet --release -p kestrel-stream
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# Run as a reader would (`kestrel` on the PATH, the report beside it) so the page's header
# shows the command line a newcomer types, not this script's paths.
(cd "$tmp" && PATH="$OLDPWD/target/release:$PATH" kestrel demo --report demo.html >/dev/null)
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$tmp/profile" --hide-scrollbars \
    --window-size=1000,1180 --screenshot="$PWD/docs/report.png" "file://$tmp/demo.html" 2>/dev/null
ls -l docs/report.png
