#!/usr/bin/env bash
# Side-by-side speed of POST /v1/ask: the Rust release server against a FastAPI + uvicorn
# baseline (benches/compare/baseline.py, which does less work: see its docstring).
#
#   apt-get install -y wrk
#   pip install fastapi uvicorn            # the baseline itself (h11 + asyncio)
#   pip install uvloop httptools           # optional: what uvicorn[standard] adds for speed
#   cargo build --release                  # target/release/gpu-advisor
#   bash benches/compare/compare.sh        # DURATION=10s PORT=18090 WARMUP=2s WAIT_IDLE=0
#
# One server at a time, on 127.0.0.1, wrk on the same machine (-t2 -c64, the same six
# questions and Lua script as benches/http.sh, each request a new conversation id):
#   rust                      target/release/gpu-advisor serve (logs at info to a file)
#   python h11/asyncio    x1  uvicorn --workers 1 --http h11 --loop asyncio
#   python h11/asyncio    x2  uvicorn --workers 2 ...
#   python httptools/uvloop x1, x2   only when uvloop and httptools are importable
# For each: start-up time until GET /healthz answers, idle RSS, a WARMUP wrk run that is
# not reported, the measured wrk run (req/s, latency avg / p50 / p99 / max), RSS after it
# (summed over the uvicorn supervisor and all its descendants: with --workers 2 that is the
# supervisor, multiprocessing's resource tracker and the two workers). Fails if wrk reports
# any non-2xx response or socket error, or a server dies. Also prints how much of the machine
# the server, wrk and any other process used during each measured run (warns above 10 %),
# because wrk shares the cores with the server and a busy box skews the figures.
# Without target/release/gpu-advisor only the Python side runs (and no ratio is printed).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
port=${PORT:-18090}
dur=${DURATION:-10s}
warm=${WARMUP:-2s}
conns=64
bin=target/release/gpu-advisor
# The uvicorn script next to the real interpreter (not a pyenv shim, which adds ~0.1 s to start-up).
uvicorn=${UVICORN:-$(python3 -c 'import os, sys; p = os.path.join(os.path.dirname(sys.executable), "uvicorn"); print(p if os.access(p, os.X_OK) else "uvicorn")')}
logdir=$(mktemp -d /tmp/gpu-advisor-compare.XXXXXX)
lua=benches/ask.lua
summary=$logdir/summary.tsv

command -v wrk >/dev/null || { echo "wrk not found: apt-get install -y wrk" >&2; exit 1; }
command -v "$uvicorn" >/dev/null || { echo "uvicorn not found: pip install fastapi uvicorn" >&2; exit 1; }


pid=
stop() {
  [ -n "$pid" ] || return 0
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=
}
trap stop EXIT

# The process and all its descendants (uvicorn --workers N: supervisor + N workers).
tree() { local p; echo "$1"; for p in $(pgrep -P "$1" || true); do tree "$p"; done; }
rss_mb() {
  local kb=0 p v
  for p in $(tree "$1"); do
    v=$(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
    kb=$((kb + ${v:-0}))
  done
  awk -v kb="$kb" 'BEGIN {printf "%.1f", kb / 1024}'
}
nprocs() { tree "$1" | wc -l; }

# CPU accounting in clock ticks: the whole machine (/proc/stat: busy, total) and one
# process tree (utime + stime of each process, all threads included).
machine_ticks() { awk '/^cpu / {print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9; exit}' /proc/stat; }
tree_ticks() {
  local t=0 p v
  for p in $(tree "$1"); do
    v=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | awk '{print $12 + $13}' || echo 0)
    t=$((t + ${v:-0}))
  done
  echo "$t"
}
# WAIT_IDLE=N: before starting each server, wait up to N s for the machine to be >= 90 %
# idle over 3 s (other jobs on a shared box); 0 = do not wait.
wait_idle() {
  local end=$(( $(date +%s) + ${WAIT_IDLE:-0} )) b1 t1 b2 t2
  while [ "$(date +%s)" -lt "$end" ]; do
    read -r b1 t1 < <(machine_ticks); sleep 3; read -r b2 t2 < <(machine_ticks)
    [ $(( 100 * (b2 - b1) / (t2 - t1) )) -le 10 ] && return 0
  done
  [ "${WAIT_IDLE:-0}" -eq 0 ] || echo "  (machine still busy after WAIT_IDLE=${WAIT_IDLE} s; running anyway)"
}

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# start NAME PROCS CMD...: launch, time until /healthz answers, wait for PROCS processes.
start() {
  local name=$1 want=$2; shift 2
  local log=$logdir/$name.log t0 t1
  if curl -fsS -m1 "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then
    echo "port $port is already in use" >&2; exit 1
  fi
  t0=$(now_ms)
  "$@" >"$log" 2>&1 &
  pid=$!
  until curl -fsS -m1 "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { echo "$name died on start-up; log:" >&2; cat "$log" >&2; exit 1; }
    [ $(( $(now_ms) - t0 )) -lt 30000 ] || { echo "$name: no /healthz after 30 s" >&2; exit 1; }
    sleep 0.01
  done
  t1=$(now_ms)
  startup_ms=$((t1 - t0))
  # Workers > 1: /healthz answers once the first worker listens; wait for the others.
  for _ in $(seq 300); do [ "$(nprocs "$pid")" -ge "$want" ] && break; sleep 0.1; done
  sleep 1
}

