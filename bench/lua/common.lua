-- Shared by the bench scripts. Environment:
--   BENCH_TOKENS  file of "<userId> <token>" lines (bench/tokens.py)
--   BENCH_ETAGS   file of "<class> <etag>" lines (decision ETag per state class, n % 4)
--   BENCH_QUERY   decision query string (default screen=home&tab=accounts&platform=ios)
-- Each request picks a user uniformly at random and sends that user's own token.
local users, tokens, etags = {}, {}, {}
local query = os.getenv("BENCH_QUERY") or "screen=home&tab=accounts&platform=ios"

local function load()
  for line in io.lines(os.getenv("BENCH_TOKENS")) do
    local u, t = line:match("^(%S+) (%S+)$")
    if u then users[#users + 1] = u; tokens[#tokens + 1] = "Bearer " .. t end
  end
  local ef = os.getenv("BENCH_ETAGS")
  if ef then
    for line in io.lines(ef) do
      local c, e = line:match("^(%d+) (.+)$")
      if c then etags[tonumber(c)] = e end
    end
  end
end

local counter = 0
function setup(thread)
  counter = counter + 1
  thread:set("seed", counter)
end

function init(args)
  load()
  math.randomseed(os.time() * 7919 + (seed or 1))
end

local function pick()
  local i = math.random(#users)
  return users[i], tokens[i]
end
pick_user = pick

function decision(conditional)
  local u, t = pick()
  local headers = { ["Authorization"] = t }
  if conditional then
    local cls = tonumber(u:sub(2)) % 4
    headers["If-None-Match"] = etags[cls]
  end
  return wrk.format("GET", "/v1/users/" .. u .. "/decision?" .. query, headers)
end

function count_put()
  local u, t = pick()
  return wrk.format("PUT", "/v1/users/" .. u .. "/containers/offers-home/count",
    { ["Authorization"] = t, ["Content-Type"] = "application/json" },
    '{"count":' .. math.random(0, 20) .. '}')
end

function dismissal()
  local u, t = pick()
  return wrk.format("POST", "/v1/users/" .. u .. "/dismissals",
    { ["Authorization"] = t, ["Content-Type"] = "application/json" },
    '{"sheetId":"home-offers","method":"swipe"}')
end

-- A card's detail opened over the offers card sheet (the parent cuts the stack back to it, so a
-- user's stack stays two deep however often they open it).
function presentation()
  local u, t = pick()
  return wrk.format("POST", "/v1/users/" .. u .. "/presentations",
    { ["Authorization"] = t, ["Content-Type"] = "application/json" },
    '{"sheetId":"offer-detail","mode":"push","parentSheetId":"home-offers"}')
end

-- The client presented the offers card sheet (a frequency-capped sheet).
function impression()
  local u, t = pick()
  return wrk.format("POST", "/v1/users/" .. u .. "/impressions",
    { ["Authorization"] = t, ["Content-Type"] = "application/json" },
    '{"sheetId":"home-offers"}')
end

-- One JSON line for bench/run.sh: requests, errors, latency percentiles in microseconds.
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH {"requests":%d,"duration_us":%d,"errors":%d,"status_errors":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d}\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end

-- The warm-up: every user's decision in turn from BENCH_WALK_START (so every token and decision was
-- seen once before the measured run, "warm"), then around again.
local next_user = tonumber(os.getenv("BENCH_WALK_START") or "0")
function walk()
  next_user = next_user % #users + 1
  return wrk.format("GET", "/v1/users/" .. users[next_user] .. "/decision?" .. query,
    { ["Authorization"] = tokens[next_user] })
end

function user_count() return #users end
function walk_start() return tonumber(os.getenv("BENCH_WALK_START") or "0") end
