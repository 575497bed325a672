-- Replays a file of pre-signed webhook requests, one line each:
--   webhook-id <TAB> webhook-timestamp <TAB> webhook-signature <TAB> body
-- Every request is formatted once, before the clock starts (wrk runs init before timing), so
-- the load generator spends its core sending, not signing or formatting.
-- Usage: wrk -s presigned.lua URL -- <file> <path>
-- With several threads, thread k sends lines k, k+T, k+2T, ...: no two threads repeat a delivery.
-- If a thread runs out it starts over (counted as `wraps`: redeliveries, cheaper for a deduping
-- server, so a run with wraps > 0 is not a fair measure of one).

local threads = {}
local thread_count = 0

function setup(thread)
  thread_count = thread_count + 1
  thread:set("thread_index", thread_count - 1)
  table.insert(threads, thread)
end

local requests = {}
local counter = 0
wraps = 0

function init(args)
  local file, path = args[1], args[2]
  local step = 1
  local index = thread_index or 0
  local total = tonumber(args[3]) or 1
  local n = 0
  for line in io.lines(file) do
    if n % total == index then
      local id, ts, sig, body = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$")
      requests[#requests + 1] = wrk.format("POST", path, {
        ["Content-Type"] = "application/json",
        ["webhook-id"] = id,
        ["webhook-timestamp"] = ts,
        ["webhook-signature"] = sig,
      }, body)
    end
    n = n + 1
  end
end

function request()
  counter = counter + 1
  if counter > #requests then
    counter = 1
    wraps = wraps + 1
  end
  return requests[counter]
end

function done(summary, latency, requests_stats)
  local total_wraps = 0
  for _, thread in ipairs(threads) do
    total_wraps = total_wraps + (thread:get("wraps") or 0)
  end
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"maxUs":%d,"connectErrors":%d,"readErrors":%d,"writeErrors":%d,"timeouts":%d,"non2xx":%d,"wraps":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.timeout, e.status, total_wraps))
end
