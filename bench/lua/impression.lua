dofile((os.getenv("BENCH_DIR") or "bench") .. "/lua/common.lua")
-- Impressions of the offers card sheet.
request = function() return impression() end