# check_wrk FILE: fail on non-2xx responses, socket errors, or no requests at all.
check_wrk() {
  if grep -qE 'Non-2xx or 3xx responses|Socket errors' "$1"; then
    echo "FAIL: wrk reported errors:" >&2; cat "$1" >&2; exit 1
  fi
  grep -qE '^ +[0-9]+ requests in' "$1" || { echo "FAIL: wrk output unreadable:" >&2; cat "$1" >&2; exit 1; }
}

# Latency figures from `wrk --latency`, converted to ms.
to_ms() {
  awk -v v="$1" 'BEGIN {
    if (v ~ /us$/) { sub(/us$/, "", v); printf "%.2f", v / 1000 }
    else if (v ~ /ms$/) { sub(/ms$/, "", v); printf "%.2f", v }
    else if (v ~ /s$/) { sub(/s$/, "", v); printf "%.2f", v * 1000 }
    else printf "?" }'
}

# bench NAME PROCS CMD...
bench() {
  local name=$1 want=$2; shift 2
  local out=$logdir/$name.wrk
  echo "== $name"
  wait_idle
  echo "  load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  start "$name" "$want" "$@"
  local idle procs
  idle=$(rss_mb "$pid"); procs=$(nprocs "$pid")
  # One answer, to show the reply really is an answer (not an error page).
  curl -fsS -X POST -H 'Content-Type: application/json' \
    -d '{"text":"4090 能跑 70B 吗","conversation":"check"}' \
    "http://127.0.0.1:$port/v1/ask" | python3 -c '
import json, sys
r = json.load(sys.stdin)
print("  check: 4090 能跑 70B 吗 -> needs %s GB, fits on rtx4090: %s, recommends %s x %s"
      % (r["estimate"]["total_gb"], r["verdict"]["fits"], r["recommendation"]["offer"], r["recommendation"]["count"]))'
  wrk -t2 -c"$conns" -d"$warm" -s "$lua" "http://127.0.0.1:$port/v1/ask" >"$out.warmup"
  check_wrk "$out.warmup"
  local m0 m1 tot0 tot1 s0 s1 w v
  read -r m0 tot0 < <(machine_ticks); s0=$(tree_ticks "$pid")
  wrk -t2 -c"$conns" -d"$dur" --latency -s "$lua" "http://127.0.0.1:$port/v1/ask" >"$out" &
  w=$!
  wrk_ticks=0
  while kill -0 "$w" 2>/dev/null; do  # wrk's own CPU, read while it still exists
    v=$(sed 's/^.*) //' "/proc/$w/stat" 2>/dev/null | awk '{print $12 + $13}' || true)
    [ -z "$v" ] || wrk_ticks=$v
    sleep 0.1
  done
  wait "$w"
  read -r m1 tot1 < <(machine_ticks); s1=$(tree_ticks "$pid")
  check_wrk "$out"
  # Share of the machine (all cores) used by the server, by wrk, and by everything else.
  local srv_pct wrk_pct other_pct reqs cpu_us
  srv_pct=$(( 100 * (s1 - s0) / (tot1 - tot0) ))
  wrk_pct=$(( 100 * wrk_ticks / (tot1 - tot0) ))
  other_pct=$(( 100 * (m1 - m0 - (s1 - s0) - wrk_ticks) / (tot1 - tot0) ))
  [ "$other_pct" -ge 0 ] || other_pct=0
  reqs=$(awk '/requests in/ {print $1}' "$out")
  # Server CPU time (all its processes, user + system) per answered request.
  cpu_us=$(awk -v t=$((s1 - s0)) -v hz="$(getconf CLK_TCK)" -v n="$reqs" 'BEGIN {printf "%.0f", t * 1e6 / hz / n}')
  kill -0 "$pid" 2>/dev/null || { echo "FAIL: $name died during the run" >&2; exit 1; }
  local after rps avg max p50 p99 bytes
  after=$(rss_mb "$pid")
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$out")
  avg=$(to_ms "$(awk '$1 == "Latency" && NF >= 4 {print $2; exit}' "$out")")
  max=$(to_ms "$(awk '$1 == "Latency" && NF >= 4 {print $4; exit}' "$out")")
  p50=$(to_ms "$(awk '$1 == "50%" {print $2}' "$out")")
  p99=$(to_ms "$(awk '$1 == "99%" {print $2}' "$out")")
  bytes=$(awk '/requests in/ {print $5}' "$out")
  sed -n '/Thread Stats/,/Transfer\/sec/p' "$out" | sed 's/^/  /'
  printf '  start-up to /healthz %d ms; processes %s; RSS idle %s MB, after the run %s MB\n' \
    "$startup_ms" "$procs" "$idle" "$after"
  printf '  CPU during the run (%% of all %s cores): server %d %%, wrk %d %%, other processes %d %%; server CPU per request %s µs\n' \
    "$(nproc)" "$srv_pct" "$wrk_pct" "$other_pct" "$cpu_us"
  [ "$other_pct" -le 10 ] || echo "  WARNING: other processes used ${other_pct} % of the machine during this run"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$rps" "$reqs" "$avg" "$p50" "$p99" \
    "$max" "$idle" "$after" "$startup_ms" "$bytes" "$srv_pct" "$other_pct" "$cpu_us" >>"$summary"
  stop
}

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')  nproc: $(nproc)  cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "wrk -t2 -c$conns -d$dur (after a $warm warm-up), logs in $logdir"
python3 -c 'import sys, fastapi, uvicorn, starlette, pydantic, h11
print("python %s, fastapi %s, uvicorn %s, starlette %s, pydantic %s, h11 %s"
      % (sys.version.split()[0], fastapi.__version__, uvicorn.__version__, starlette.__version__, pydantic.__version__, h11.__version__))'
