#!/usr/bin/env bash
# callgrind_skip.sh - user-space instructions tpbed-server spends per locked row a SKIP LOCKED
# claim steps over, counted by callgrind. The queue fixture's q_v1 holds 20,000 ready jobs; a
# holder (READ COMMITTED) locks the first K of them with SELECT ... LIMIT K FOR UPDATE, and a
# claimer runs the claim of the job-queue study (SELECT id FROM q_v1 WHERE status = 0 ORDER BY
# run_at, id LIMIT 10 FOR UPDATE SKIP LOCKED) REPS times, once with K = 0 and once with K.
#
# Usage: callgrind_skip.sh [K] [REPS]      K [15000], REPS [20]
# Environment: TPBED_BIN [target/release/tpbed-server], PORT [3398], OUT [/tmp/tpbed-callgrind-skip]
# Prints: instructions per claim at K = 0 and at K, and per skipped row
#   ((claims at K - claims at 0) / (REPS * K)).
# Needs: valgrind, python3 with PyMySQL.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
K=${1:-15000}
REPS=${2:-20}
TPBED_BIN=${TPBED_BIN:-$ROOT/target/release/tpbed-server}
PORT=${PORT:-3398}
OUT=${OUT:-/tmp/tpbed-callgrind-skip}
rm -rf "$OUT"; mkdir -p "$OUT"

valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out.%p" --separate-threads=no \
  "$TPBED_BIN" --port="$PORT" --bind-address=127.0.0.1 2> "$OUT/server.log" &
VG=$!
trap 'kill $VG 2>/dev/null' EXIT
for _ in $(seq 600); do grep -q "ready for connections" "$OUT/server.log" && break; sleep 0.2; done

python3 - "$PORT" "$K" "$REPS" "$VG" "$ROOT/tests/fixtures/queue.sql" <<'PY'
import re, subprocess, sys
import pymysql

port, k, reps, vg, fixture = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
connect = lambda: pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
setup = connect().cursor()
setup.execute("CREATE DATABASE q")
setup.execute("USE q")
ddl = re.search(r"CREATE TABLE q_v1 .*?;", open(fixture).read(), re.S).group(0)
setup.execute(ddl.rstrip(";"))
for batch in range(20):
    rows = ",".join(f"(0, {batch * 1000 + i}, {i % 10}, 'payload{i:024d}')" for i in range(1000))
    setup.execute(f"INSERT INTO q_v1 (status, run_at, priority, payload) VALUES {rows}")
holder, claimer = connect().cursor(), connect().cursor()
for c in (holder, claimer):
    c.execute("USE q")
    c.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
claim = "SELECT id FROM q_v1 WHERE status = 0 ORDER BY run_at, id LIMIT 10 FOR UPDATE SKIP LOCKED"

def claims(locked):
    holder.execute("BEGIN")
    if locked:
        holder.execute(f"SELECT id FROM q_v1 WHERE status = 0 ORDER BY run_at, id LIMIT {locked} FOR UPDATE")
    claimer.execute("BEGIN")
    for _ in range(3):
        claimer.execute(claim)
    subprocess.run(["callgrind_control", "-z", vg], capture_output=True, check=False)
    for _ in range(reps):
        claimer.execute(claim)
    subprocess.run(["callgrind_control", "-d", vg], capture_output=True, check=False)
    claimer.execute("ROLLBACK")
    holder.execute("ROLLBACK")

claims(0)
claims(k)
PY
sleep 1
total() { callgrind_annotate "$1" | awk '/PROGRAM TOTALS/{gsub(",", "", $1); print $1}'; }
AT0=$(total "$OUT"/callgrind.out.*.1)
ATK=$(total "$OUT"/callgrind.out.*.2)
echo "per_claim_at_0=$((AT0 / REPS)) per_claim_at_$K=$((ATK / REPS)) per_skipped_row=$(((ATK - AT0) / (REPS * K)))"
