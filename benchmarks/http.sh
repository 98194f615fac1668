#!/usr/bin/env bash
# HTTP throughput and latency of `errata serve`, measured with wrk on the loopback interface.
#
# Run from the repository root (wrk comes from Debian: `apt-get install -y wrk`):
#
#   benchmarks/http.sh                      # SQLite and PostgreSQL, 1 and 2 workers, 10 s runs
#   DURATION=5s BACKENDS=sqlite WORKERS="1" benchmarks/http.sh
#   RECORDS=100000 BACKENDS=sqlite benchmarks/http.sh    # 100,000 synthetic records more
#
# For each backend and worker count it serves the app as `errata serve` does, on 127.0.0.1,
# with the calibration route of benchmarks/calibration.py (a fresh SQLite file, or a fresh
# PostgreSQL database that it creates and drops; with RECORDS, that many synthetic records
# imported first), warms every endpoint up, then runs wrk once per endpoint for DURATION and
# prints one table:
#
#   GET  /healthz                      the trivial endpoint most ratios are taken against
#   GET  /api/errors/225d0e9c2ee22311  one record, as stored
#   POST /echo (20 KB paste)           calibration: receives and validates the match body
#   POST /api/match                    a 20 KB JAX traceback holding one known error; its
#                                      ratio is taken against the echo of the same body
#   POST /api/compute                  copy_gmem_to_smem, shape [7], int4: the engine's
#                                      answer is remembered after the first request
#   POST /api/compute (new cases)      a random operation, 2-D shape and dtype each request
#                                      (of 3.9 million): nearly every one runs the engine
#
# The ratio ("of /healthz", "of echo") is not taken between the long runs: these machines'
# speed drifts by a fifth within minutes, more than the differences measured. For each
# endpoint, ROUNDS pairs of short runs (ROUND seconds of the reference, then as long of the
# endpoint) each give a ratio, and the column is their median: two runs back to back see
# nearly the same machine.
#
# The per-client rate limit is turned off (ERRATA_RATE_LIMIT_PER_SECOND=0): wrk is one
# client. wrk runs on the same machine as the server and takes CPU from it, so on a
# 2-core machine the figures are a floor, not the server's capacity. "server CPU ms/req" is
# the CPU time the server processes used during the run divided by the requests served:
# what a request costs, whatever else the machine was doing. "failed" counts non-2xx
# answers, socket errors and timeouts (wrk gives up on a request after 2 s). Every run is
# bounded by DURATION and the script stops its servers and drops its database on exit.
#
# Settings (environment): DURATION (10s), ROUNDS (7), ROUND (1s), CONNECTIONS (16),
# THREADS (1), BACKENDS ("sqlite postgresql"), WORKERS ("1 2"), RECORDS (0), POSTGRES_ADMIN_URL
# (postgresql+psycopg://postgres@127.0.0.1:5432/postgres), PORT (8731), PYTHON (.venv/bin/python),
# KEEP_SCRATCH (set: keep the server's log and wrk's output, and say where).
set -euo pipefail

DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-7}
ROUND=${ROUND:-1s}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-1}
BACKENDS=${BACKENDS:-sqlite postgresql}
WORKERS=${WORKERS:-1 2}
RECORDS=${RECORDS:-0}
POSTGRES_ADMIN_URL=${POSTGRES_ADMIN_URL:-postgresql+psycopg://postgres@127.0.0.1:5432/postgres}
PORT=${PORT:-8731}
PYTHON=${PYTHON:-.venv/bin/python}
RECORD=225d0e9c2ee22311
BASE="http://127.0.0.1:${PORT}"

cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }

SCRATCH=$(mktemp -d)
SERVER_PID=""
DATABASE=""

stop_server() {
    if [[ -n "$SERVER_PID" ]]; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.2; done
        kill -KILL "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=""
    fi
}

postgres() {  # postgres "SQL": run one statement as the admin user, outside a transaction
    "$PYTHON" - "$POSTGRES_ADMIN_URL" "$1" <<'EOF'
import sys
from sqlalchemy import create_engine, text
engine = create_engine(sys.argv[1], isolation_level="AUTOCOMMIT")
with engine.connect() as connection:
    connection.execute(text(sys.argv[2]))
engine.dispose()
EOF
}

