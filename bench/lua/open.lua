dofile((os.getenv("BENCH_DIR") or "bench") .. "/lua/common.lua")
-- Presentations: the offer's detail opened over the offers card sheet.
request = function() return presentation() end
