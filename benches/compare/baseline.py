"""Baseline for benches/compare/compare.sh: the same `POST /v1/ask` route written the way
a typical small Python service (FastAPI + uvicorn) and the public "VRAM calculator" pages
do it.

    cd benches/compare && uvicorn baseline:app --host 127.0.0.1 --port 18091 \
        --workers 1 --log-level warning

What it does per question:
  1. regexes pull a parameter count ("70B", "Qwen-14B", "7b", "70亿") and a weight
     precision (fp16/bf16 by default; fp32, int8, fp8, int4 when named) out of the text;
  2. the rule of thumb  M = P * 4 bytes / (32 / Q) * 1.2  (weights times 1.2, e.g. the
     widely cited "Calculating GPU memory for serving LLMs"), in GB of 10^9 bytes;
  3. the cheapest configuration of the project's catalog (catalog/offers.toml priced
     per unit, catalog/gpus.toml for card memory, read once at start-up with tomllib)
     whose memory holds M; domestic (信创) offers are skipped, as the catalog says they
     are recommended only when asked for;
  4. if a card from catalog/gpus.toml is named, whether M fits on one of it;
  5. a JSON reply with the card, the estimate and a one-line text reply.

It deliberately does LESS than the Rust service, so the comparison favours this side:
  - no conversation store (the `conversation` field is accepted and ignored);
  - no intent/topic/FAQ matching, no model catalog lookup (a size in the text is all it
    uses), no KV cache / activations / training memory, no step-downs or alternatives;
  - no bilingual render: one short Chinese sentence, not the Rust service's markdown
    reply (its JSON is ~2-4 KB, this one is ~0.4 KB);
  - no auth, no metrics, no rate limit, no request log.
Questions with no parameter count get a 200 with `estimate: null` and a fixed hint.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel

CATALOG = Path(os.environ.get("CATALOG_DIR", Path(__file__).resolve().parents[2] / "catalog"))


def _load_catalog(root: Path):
    gpus = tomllib.loads((root / "gpus.toml").read_text(encoding="utf-8"))["gpu"]
    offers = tomllib.loads((root / "offers.toml").read_text(encoding="utf-8"))["offer"]
    mem = {g["id"]: float(g["memory_gb"]) for g in gpus}
    # Every (offer, count) the catalog allows, cheapest first: total memory, price range.
    configs = []
    for o in offers:
        if o.get("domestic", False):
            continue
        if o["unit"] == "slice":
            per_unit = float(o["slice_memory_gb"])
        else:
            per_unit = mem[o["gpu"]] * o.get("cards_per_unit", 1)
        for n in o["counts"]:
            configs.append({
                "offer": o["id"],
                "gpu": o["gpu"],
                "count": n,
                "vram_gb": per_unit * n,
                "monthly_cny": {"min": o["price"]["min"] * n, "max": o["price"]["max"] * n},
                "estimated_price": o.get("estimated", False),
                "name": o["name_zh"],
            })
    configs.sort(key=lambda c: (c["monthly_cny"]["min"], c["vram_gb"]))
    # Card names for "4090 能跑 70B 吗": one alternation, longest alias first so "a100 80g"
    # beats "a100"; not inside a longer word ("t4" in "int4", "h20" in "h200").
    alias_id = {a.lower(): g["id"] for g in gpus for a in g["aliases"]}
    names = "|".join(re.escape(a) for a in sorted(alias_id, key=len, reverse=True))
    return mem, configs, alias_id, re.compile(rf"(?<![a-z0-9])(?:{names})(?![a-z0-9])")


GPU_MEM, CONFIGS, GPU_ALIAS_ID, GPU_NAME = _load_catalog(CATALOG)

# "70B", "Qwen-14B", "1.5b", "70 b" -- a number directly followed by b/B, not by a letter
# (so "40GB" and "8bit" do not match); "70亿" = 7B.
PARAMS_B = re.compile(r"(\d+(?:\.\d+)?)\s*b(?![a-z])")
PARAMS_YI = re.compile(r"(\d+(?:\.\d+)?)\s*亿")
INT4 = re.compile(r"int4|4\s*-?bit|q4|awq|gptq|nf4|量化")
INT8 = re.compile(r"int8|8\s*-?bit|q8")
FP8 = re.compile(r"fp8")
FP32 = re.compile(r"fp32|float32|32\s*-?bit")


def estimate_gb(params_b: float, bits: int) -> float:
    """M = P * 4B / (32 / Q) * 1.2, with P in billions and M in GB (10^9 bytes)."""
    return params_b * 4 / (32 / bits) * 1.2


class Ask(BaseModel):
    text: str
    conversation: str | None = None  # accepted, not used: no conversation store


app = FastAPI()


@app.get("/healthz", response_class=PlainTextResponse)
async def healthz() -> str:
    return "ok"


@app.post("/v1/ask")
async def ask(req: Ask) -> dict:
    t = req.text.lower()
    m = PARAMS_B.search(t)
    params_b = float(m.group(1)) if m else None
    if params_b is None and (m := PARAMS_YI.search(t)):
        params_b = float(m.group(1)) / 10
    if INT4.search(t):
        precision, bits = "int4", 4
    elif INT8.search(t):
        precision, bits = "int8", 8
    elif FP8.search(t):
        precision, bits = "fp8", 8
    elif FP32.search(t):
        precision, bits = "fp32", 32
    else:
        precision, bits = "bf16", 16
    g = GPU_NAME.search(t)
    gpu = GPU_ALIAS_ID[g.group(0)] if g else None

    if params_b is None:
        return {
            "workload": None, "estimate": None, "verdict": None, "recommendation": None,
            "reply": "请告诉我模型大小（如 70B）和精度（fp16/int8/int4），我来估算显存并推荐显卡。",
        }

    need = round(estimate_gb(params_b, bits), 1)
    rec = next((c for c in CONFIGS if c["vram_gb"] >= need), None)
    verdict = None
    if gpu is not None:
        verdict = {"gpu": gpu, "count": 1, "fits": GPU_MEM[gpu] >= need,
                   "needed_gb": need, "available_gb": GPU_MEM[gpu]}

    parts = [f"{params_b:g}B 模型 {precision} 约需 {need:g} GB 显存（权重 × 1.2）。"]
    if verdict is not None:
        parts.append(f"单张 {gpu} 有 {verdict['available_gb']:g} GB，"
                     + ("够用。" if verdict["fits"] else "放不下。"))
    if rec is not None:
        price = rec["monthly_cny"]
        cost = (f"¥{price['min']:g}" if price["min"] == price["max"]
                else f"¥{price['min']:g}–{price['max']:g}")
        parts.append(f"推荐 {rec['name']} × {rec['count']}（{rec['vram_gb']:g} GB），{cost}/月。")
        rec = {k: v for k, v in rec.items() if k != "name"} | {"precision": precision,
                                                                "needed_gb": need}
    else:
        parts.append("目录里没有放得下的配置。")
    return {
        "workload": {"params_b": params_b, "precision": precision},
        "estimate": {"total_gb": need},
        "verdict": verdict,
        "recommendation": rec,
        "reply": "".join(parts),
    }