cleanup() {
    stop_server
    if [[ -n "$DATABASE" ]]; then postgres "DROP DATABASE IF EXISTS \"$DATABASE\" WITH (FORCE)"; fi
    [[ -n "${KEEP_SCRATCH:-}" ]] && echo "kept $SCRATCH" >&2 || rm -rf "$SCRATCH"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Request bodies, and the wrk scripts that send them.
"$PYTHON" - "$SCRATCH" <<'EOF'
import json, sys
from pathlib import Path
from benchmarks import corpus
scratch = Path(sys.argv[1])
(scratch / "match.json").write_text(json.dumps({"text": corpus.paste(20_000)}))
(scratch / "compute.json").write_text(
    json.dumps({"operation": "copy_gmem_to_smem", "shape": [7], "dtype": "int4"})
)
EOF
for script in match:match compute:compute echo:match; do  # the echo is sent the paste
    name=${script%:*} body=${script#*:}
    cat >"$SCRATCH/$name.lua" <<EOF
local file = io.open("$SCRATCH/$body.json", "rb")
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = "application/json"
EOF
done
cat >"$SCRATCH/compute-new.lua" <<'EOF'
local operations = {"copy_gmem_to_smem", "copy_smem_to_gmem", "pallas_call"}
local dtypes = {"int4", "int8", "bfloat16", "float32", "float8_e4m3fn"}
local headers = {["Content-Type"] = "application/json"}
function init(args) math.randomseed(os.time()) end
function request()
    local body = string.format('{"operation": "%s", "shape": [%d, %d], "dtype": "%s"}',
        operations[math.random(#operations)], math.random(512), math.random(512),
        dtypes[math.random(#dtypes)])
    return wrk.format("POST", nil, headers, body)
end
EOF

start_server() {  # start_server URL WORKERS: serve, and wait until /readyz answers
    local url=$1 workers=$2
    ERRATA_DATABASE_URL="$url" ERRATA_DATA_DIR="$SCRATCH/var" ERRATA_RATE_LIMIT_PER_SECOND=0 \
        "$PYTHON" -m benchmarks.calibration --host 127.0.0.1 --port "$PORT" --workers "$workers" \
        >"$SCRATCH/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1500); do
        if curl -fs -o /dev/null "$BASE/readyz"; then return 0; fi
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.2
    done
    echo "server did not start:" >&2
    tail -20 "$SCRATCH/server.log" >&2
    exit 1
}

server_cpu_ticks() {  # CPU time the server and its workers have used so far, in clock ticks
    local total=0 pid
    for pid in "$SERVER_PID" $(pgrep -P "$SERVER_PID" || true); do
        [[ -r "/proc/$pid/stat" ]] || continue
        # utime and stime are fields 14 and 15; fields 3 on follow the ") " closing comm.
        total=$((total + $(sed 's/^.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}')))
    done
    echo "$total"
}

requests_per_second() {  # requests_per_second PATH [LUA]: one run of ROUND seconds
    local path=$1 script=${2:-} args=(-t "$THREADS" -c "$CONNECTIONS" -d "$ROUND")
    [[ -n "$script" ]] && args+=(-s "$script")
    wrk "${args[@]}" "$BASE$path" | awk '/^Requests\/sec:/ { print $2 }'
}

ratio_to() {  # ratio_to REF_PATH REF_LUA PATH [LUA]: the median over ROUNDS of the ratio
    # of the endpoint's req/s to the reference's, each pair measured back to back
    local reference endpoint ref_path=$1 ref_script=$2
    shift 2
    for _ in $(seq "$ROUNDS"); do
        reference=$(requests_per_second "$ref_path" "$ref_script")
        endpoint=$(requests_per_second "$@")
        awk -v e="$endpoint" -v r="$reference" 'BEGIN { print (r > 0 ? e / r : 0) }'
    done | sort -g | awk '{ r[NR] = $1 } END { print (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2 }'
}

measure() {  # measure LABEL PATH [LUA [REFERENCE]]: one wrk run and the ratio to the
    # reference (/healthz, or echo: the echo of the match body); a row of results.tsv
    local label=$1 path=$2 script=${3:-} reference=${4:-/healthz} out before after ratio=1
    local args=(-t "$THREADS" -c "$CONNECTIONS" --latency)
    [[ -n "$script" ]] && args+=(-s "$script")
    wrk "${args[@]}" -d 2s "$BASE$path" >/dev/null  # warm-up: caches, the match index
    if [[ "$reference" == echo ]]; then
        ratio=$(ratio_to /echo "$SCRATCH/echo.lua" "$path" "$script")
    elif [[ "$path" != /healthz ]]; then
        ratio=$(ratio_to /healthz "" "$path" "$script")
    fi
    before=$(server_cpu_ticks)
    out=$(wrk "${args[@]}" -d "$DURATION" "$BASE$path")
    after=$(server_cpu_ticks)
    echo "$out" >"$SCRATCH/wrk-$ROW.txt"
    ROW=$((ROW + 1))
    awk -v config="$CONFIG" -v label="$label" -v ratio="$ratio" -v reference="$reference" \
        -v ticks=$((after - before)) \
        -v hz="$(getconf CLK_TCK)" '
        function ms(value) {  # wrk prints 812.00us, 3.41ms or 1.20s
            if (value ~ /us$/) return value / 1000
            if (value ~ /ms$/) return value + 0
            if (value ~ /s$/) return value * 1000
            return value
        }
        $1 == "50%" { p50 = ms($2) }
        $1 == "99%" { p99 = ms($2) }
        /^Requests\/sec:/ { rps = $2 }
        / requests in / { requests = $1 }
        /Non-2xx or 3xx responses:/ { errors += $NF }
        /Socket errors:/ {  # connect 0, read 0, write 0, timeout 0
            for (i = 3; i <= NF; i += 2) { errors += $(i + 1) + 0 }
        }
        END {
            cpu = requests > 0 ? 1000 * ticks / hz / requests : 0
            printf "%s\t%s\t%.1f\t%.2f\t%.2f\t%d\t%.2f\t%.3f\t%s\n", config, label, rps, p50,
                p99, errors, cpu, ratio, reference
        }
    ' <<<"$out" >>"$SCRATCH/results.tsv"
}

ROW=0
: >"$SCRATCH/results.tsv"
for backend in $BACKENDS; do
    for workers in $WORKERS; do
        if [[ "$backend" == postgresql ]]; then
            DATABASE="errata_bench_$(date +%s)_$$"
            postgres "CREATE DATABASE \"$DATABASE\""
            url="${POSTGRES_ADMIN_URL%/*}/$DATABASE"
        else
            rm -rf "$SCRATCH/var"
            url="sqlite:///$SCRATCH/var/errata.sqlite3"
        fi
        if ((RECORDS > 0)); then
            echo "== importing $RECORDS synthetic records" >&2
            "$PYTHON" -c 'import sys, pathlib; from benchmarks.writes import fill
fill(sys.argv[1], int(sys.argv[2]), pathlib.Path(sys.argv[3]))' "$url" "$RECORDS" "$SCRATCH" >&2
        fi
        CONFIG="$backend, $workers worker$([[ $workers == 1 ]] || echo s)"
        echo "== $CONFIG" >&2
        start_server "$url" "$workers"
        measure "GET /healthz" /healthz
        measure "GET /api/errors/{id}" "/api/errors/$RECORD"
        measure "POST /echo (20 KB paste)" /echo "$SCRATCH/echo.lua"
        measure "POST /api/match (20 KB)" /api/match "$SCRATCH/match.lua" echo
        measure "POST /api/compute" /api/compute "$SCRATCH/compute.lua"
        measure "POST /api/compute (new cases)" /api/compute "$SCRATCH/compute-new.lua"
        stop_server
        if [[ -n "$DATABASE" ]]; then
            postgres "DROP DATABASE IF EXISTS \"$DATABASE\" WITH (FORCE)"
            DATABASE=""
        fi
    done
done

echo
echo "wrk -t $THREADS -c $CONNECTIONS -d $DURATION --latency, on $(nproc) cores shared with the server"
echo
awk -F'\t' '
    BEGIN {
        print "| server | endpoint | req/s | p50 ms | p99 ms | req/s ratio " \
              "| server CPU ms/req | failed |"
        print "|---|---|---:|---:|---:|---:|---:|---:|"
    }
    {
        printf "| %s | %s | %s | %s | %s | %.0f %% of %s | %s | %s |\n", $1, $2, $3, $4, $5,
            100 * $8, $9, $7, $6
    }
' "$SCRATCH/results.tsv"
