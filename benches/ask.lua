-- wrk script: POST /v1/ask with the same six questions in turn, each a new conversation.
--   wrk ... -s benches/ask.lua http://HOST/v1/ask -- PREFIX [EXTRA QUESTION ...]
-- PREFIX starts every conversation id; extra questions join the six.
-- The first PREBUILT requests of each thread are formatted before the clock starts, so
-- that the load generator (on the same cores as the server) spends its time sending, not
-- formatting strings in Lua; later ones are formatted as they go.
local qs = {"微调 Qwen-14B 要什么卡?", "4090 能跑 70B 吗", "预算三千五能干嘛", "A100 和 H100 怎么选", "NVLink 是什么", "T4 一年多少钱"}
local prefix = "c"
local n = 0
local PREBUILT = 300000
local prebuilt = {}
-- Every wrk thread runs its own copy of this script with the same random seed: the
-- thread number keeps conversation ids distinct across threads.
local threads = 0
function setup(thread) threads = threads + 1; thread:set("tid", threads) end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local function build(i)
  local body = string.format('{"text":"%s","conversation":"%s%d-%d"}', qs[(i % #qs) + 1], prefix, tid, i)
  return wrk.format(nil, "/v1/ask", nil, body)
end
function init(args)
  if args[1] then prefix = args[1] end
  for i = 2, #args do qs[#qs + 1] = args[i] end
  for i = 1, PREBUILT do prebuilt[i] = build(i) end
end
request = function()
  n = n + 1
  return prebuilt[n] or build(n)
end
