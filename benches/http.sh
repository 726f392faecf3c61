#!/usr/bin/env bash
# wrk against /v1/ask and /healthz of one release server on 127.0.0.1, then memory:
# idle RSS and RSS after 100 000 distinct conversations in the memory store.
#   cargo build --release && bash benches/http.sh        (needs wrk: apt-get install wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
port=${PORT:-18080}
dur=${DURATION:-4s}
conns=${CONNECTIONS:-64}
bin=${BIN:-target/release/gpu-advisor}
# The server and wrk would otherwise compete for the same cores, and the split between
# them (not the server's work) would decide the figures: with two or more cores the
# server gets CPU 0 (one runtime worker) and wrk the others. PIN=0 shares all cores.
server=() load=(wrk -t2)
if [ "${PIN:-1}" = 1 ] && [ "$(nproc)" -ge 2 ]; then
  server=(env TOKIO_WORKER_THREADS=1 taskset -c 0)
  load=(taskset -c "1-$(($(nproc) - 1))" wrk -t"$(($(nproc) - 1))")
fi
GPU_ADVISOR_LISTEN=127.0.0.1:$port "${server[@]}" "$bin" serve >/tmp/gpu-advisor-bench.log 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
rss() { awk '/VmRSS/ {print $2/1024 " MB"}' /proc/$pid/status; }
echo "idle RSS: $(rss)"

ask=${ASK:-benches/ask.lua}
lua=$(mktemp --suffix .lua)
# The machine's speed moves (by up to 2x, over seconds to minutes) with what else runs
# on its host. Short runs alternate, /healthz first and last (h0 a1 h1 a2 ... aN hN):
# each /v1/ask run is compared with the mean of the /healthz runs just before and after
# it, so that a steady drift in speed cancels out; the figure is all /v1/ask requests
# against the same bracketing mean of /healthz over all rounds, with each round's ratio
# and their median beside it.
rps() { awk '/Requests\/sec/ {print $2}'; }
# The server's own CPU time (user + system, in clock ticks) and requests served, per
# route: its CPU per request does not depend on how busy the load generator is.
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
served() { awk '/requests in/ {print $1}'; }
hz=$(getconf CLK_TCK)
cpu_h=0 cpu_a=0 n_h=0 n_a=0
healthz() {
  echo "== /healthz"
  local t0
  t0=$(ticks)
  "${load[@]}" -c"$conns" -d"$dur" "http://127.0.0.1:$port/healthz" | tee /tmp/gpu-advisor-wrk-h
  cpu_h=$((cpu_h + $(ticks) - t0)) n_h=$((n_h + $(served </tmp/gpu-advisor-wrk-h)))
  h_rps=$(rps </tmp/gpu-advisor-wrk-h)
}
# Round i's /v1/ask rate and the /healthz rates before and after it, one line each.
rounds=$(mktemp)
healthz
before=$h_rps
for round in $(seq "${ROUNDS:-10}"); do
  echo "== round $round: /v1/ask"
  t0=$(ticks)
  "${load[@]}" -c"$conns" -d"$dur" -s "$ask" "http://127.0.0.1:$port/v1/ask" -- "r$round-" | tee /tmp/gpu-advisor-wrk-a
  cpu_a=$((cpu_a + $(ticks) - t0)) n_a=$((n_a + $(served </tmp/gpu-advisor-wrk-a)))
  a=$(rps </tmp/gpu-advisor-wrk-a)
  healthz
  after=$h_rps
  echo "$before $a $after" >>"$rounds"
  awk -v r="$round" -v b="$before" -v a="$a" -v c="$after" \
    'BEGIN {printf "round %d: /v1/ask %.0f req/s, /healthz %.0f before and %.0f after: %.0f %%\n", r, a, b, c, 200 * a / (b + c)}'
  before=$after
done
awk '{a += $2; h += ($1 + $3) / 2} END {printf "all rounds: /v1/ask / /healthz = %.0f %%\n", 100 * a / h}' "$rounds"
awk '{print 200 * $2 / ($1 + $3)}' "$rounds" | sort -n | awk '{r[NR] = $1} END {
  printf "median round: %.0f %% (lowest %.0f %%, highest %.0f %%)\n", (r[int((NR + 1) / 2)] + r[int(NR / 2) + 1]) / 2, r[1], r[NR] }'
rm -f "$rounds"
awk -v ch="$cpu_h" -v ca="$cpu_a" -v nh="$n_h" -v na="$n_a" -v hz="$hz" 'BEGIN {
  h = 1e6 * ch / hz / nh; a = 1e6 * ca / hz / na
  printf "server CPU per request: /healthz %.1f us, /v1/ask %.1f us (/healthz / /v1/ask = %.0f %%)\n", h, a, 100 * h / a }'
echo "RSS after the /v1/ask run: $(rss)"

# 100 000 distinct conversations.
cat >"$lua" <<'LUA'
local n = 0
-- Every wrk thread runs its own copy of this script with the same random seed: the
-- thread number keeps conversation ids distinct across threads.
local threads = 0
function setup(thread) threads = threads + 1; thread:set("tid", threads) end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  n = n + 1
  local body = string.format('{"text":"3090 能跑 13B 吗","conversation":"m%d-%d"}', n, tid)
  return wrk.format(nil, "/v1/ask", nil, body)
end
LUA
"${load[@]}" -c8 -d"${FILL:-20s}" -s "$lua" "http://127.0.0.1:$port/v1/ask" | grep -E "requests in|Requests/sec"
echo "RSS with the memory store full of conversations: $(rss)"
curl -fsS "http://127.0.0.1:$port/metrics" | grep -E '^gpu_advisor_questions_total\{channel="http",intent="(feasibility|recommend)"\}'
rm -f "$lua"
