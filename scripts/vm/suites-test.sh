#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# Proves the suite manifest's net (scripts/vm/suites.sh, its use in
# scripts/check.sh) catches what it is for, natively and in a second: a
# payload missing a listed suite, a built suite the manifest does not list,
# a misspelt selection, a suite that never started, a misspelt kernel in
# the manifest; and that check.sh rejects a misspelt KCSAN_SUITES or
# SUITES entry.  Each case also runs the checker where it must pass, so
# that a checker that always fails cannot pass this test either.  Prints
# kselftest TAP; make check runs it as a native check.

set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
suites_sh=$top/scripts/vm/suites.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=../lib/tap.sh
. "$top/scripts/lib/tap.sh"
# tap_check NAME CHECK...: a failure shows what the checker said.
tap_detail="$tmp/out $tmp/err"
# The checks: each runs CMD... with its stdout in $tmp/out (joined with
# commas for comparison) and its stderr in $tmp/err.
run() { "$@" >"$tmp/out" 2>"$tmp/err"; }
out_is() { [ "$(paste -sd, "$tmp/out")" = "$1" ]; }
# passes CMD...
passes() { run "$@"; }
# prints WANT CMD...: CMD succeeds and prints exactly WANT.
prints() { local want=$1; shift; run "$@" && out_is "$want"; }
# fails_printing WANT CMD...: CMD fails and prints exactly WANT.
fails_printing() { local want=$1; shift; ! run "$@" && out_is "$want"; }
# fails_naming WORD CMD...: CMD fails and its stderr names WORD.
fails_naming() { local word=$1; shift; ! run "$@" && grep -qF -- "$word" "$tmp/err"; }

# A small manifest and a payload that matches it.
manifest=$tmp/suites.manifest
cat >"$manifest" <<'EOF'
# a comment
matrix: stock-6.1 kcsan-6.1

rig_test		* !kcsan-6.1	# trailing comment
qtimer_race_test	*
hardening_race		kcsan-6.1
EOF
payload=$tmp/payload
mkdir -p "$payload/selftests"
for s in rig_test qtimer_race_test hardening_race; do
	printf '#!/bin/sh\n' >"$payload/selftests/$s"
	chmod +x "$payload/selftests/$s"
done
m=(-m "$manifest")

tap_plan 14

tap_check 'list kcsan-6.1 applies "*", "!name" and a named kernel' \
	prints qtimer_race_test,hardening_race "$suites_sh" "${m[@]}" list kcsan-6.1

tap_check "check-payload passes on a payload that matches the manifest" \
	passes "$suites_sh" "${m[@]}" check-payload "$payload"

mv "$payload/selftests/qtimer_race_test" "$tmp/"
tap_check "check-payload fails on a payload missing a listed suite, and names it" \
	fails_naming qtimer_race_test "$suites_sh" "${m[@]}" check-payload "$payload"
tap_check "unbuilt names exactly the missing suite" \
	fails_printing qtimer_race_test "$suites_sh" "${m[@]}" unbuilt "$payload" rig_test qtimer_race_test
mv "$tmp/qtimer_race_test" "$payload/selftests/"

printf '#!/bin/sh\n' >"$payload/selftests/hardening_latency"
chmod +x "$payload/selftests/hardening_latency"
tap_check "check-payload fails on a built suite the manifest does not list, and names it" \
	fails_naming hardening_latency "$suites_sh" "${m[@]}" check-payload "$payload"

tap_check "select prints the suites valid globs name, in manifest order" \
	prints rig_test,hardening_race "$suites_sh" "${m[@]}" select 'hardening_r*, rig_test'
tap_check "select fails on a misspelt entry among valid ones, and names it" \
	fails_naming hardening_rcae "$suites_sh" "${m[@]}" select 'rig_test,hardening_rcae'
tap_check "select accepts a suite only the payload has, and expects nothing of it" \
	prints '' "$suites_sh" "${m[@]}" select hardening_latency "$payload"
rm "$payload/selftests/hardening_latency"

# The runner's header starts a suite; a suite printing one does not.
printf '%s\n' 'qtimer-vm: boot' 'qtimer-vm: start run_kselftest.sh' '| TAP version 13' \
	'| # selftests: qtimer: rig_test' '| # # selftests: qtimer: qtimer_race_test' \
	'| ok 1 selftests: qtimer: rig_test' 'qtimer-vm: end run_kselftest.sh exit=0' \
	>"$tmp/result.log"
tap_check "unrun names exactly the suite the runner never started" \
	fails_printing qtimer_race_test \
	"$suites_sh" "${m[@]}" unrun "$tmp/result.log" rig_test qtimer_race_test

sed 's/!kcsan-6.1/!kcsan-61/' "$manifest" >"$tmp/typo.manifest"
tap_check "a kernel the matrix does not name fails the manifest" \
	fails_naming '!kcsan-61' "$suites_sh" -m "$tmp/typo.manifest" all
printf 'rig_test *\n' >>"$manifest"
tap_check "a suite listed twice fails the manifest" \
	fails_naming 'listed twice' "$suites_sh" "${m[@]}" all

# check.sh's own gate, against the real manifest.  --check-config stops
# after the gate; the timeout bounds a check.sh that would not.
KCSAN_SUITES=qtimer_cancel_test SUITES='' \
	tap_check "check.sh --check-config passes a valid KCSAN_SUITES" \
	passes timeout 60 "$top/scripts/check.sh" --check-config
KCSAN_SUITES=hardening_rcae,qtimer_cancel_test SUITES='' \
	tap_check "check.sh rejects a misspelt KCSAN_SUITES entry" \
	fails_naming hardening_rcae timeout 60 "$top/scripts/check.sh" --check-config
SUITES='qtimer_*,rig_tset' KCSAN_SUITES='' \
	tap_check "check.sh rejects a misspelt SUITES entry" \
	fails_naming rig_tset timeout 60 "$top/scripts/check.sh" --check-config

tap_totals && [ "$tap_nr" = 14 ]
