dofile((os.getenv("BENCH_DIR") or "bench") .. "/lua/common.lua")
-- The mix: 80% decisions, 15% count PUTs, 5% dismissals.
request = function()
  local r = math.random(100)
  if r <= 80 then return decision(false) elseif r <= 95 then return count_put() else return dismissal() end
end
