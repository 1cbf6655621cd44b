#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# Run heap_bench natively for ns/op, then once under callgrind (with its
# cache simulator) and turn the per-phase dumps into instructions and
# simulated cache misses per operation, 4-ary heap against binary heap.
# Instruction counts are exact and repeatable; ns/op is for reference only
# (it moves with the machine and its load).  Usage: callgrind.sh BENCH OUTDIR

set -euo pipefail

bench=$1
out=$2/callgrind
command -v valgrind >/dev/null || { echo "bench: valgrind not installed (run scripts/setup.sh)" >&2; exit 1; }

echo "== native"
"$bench"
echo

rm -rf "$out"
mkdir -p "$out"
# The cache simulator takes its geometry from the host CPU; it warns when it
# has to guess, which is harmless here.
valgrind --tool=callgrind --collect-atstart=no --cache-sim=yes \
	--callgrind-out-file="$out/callgrind.out" \
	"$bench" --callgrind >"$out/ops.txt" 2>"$out/valgrind.log"

# Only first-level misses are shown: the simulated last level copies the
# host's (often larger than the heap), so its misses say little here.
echo "== callgrind, per op (Ir: instructions; D1: simulated L1 data misses)"
# A dump names its phase in "desc: Trigger: Client Request: <heap> <op>" and
# then carries "events:" and "summary:" lines with one count per event.
for f in "$out"/callgrind.out.*; do
	awk '
		/^desc: Trigger: Client Request: / {
			sub(/^desc: Trigger: Client Request: /, ""); phase = $0
		}
		/^events: / { for (i = 2; i <= NF; i++) ev[$i] = i - 1 }
		/^summary: / {
			printf "%s\t%s\t%s\n", phase, $(ev["Ir"] + 1),
			       $(ev["D1mr"] + 1) + $(ev["D1mw"] + 1)
		}' "$f"
done >"$out/phases.txt"

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
