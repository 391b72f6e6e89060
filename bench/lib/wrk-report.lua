-- wrk script for bench/lib/load.mjs: optional method/body from the environment, and a machine-readable summary
-- (plus wrk's own CPU time from /proc/self/stat) printed after the run.
local method = os.getenv("BENCH_METHOD")
if method and method ~= "" then
  wrk.method = method
end
local body_file = os.getenv("BENCH_BODY_FILE")
if body_file and body_file ~= "" then
  local f = assert(io.open(body_file, "rb"))
  wrk.body = f:read("*a")
  f:close()
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"durationUs":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latencyUs":{"mean":%.2f,"p50":%d,"p90":%d,"p99":%d,"max":%d}}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
  local f = io.open("/proc/self/stat", "r")
  if f then
    io.write("BENCH_STAT " .. f:read("*l") .. "\n")
    f:close()
  end
end
