#!/usr/bin/env bash
# The fuzz campaign (docs/RELIABILITY.md): builds every cargo-fuzz target (nightly,
# address sanitizer) and runs each for FUZZ_SECS seconds (default 300) on its committed
# corpus (fuzz/corpus/<target>), one after the other, then prints one line per target.
# A crash stops that target with its input in fuzz/artifacts/<target>/ and exit 1.
# Not part of the test command: it needs the nightly toolchain and cargo-fuzz
# (`cargo install cargo-fuzz --locked`) and takes FUZZ_SECS × 10.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs="${FUZZ_SECS:-300}"
targets="${*:-$(cargo +nightly fuzz list)}"
cargo +nightly fuzz build -O
bin=target/x86_64-unknown-linux-gnu/release
failed=0
summary=()
for t in $targets; do
  mkdir -p "corpus/$t" "artifacts/$t"
  log="$(mktemp)"
  if "$bin/$t" "corpus/$t" -artifact_prefix="artifacts/$t/" -max_total_time="$secs" \
      -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 >"$log" 2>&1; then
    verdict="0 crashes"
  else
    verdict="CRASH (see artifacts/$t/)"
    failed=1
  fi
  runs="$(grep -o 'number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
  cov="$(grep -E '^#[0-9]+' "$log" | tail -1 | grep -o 'cov: [0-9]*' || true)"
  summary+=("$(printf '%-18s %4ss %12s runs  %-10s corpus %5s files  %s' "$t" "$secs" "$runs" "$cov" "$(ls "corpus/$t" | wc -l)" "$verdict")")
  rm -f "$log"
done
printf '%s\n' "${summary[@]}"
exit "$failed"
