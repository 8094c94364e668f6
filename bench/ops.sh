# The operations the API benchmarks request (sourced by bench/api-sweep.sh and
# bench/cpu-compare.sh; `$cpe` is set by the caller).
# method path [body]; monitor-* paths use the monitor key.
ops=(
    "GET /general-getdomain-by-socialid?social_id=kestrel-logistics"
    "GET /general-getsocialid-by-companyname?company_name=kestrel"
    "GET /general-getsocialid-by-domain?domain=kestrelfreight.test"
    "GET /vulnerability-describe-cve-id?cve_id=CVE-2014-0160"
    "GET /vulnerability-get-cve-from-cpe-id?cpe=$cpe"
    "GET /vulnerability-get-last"
    "GET /vulnerability-get-product-by-vendor?vendor=apache"
    "GET /vulnerability-get-vendors"
    "GET /vulnerability-search-by-vendor?vendor=openbsd&product=openssh"
    "GET /underwriter-getcompany-history?social_id=kestrel-logistics"
    "GET /underwriter-getcompany-history-domain?domain=kestrelfreight.test"
    "GET /underwriter-getcompanyapplicationsassets?social_id=kestrel-logistics"
    "GET /underwriter-getcompanyinfo?social_id=kestrel-logistics"
    "GET /underwriter-getcompanyinfrastructureassets?social_id=kestrel-logistics"
    "GET /underwriter-getcompanysbom?social_id=kestrel-logistics"
    "GET /underwriter-getcompanysbomcve?social_id=kestrel-logistics"
    "GET /underwriter-getcompanysbomdomain?social_id=kestrel-logistics&domain=kestrelfreight.test"
    "GET /underwriter-getcompanyscore-history?social_id=kestrel-logistics"
    "GET /underwriter-getcompanyscores?social_id=kestrel-logistics"
    "GET /underwriter-getcompanystats?social_id=kestrel-logistics"
    "GET /underwriter-getcompanysubscores?social_id=kestrel-logistics"
    "GET /underwriter-getincidentdetail-by-id?incident_id=LAB-INC-2024-0005"
    "GET /underwriter-getlastcompaniesscanned"
    "GET /monitor-get-data-loss-prediction"
    "GET /monitor-get-incident-prediction"
    "GET /monitor-get-subdomain-findings?subdomain=kestrelfreight.test&risk_vector_type=DMARC"
    "GET /monitor-get-tail-risk-estimation"
    "GET /monitor-getall-subdomain-findings?subdomain=kestrelfreight.test"
    "GET /monitor-getall-vulnerability-detection"
    "GET /monitor-getcompany-history"
    "GET /monitor-getcompanyapplicationsassets"
    "GET /monitor-getcompanyinfo"
    "GET /monitor-getcompanyinfrastructureassets"
    "GET /monitor-getcompanysbom"
    "GET /monitor-getcompanysbomcve"
    "GET /monitor-getcompanysbomdomain?domain=kestrelfreight.test"
    "GET /monitor-getcompanyscores"
    "GET /monitor-getcompanystats"
    "GET /monitor-getcompanysubscores"
    "GET /monitor-getcompanysubsidiaries"
    "GET /monitor-listsubsidiaries"
    'POST /monitor-add-subsidiary {"name":"Kestrel Air Cargo","website":"https://www.kestrelaircargo.test/","employees":40,"followers":900,"industry":"Air Transportation","sub_industry":"Cargo","social_id":"kestrel-aircargo","parent_company_name":"Kestrel Freight Logistics","parent_social_id":"kestrel-logistics"}'
    "PUT /monitor-rescan-subdomain-by-vectorid?risk_vector_id=SPF&subdomain=kestrelfreight.test"
    "DELETE /monitor-delete-subsidiary?subsidiary_id=kestrel-aircargo"
)

# op_parts OP: sets `method`, `path` and `body` of one entry of `ops`, and `k`, the key
# it is asked with (`$mkey` for monitor-* paths, `$key` otherwise).
op_parts() {
    method=${1%% *}
    local rest=${1#* }
    path=${rest%% *}
    body=""
    [ "$rest" != "$path" ] && body=${rest#* }
    k=$key
    case $path in /monitor-*) k=$mkey ;; esac
}

# wrk_script METHOD KEY BODY FILE: writes the wrk Lua script of one request to FILE.
wrk_script() {
    {
        printf 'wrk.method = "%s"\n' "$1"
        printf 'wrk.headers["apikey"] = "%s"\n' "$2"
        if [ -n "$3" ]; then
            printf 'wrk.headers["Content-Type"] = "application/json"\n'
            printf 'wrk.body = [[%s]]\n' "$3"
        fi
    } >"$4"
}
