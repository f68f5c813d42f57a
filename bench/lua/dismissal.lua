dofile((os.getenv("BENCH_DIR") or "bench") .. "/lua/common.lua")
-- Dismissals of the offers card sheet.
request = function() return dismissal() end
