dofile((os.getenv("BENCH_DIR") or "bench") .. "/lua/common.lua")
-- Warm-up: each user's decision in turn from BENCH_WALK_START (see walk() in common.lua); stops
-- once the walk reached the last user. bench/run.sh runs it in 1 s pieces, each continuing where the
-- last one stopped, until every user was answered once: warm however fast or slow the machine is.
local answered = 0
request = function() return walk() end
response = function(status, headers, body)
  answered = answered + 1
  if answered >= user_count() - walk_start() then wrk.thread:stop() end
end
