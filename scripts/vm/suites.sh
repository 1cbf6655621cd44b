#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# Reads selftests/suites.manifest, the suites each test kernel must run, and
# checks selections, payloads and runs against it.  A suite that is not
# built, was renamed or never started would otherwise just not run, and a
# misspelt --suites entry would quietly select nothing; run.sh and check.sh
# ask this script instead, and scripts/vm/suites-test.sh tests it.
#
#   suites.sh [-m FILE] kernels              the kernels of the matrix
#   suites.sh [-m FILE] all                  every suite the manifest names
#   suites.sh [-m FILE] list KERNEL          the suites KERNEL must run
#   suites.sh [-m FILE] select GLOBS [PAYLOAD]
#                                            the manifest's suites GLOBS
#                                            (comma- or space-separated)
#                                            name; fails for a glob that
#                                            names none (nor any suite
#                                            built in PAYLOAD)
#   suites.sh [-m FILE] unbuilt PAYLOAD SUITE...
#                                            each SUITE with no executable
#                                            PAYLOAD/selftests/SUITE
#   suites.sh [-m FILE] unrun RESULT SUITE...
#                                            each SUITE the kselftest runner
#                                            never started: the guest's
#                                            result channel (result.log)
#                                            has no runner header
#                                            "| # selftests: <coll>: SUITE"
#   suites.sh [-m FILE] check-payload PAYLOAD
#                                            every manifest suite is built
#                                            in PAYLOAD/selftests, and every
#                                            suite built there is listed
#
# Names go to stdout, one a line; reasons go to stderr as "suites: ..."
# lines.  The exit status is 1 when a check finds something or the manifest
# is malformed, 2 on a usage error.

set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
manifest=$top/selftests/suites.manifest