stacks="h11/asyncio"
if python3 -c 'import uvloop, httptools; print("uvloop %s, httptools %s" % (uvloop.__version__, httptools.__version__))' 2>/dev/null; then
  stacks="$stacks httptools/uvloop"
else
  echo "uvloop/httptools not installed: only the h11/asyncio baseline runs"
fi

if [ -x "$bin" ]; then
  bench rust 1 env -u GPU_ADVISOR_API_TOKEN -u GPU_ADVISOR_WEBHOOK_SECRET -u GPU_ADVISOR_ASK_RATE_PER_MIN \
    GPU_ADVISOR_LISTEN="127.0.0.1:$port" "$root/$bin" serve
else
  echo "== rust: $bin not found (cargo build --release); only the Python side runs"
fi
for s in $stacks; do
  http=${s%/*} loop=${s#*/}
  for w in 1 2; do
    procs=1; [ "$w" -gt 1 ] && procs=$((w + 1))
    bench "python-$http-x$w" "$procs" bash -c 'cd "$1" && exec "$2" baseline:app --host 127.0.0.1 --port "$3" \
      --workers "$4" --http "$5" --loop "$6" --log-level warning' _ \
      "$root/benches/compare" "$uvicorn" "$port" "$w" "$http" "$loop"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
echo "== summary (latency in ms, RSS in MB)"
{
  printf 'server\treq/s\trequests\tavg\tp50\tp99\tmax\tRSS idle\tRSS after\tstart-up ms\ttransferred\tserver CPU %%\tother CPU %%\tCPU µs/req\n'
  cat "$summary"
} | column -t -s $'\t'
rust_rps=$(awk -F'\t' '$1 == "rust" {print $2}' "$summary")
if [ -n "$rust_rps" ]; then
  echo
  rust_cpu=$(awk -F'\t' '$1 == "rust" {print $14}' "$summary")
  awk -F'\t' -v r="$rust_rps" -v c="$rust_cpu" '$1 != "rust" {
    printf "%-20s rust req/s / its req/s: x%.1f   its CPU per request / rust CPU per request: x%.1f\n", $1, r / $2, $14 / c }' "$summary"
fi
