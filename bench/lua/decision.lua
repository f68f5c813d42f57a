dofile((os.getenv("BENCH_DIR") or "bench") .. "/lua/common.lua")
-- Decision GETs, unconditional (200 with the full body).
request = function() return decision(false) end
