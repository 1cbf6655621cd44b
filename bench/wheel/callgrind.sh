#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# Run wheel_bench at each live-timer population, once natively for ns/op
# and once under callgrind (with its cache simulator) for instructions
# and simulated L1 data misses per op, and print one table: the 4-ary
# heap against the timing wheel, per phase, plus the cost of one timer's
# life when 90% are cancelled and 10% fire (arm + 0.9 cancel + 0.1 fire).
# Under callgrind the arm and fire phases take 100k ops instead of a tenth
# of the population (the population, the cancels and the sweep are the
# same), so that 10M runs in about a minute.  Every population runs once:
# ns/op is for reference (it moves with the machine and its load);
# instruction counts are exact and repeatable.
# Usage: callgrind.sh BENCH OUTDIR POPULATION...

set -euo pipefail

bench=$1
out=$2/callgrind
shift 2
command -v valgrind >/dev/null || { echo "bench: valgrind not installed (run scripts/setup.sh)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"

for pop in "$@"; do
	dir=$out/$pop
	mkdir -p "$dir"
	echo "== $pop live timers, native" >&2
	"$bench" "$pop" | tee "$dir/native.txt" >&2
	echo "== $pop live timers, callgrind" >&2
	valgrind --tool=callgrind --collect-atstart=no --cache-sim=yes \
		--callgrind-out-file="$dir/callgrind.out" \
		"$bench" --callgrind "$pop" >"$dir/ops.txt" 2>"$dir/valgrind.log"
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
