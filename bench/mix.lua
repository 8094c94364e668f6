-- A mix of operations for bench/load.sh: each request takes the next path in turn
-- (companies, scores, CVE lookups, a search, a page past the end, an unknown company).
local paths = {
  "/underwriter-getcompanyscores?social_id=acme-robotics",
  "/general-getsocialid-by-domain?domain=acme-robotics.example",
  "/underwriter-getcompanyinfo?social_id=acme-robotics-labs",
  "/vulnerability-describe-cve-id?cve_id=CVE-2021-44228",
  "/vulnerability-get-cve-from-cpe-id?cpe=cpe:2.3:a:apache:log4j:2.14.1",
  "/general-getsocialid-by-companyname?company_name=acme",
  "/underwriter-getcompanysubscores?social_id=acme-robotics",
  "/underwriter-getlastcompaniesscanned?page=3",
  "/monitor-getcompanyscores",
  "/monitor-get-incident-prediction?period=12",
}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % #paths) + 1])
end
