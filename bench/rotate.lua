-- wrk script: each request asks get-cve-from-cpe-id for the next of the synthetic
-- corpus's ten hot products (vendor0..9:product0, 500 of ~1 400 CVEs each), in turn,
-- so answers are never repeated back to back and the records of all ten are in play.
local i = 0
request = function()
    local path = string.format("/vulnerability-get-cve-from-cpe-id?cpe=cpe:2.3:a:vendor%d:product0:*", i % 10)
    i = i + 1
    return wrk.format("GET", path)
end
