dofile((os.getenv("BENCH_DIR") or "bench") .. "/lua/common.lua")
-- Events of every kind, each with its own event id (so processed ids are recorded), until
-- BENCH_EVENTS responses came back (the connections' last requests in flight come on top); then it
-- creates the file BENCH_DONE_FILE and sends no more, and bench/growth.sh ends wrk with SIGINT
-- (wrk sleeps out its whole -d otherwise).
-- Kinds in turn: count PUT, dismissal, presentation, impression, content height, each for a user
-- picked at random.
local limit = tonumber(os.getenv("BENCH_EVENTS") or "100000")
local prefix = os.getenv("BENCH_EVENT_PREFIX") or "g"
local sent, answered = 0, 0

request = function()
  sent = sent + 1
  local id = prefix .. sent
  local u, t = pick_user()
  local h = { ["Authorization"] = t, ["Content-Type"] = "application/json" }
  local kind = sent % 5
  if kind == 0 then
    return wrk.format("PUT", "/v1/users/" .. u .. "/containers/offers-home/count", h,
      '{"count":' .. math.random(0, 20) .. ',"eventId":"' .. id .. '"}')
  elseif kind == 1 then
    return wrk.format("POST", "/v1/users/" .. u .. "/dismissals", h,
      '{"sheetId":"home-offers","method":"swipe","eventId":"' .. id .. '"}')
  elseif kind == 2 then
    return wrk.format("POST", "/v1/users/" .. u .. "/presentations", h,
      '{"sheetId":"offer-detail","mode":"push","parentSheetId":"home-offers","eventId":"' .. id .. '"}')
  elseif kind == 3 then
    return wrk.format("POST", "/v1/users/" .. u .. "/impressions", h,
      '{"sheetId":"home-offers","eventId":"' .. id .. '"}')
  else
    return wrk.format("PUT", "/v1/users/" .. u .. "/sheets/offer-detail/content-height", h,
      '{"platform":"ios","height":' .. math.random(200, 700) .. ',"eventId":"' .. id .. '"}')
  end
end

local done_file = os.getenv("BENCH_DONE_FILE")
response = function(status, headers, body)
  answered = answered + 1
  if answered == limit and done_file then io.open(done_file, "w"):close() end
  if answered >= limit then wrk.thread:stop() end
end
