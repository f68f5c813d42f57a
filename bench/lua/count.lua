dofile((os.getenv("BENCH_DIR") or "bench") .. "/lua/common.lua")
-- Count PUTs (each acknowledged after its commit).
request = function() return count_put() end