say() { printf 'suites: %s\n' "$*" >&2; }
usage() {
	sed -n '/^#   suites.sh/,/^#  *suite built there/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

if [ "${1:-}" = -m ]; then
	[ $# -ge 2 ] || usage
	manifest=$2
	shift 2
fi
[ $# -ge 1 ] || usage
cmd=$1
shift
# The manifest as the messages name it.
shown=${manifest#"$top"/}

# parse MODE [KERNEL]: check the whole manifest, then print the matrix
# (kernels), every suite (all) or KERNEL's suites (list), in file order.
parse() {
	[ -r "$manifest" ] || { say "cannot read $shown"; return 1; }
	awk -v mode="$1" -v kernel="${2:-}" -v shown="$shown" '
		function bad(msg) {
			printf "suites: %s:%d: %s\n", shown, FNR, msg > "/dev/stderr"
			nbad++
		}
		{ sub(/#.*/, "") }
		NF == 0 { next }
		$1 == "matrix:" {
			if (nmatrix) bad("a second \"matrix:\" line")
			for (i = 2; i <= NF; i++) {
				if ($i in matrix) bad("kernel " $i " twice in the matrix")
				matrix[$i] = 1
				kernels[++nmatrix] = $i
			}
			if (NF < 2) bad("\"matrix:\" names no kernel")
			next
		}
		{
			if (!nmatrix) bad("suite " $1 " comes before the \"matrix:\" line")
			# The name is a file name and a glob matches it literally.
			if ($1 !~ /^[A-Za-z0-9_.+-]+$/) bad("\"" $1 "\" is not a suite name")
			if ($1 in seen) bad("suite " $1 " is listed twice")
			seen[$1] = 1
			if (NF < 2) bad("suite " $1 " names no kernel")
			rule = ""
			for (i = 2; i <= NF; i++) {
				k = $i
				sub(/^!/, "", k)
				if ($i != "*" && !(k in matrix))
					bad("suite " $1 ": \"" $i "\" is neither \"*\" nor (\"!\" and) a kernel of the matrix")
				rule = rule " " $i
			}
			suites[++nsuites] = $1
			rules[nsuites] = rule
		}
		END {
			if (!nmatrix && !nbad) {
				printf "suites: %s: no \"matrix:\" line\n", shown > "/dev/stderr"
				nbad++
			}
			if (!nsuites && !nbad) {
				printf "suites: %s: lists no suite\n", shown > "/dev/stderr"
				nbad++
			}
			if (nbad) exit 1
			if (mode == "kernels")
				for (i = 1; i <= nmatrix; i++) print kernels[i]
			if (mode == "all")
				for (i = 1; i <= nsuites; i++) print suites[i]
			if (mode == "list") {
				if (!(kernel in matrix))
					printf "suites: %s is not in the matrix of %s: it runs the suites listed for \"*\"\n",
						kernel, shown > "/dev/stderr"
				for (i = 1; i <= nsuites; i++) {
					n = split(rules[i], w, " ")
					on = 0
					for (j = 1; j <= n; j++) {
						if (w[j] == "*" || w[j] == kernel) on = 1
						else if (w[j] == "!" kernel) on = 0
					}
					if (on) print suites[i]
				}
			}
		}' "$manifest"
}

# built PAYLOAD: the executables in PAYLOAD/selftests, as the guest's init
# would run them.
built() {
	local f
	for f in "$1"/selftests/*; do
		[ -f "$f" ] && [ -x "$f" ] && basename "$f"
	done
	return 0
}

# failing TEST SUITE...: each SUITE for which "TEST SUITE" fails, one a
# line; fails if there is any.
failing() {
	local test=$1 s rc=0
	shift
	for s in "$@"; do
		"$test" "$s" && continue
		echo "$s"
		rc=1
	done
	return "$rc"
}

case "$cmd" in
kernels | all)
	[ $# = 0 ] || usage
	parse "$cmd"
	;;
list)
	[ $# = 1 ] || usage
	parse list "$1"
	;;
select)
	[ $# = 1 ] || [ $# = 2 ] || usage
	all=$(parse all) || exit 1
	payload=${2:-}
	extra=''
	[ -z "$payload" ] || extra=$(built "$payload")
	IFS=', ' read -ra globs <<<"$1"
	declare -A picked=()
	nbad=0 nglobs=0
	for g in "${globs[@]}"; do
		[ -n "$g" ] || continue
		nglobs=$((nglobs + 1))
		named=0
		while IFS= read -r s; do
			# shellcheck disable=SC2053
			[[ $s == $g ]] || continue
			picked[$s]=1
			named=1
		done <<<"$all"
		while IFS= read -r s; do
			# shellcheck disable=SC2053
			[[ -z "$s" || $s != $g ]] || named=1
		done <<<"$extra"
		if [ "$named" = 0 ]; then
			say "\"$g\" names no suite in $shown${payload:+ nor in $payload/selftests}"
			nbad=$((nbad + 1))
		fi
	done
	[ "$nglobs" -gt 0 ] || { say "\"$1\" names no suite at all"; exit 1; }
	[ "$nbad" = 0 ] || exit 1
	while IFS= read -r s; do
		[ -z "${picked[$s]:-}" ] || echo "$s"
	done <<<"$all"
	;;
unbuilt)
	[ $# -ge 1 ] || usage
	payload=$1
	shift
	is_built() { [ -f "$payload/selftests/$1" ] && [ -x "$payload/selftests/$1" ]; }
	failing is_built "$@" || exit 1
	;;
unrun)
	[ $# -ge 1 ] || usage
	result=$1
	shift
	was_run() {
		awk -v s="$1" '/^\| # selftests: [^ ]+: [^ ]+$/ && $NF == s { f = 1 }
			END { exit !f }' "$result" 2>/dev/null
	}
	failing was_run "$@" || exit 1
	;;
check-payload)
	[ $# = 1 ] || usage
	payload=$1
	all=$(parse all) || exit 1
	[ -d "$payload/selftests" ] || { say "no $payload/selftests"; exit 1; }
	rc=0
	mapfile -t listed <<<"$all"
	while IFS= read -r s; do
		[ -n "$s" ] || continue
		say "$s: listed in $shown but not built in $payload/selftests" \
			"(renamed, removed, or its Makefile skipped it?)"
		rc=1
	done < <("$0" -m "$manifest" unbuilt "$payload" "${listed[@]}" || true)
	while IFS= read -r s; do
		[ -n "$s" ] || continue
		grep -qxF "$s" <<<"$all" && continue
		say "$s: built in $payload/selftests but not listed in $shown," \
			"so no kernel runs it: add a line for it"
		rc=1
	done < <(built "$payload")
	[ "$rc" != 0 ] || say "$payload/selftests holds exactly the ${#listed[@]} suites of $shown"
	exit "$rc"
	;;
*)
	usage
	;;
esac
