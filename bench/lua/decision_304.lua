dofile((os.getenv("BENCH_DIR") or "bench") .. "/lua/common.lua")
-- Decision GETs with the current ETag in If-None-Match (304, no body).
request = function() return decision(true) end
