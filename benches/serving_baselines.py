#!/usr/bin/env python3
"""Baselines for BENCHMARKS.md's serving table: on every row of shared/serving.jsonl, what
an uncalibrated roofline and the old single-stream formula give, beside the product.

For each row, `BIN ask --json QUESTION` gives the configuration the product serves on
(serving.gpu, count, input/output tokens, KV bytes, concurrency) and the memory bill; the
roofline then uses catalog/gpus.toml alone: decode = cards x bandwidth / bytes read per
token (weights read once, active share for MoE, plus the sequence's KV); KV capacity =
(cards x memory - weights) / KV bytes per token, no engine reserve; TTFT = 2 x active
params x input / (cards x dense peak); throughput and per-user speed from one step of the
batch at max(memory time, compute time). `--old BIN` is a build of the previous release,
whose estimate.decode_tokens_per_s is the old formula (every card of the rented machine at
60 % of bandwidth); it has no serving object. Prints per field the median and worst |error|.

    python3 benches/serving_baselines.py ../shared/serving.jsonl --bin BIN --old OLD_BIN
"""
import argparse, json, statistics, subprocess, tomllib

ap = argparse.ArgumentParser()
ap.add_argument("file")
ap.add_argument("--bin", default="target/release/gpu-advisor")
ap.add_argument("--old")
ap.add_argument("--old-cwd", default=".")
a = ap.parse_args()
gpus = {g["id"]: g for g in tomllib.load(open("catalog/gpus.toml", "rb"))["gpu"]}


def ask(binary, q, cwd="."):
    p = subprocess.run([binary, "ask", "--json", q], capture_output=True, text=True, cwd=cwd, timeout=30)
    return json.loads(p.stdout)


def roofline(j, field):
    s, w, e = j.get("serving"), j.get("workload"), j.get("estimate")
    if not s or not w or not e:
        return None
    g, n = gpus[s["gpu"]], s["count"]
    share = w["active_params_b"] / w["params_b"]
    weights = e["weights_gb"] * 1e9
    kv = s["kv_bytes_per_token"]
    i, o = s["input_tokens"], s["output_tokens"]
    bw = g["bandwidth_gbs"] * 1e9 * n
    peak = (g["fp8_tflops"] if w["precision"] == "fp8" and g["fp8_tflops"] else g["fp16_tflops"]) * 1e12 * n
    flops = 2 * w["active_params_b"] * 1e9
    cap = max(0.0, n * g["memory_gb"] * 1e9 - weights) / kv
    c = max(1.0, s["concurrency"])
    step = max((weights * share + c * (i + o / 2) * kv) / bw, c * flops / peak)
    return {
        "serving.decode_tokens_per_s": bw / (weights * share + (i + o / 2) * kv),
        "estimate.decode_tokens_per_s": bw / (weights * share + (i + o / 2) * kv),
        "serving.kv_bytes_per_token": kv,
        "serving.kv_capacity_tokens": cap,
        "serving.max_concurrency": cap / (i + o),
        "serving.max_context_tokens": cap,
        "serving.ttft_s": flops * i / peak,
        "serving.throughput_tokens_per_s": c / step,
        "serving.per_user_tokens_per_s": 1 / step,
    }[field]


def lookup(obj, path):
    for k in path.split("."):
        obj = obj.get(k) if isinstance(obj, dict) else None
    return obj if isinstance(obj, (int, float)) and not isinstance(obj, bool) else None


cols = {"product": {}, "roofline": {}, "old": {}}
for line in open(a.file, encoding="utf-8"):
    if not line.strip():
        continue
    r = json.loads(line)
    f, m = r["field"], r["measured"]
    j = ask(a.bin, r["question"])
    got = {"product": lookup(j, f), "roofline": roofline(j, f)}
    if a.old:
        old = ask(a.old, r["question"], a.old_cwd)
        got["old"] = lookup(old, "estimate.decode_tokens_per_s") if f.endswith("decode_tokens_per_s") else None
    for k, v in got.items():
        cols[k].setdefault(f, []).append(1.0 if v is None else abs(v - m) / m)

print("| field | rows | product median | product worst | roofline median | roofline worst | old median | old worst |")
print("|---|---|---|---|---|---|---|---|")
for f in sorted(cols["product"]):
    row = [f, str(len(cols["product"][f]))]
    for k in ("product", "roofline", "old"):
        e = cols[k].get(f)
        row += [f"{statistics.median(e):.1%}", f"{max(e):.1%}"] if e else ["—", "—"]
    print("| " + " | ".join(row) + " |")
