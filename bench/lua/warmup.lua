dofile((os.getenv("BENCH_DIR") or "bench") .. "/lua/common.lua")
-- Warm-up: each user in turn (see walk() in common.lua).
request = function() return walk() end
