#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# The user-space heap benchmarks, natively for ns/op and under callgrind
# (with its cache simulator) for instructions and simulated L1 data misses
# per operation.  Instruction counts are exact and repeatable; ns/op is for
# reference only (it moves with the machine and its load).
#
#   callgrind.sh heap BENCH OUTDIR
#	heap_bench: the 4-ary heap against a binary heap, per op
#   callgrind.sh wheel BENCH OUTDIR POPULATION...
#	wheel_bench at each live-timer population: the 4-ary heap against
#	the timing wheel, per phase, plus the cost of one timer's life when
#	90% are cancelled and 10% fire (arm + 0.9 cancel + 0.1 fire).  Under
#	callgrind the arm and fire phases take 100k ops instead of a tenth of
#	the population (the population, the cancels and the sweep are the
#	same), so that 10M runs in about a minute.
#
# A benchmark marks its phases with callgrind client requests and prints
# "ops <what> <phase> <n>" lines under --callgrind; each phase's dump
# becomes a line "<what> <phase>\t<Ir>\t<D1 misses>" of DIR/phases.txt.

set -euo pipefail

die() { echo "bench: $*" >&2; exit 1; }

[ $# -ge 3 ] || die "usage: callgrind.sh heap BENCH OUTDIR | wheel BENCH OUTDIR POPULATION..."
mode=$1 bench=$2 out=$3/callgrind
shift 3
command -v valgrind >/dev/null || die "valgrind not installed (run scripts/setup.sh)"

# profile DIR ARGS...: BENCH --callgrind ARGS under callgrind, into DIR.
profile() {
	local dir=$1 f
	shift
	mkdir -p "$dir"
	# The cache simulator takes its geometry from the host CPU; it warns
	# when it has to guess, which is harmless here.
	valgrind --tool=callgrind --collect-atstart=no --cache-sim=yes \
		--callgrind-out-file="$dir/callgrind.out" \
		"$bench" --callgrind "$@" >"$dir/ops.txt" 2>"$dir/valgrind.log"
	# Only first-level misses count: the simulated last level copies the
	# host's (often larger than the heap), so its misses say little here.
	# A dump names its phase in "desc: Trigger: Client Request: <what>
	# <phase>", then carries "events:" and "summary:" lines.
	for f in "$dir"/callgrind.out.*; do
		awk '
			/^desc: Trigger: Client Request: / {
				sub(/^desc: Trigger: Client Request: /, ""); phase = $0
			}
			/^events: / { for (i = 2; i <= NF; i++) ev[$i] = i - 1 }
			/^summary: / {
				printf "%s\t%s\t%s\n", phase, $(ev["Ir"] + 1),
				       $(ev["D1mr"] + 1) + $(ev["D1mw"] + 1)
			}' "$f"
	done >"$dir/phases.txt"
}

heap() {
	[ $# = 0 ] || die "callgrind.sh heap takes no population"
	echo "== native"
	"$bench"
	echo
	rm -rf "$out"
	profile "$out"
	echo "== callgrind, per op (Ir: instructions; D1: simulated L1 data misses)"
	awk -F'\t' '
		FNR == NR { ir[$1] = $2; d1[$1] = $3; next }
		$1 == "ops" {
			name = $2 " " $3; ops[name] = $4
			if (!($3 in seen)) { seen[$3] = 1; order[n++] = $3 }
		}
		END {
			printf "%-14s %10s %10s %7s %10s %10s\n", "op", "4-ary Ir",
			       "binary Ir", "ratio", "4-ary D1", "binary D1"
			for (i = 0; i < n; i++) {
				a = "4-ary " order[i]; b = "binary " order[i]
				if (!(a in ir) || !(b in ir) || !ops[a] || !ops[b]) {
					print "bench: missing callgrind data for " order[i] > "/dev/stderr"
					exit 1
				}
				printf "%-14s %10.1f %10.1f %7.2f %10.2f %10.2f\n",
				       order[i], ir[a] / ops[a], ir[b] / ops[b],
				       (ir[a] / ops[a]) / (ir[b] / ops[b]),
				       d1[a] / ops[a], d1[b] / ops[b]
			}
		}' "$out/phases.txt" FS=' ' "$out/ops.txt"
}

wheel() {
	local pop dir
	[ $# -gt 0 ] || die "callgrind.sh wheel needs at least one population"
	rm -rf "$out"
	for pop in "$@"; do
		dir=$out/$pop
		mkdir -p "$dir"
		echo "== $pop live timers, native" >&2
		"$bench" "$pop" | tee "$dir/native.txt" >&2
		echo "== $pop live timers, callgrind" >&2
		profile "$dir" "$pop"
	done
	echo
	echo "per op: ns natively; Ir instructions and D1 simulated L1 data misses under callgrind"
	printf "%-9s %-10s %7s %7s %8s %8s %7s %7s\n" "live" "op" "heap ns" "wheel" \
		"heap Ir" "wheel" "heap D1" "wheel"
	for pop in "$@"; do
		dir=$out/$pop
		awk -v pop="$pop" '
			FILENAME ~ /phases.txt$/ { split($0, f, "\t"); ir[f[1]] = f[2]; d1[f[1]] = f[3]; next }
			FILENAME ~ /ops.txt$/ && $1 == "ops" { ops[$2 " " $3] = $4; next }
			FILENAME ~ /native.txt$/ && $1 ~ /^(arm|cancel|fire)$/ { ns["heap " $1] = $2; ns["wheel " $1] = $3 }
			END {
				split("arm cancel fire", phase, " ")
				w["arm"] = 1; w["cancel"] = 0.9; w["fire"] = 0.1
				for (i = 1; i <= 3; i++) {
					p = phase[i]
					for (s = 0; s < 2; s++) {
						k = (s ? "wheel " : "heap ") p
						if (!(k in ir) || !ops[k] || !(k in ns)) {
							print "bench: missing data for " k " at " pop > "/dev/stderr"
							exit 1
						}
						cir[k] = ir[k] / ops[k]; cd1[k] = d1[k] / ops[k]
						life_ns[s] += w[p] * ns[k]; life_ir[s] += w[p] * cir[k]
						life_d1[s] += w[p] * cd1[k]
					}
					printf "%-9s %-10s %7.1f %7.1f %8.1f %8.1f %7.2f %7.2f\n", pop, p,
					       ns["heap " p], ns["wheel " p], cir["heap " p], cir["wheel " p],
					       cd1["heap " p], cd1["wheel " p]
				}
				printf "%-9s %-10s %7.1f %7.1f %8.1f %8.1f %7.2f %7.2f\n", pop, "life",
				       life_ns[0], life_ns[1], life_ir[0], life_ir[1], life_d1[0], life_d1[1]
			}' "$dir/phases.txt" "$dir/ops.txt" "$dir/native.txt"
	done
	for pop in "$@"; do
		grep -h '^max late' "$out/$pop/native.txt" | sed "s/^/$pop: /"
	done
}

case "$mode" in
heap | wheel) "$mode" "$@" ;;
*) die "unknown benchmark '$mode' (heap or wheel)" ;;
esac
