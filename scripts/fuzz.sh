#!/usr/bin/env bash
# Coverage-guided fuzzing of Tether's network decoders with libFuzzer (bundled with the Swift
# toolchain on Linux). Not part of CI: the tests run the same targets for a bounded number of
# random inputs. Usage: scripts/fuzz.sh [TARGET] [libFuzzer options], e.g.
#   scripts/fuzz.sh gizwits-lan -max_total_time=300
# Crashing inputs land in .build-fuzz/crashes/; replay one with a normal build:
#   swift run tether-fuzz gizwits-lan .build-fuzz/crashes/crash-…
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:-gizwits-lan}"
shift || true
swift build --scratch-path .build-fuzz -c release --product tether-fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -D -Xswiftc TETHER_LIBFUZZER
mkdir -p .build-fuzz/corpus/"$target" .build-fuzz/crashes
TETHER_FUZZ_TARGET="$target" .build-fuzz/release/tether-fuzz \
    -artifact_prefix=.build-fuzz/crashes/ -max_len=4096 "$@" .build-fuzz/corpus/"$target"
