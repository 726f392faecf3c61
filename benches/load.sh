#!/usr/bin/env bash
# Load test: 1000 concurrent connections for 30 s against /v1/ask of one release server
# on 127.0.0.1 (rate limiting off, its default). Passes when wrk saw no socket errors and
# no non-2xx responses; prints RSS before and after and the peak.
#   cargo build --release && bash benches/load.sh        (needs wrk: apt-get install wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
port=${PORT:-18081}
dur=${DURATION:-30s}
conns=${CONNECTIONS:-1000}
bin=target/release/gpu-advisor
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
GPU_ADVISOR_LISTEN=127.0.0.1:$port "$bin" serve >/tmp/gpu-advisor-load.log 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
rss() { awk '/VmRSS/ {print $2/1024 " MB"}' /proc/$pid/status; }
echo "RSS before: $(rss)"
out=$(wrk -t2 -c"$conns" -d"$dur" --timeout 10s -s benches/ask.lua "http://127.0.0.1:$port/v1/ask" -- l "how much VRAM to serve Llama-3-8B for 50 users")
echo "$out"
echo "RSS after: $(rss); peak: $(awk '/VmHWM/ {print $2/1024 " MB"}' /proc/$pid/status)"
if grep -qE "Socket errors|Non-2xx" <<<"$out"; then
  echo "FAIL: errors under load"
  exit 1
fi
echo "OK: no errors"
