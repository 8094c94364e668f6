//! web_headers: the response headers of one assessable origin, judged the way the
//! Mozilla HTTP Observatory judges them (HSTS, CSP, X-Content-Type-Options, framing,
//! Referrer-Policy, Permissions-Policy, cookies, CORS, Subresource Integrity, version
//! disclosure), plus the HTTP→HTTPS redirect. An origin is assessed only when `/`
//! answered 2xx with a page that is not a parked or default page (docs/FINDINGS.md,
//! Scope); everything else is "not assessable" and yields nothing.

use model::RiskVector;
use reqwest::header::HeaderMap;

use super::Judged;
use crate::check::{self, Check};
use crate::finding::ScanFinding;
use crate::gather::{Observations, VisitSeen};
use crate::probes::headers::{Front, PROBE_ORIGIN, assessable, parked_or_default};

/// HSTS max-age below this (180 days) is short.
const HSTS_MIN: u64 = 15_552_000;
/// The name of the check of one origin's headers.
pub const CHECK: &str = "security headers";
/// What an origin without findings showed.
pub const OBSERVED: &str = "every header the method asks for";

/// The headers check of one web origin's front page, and its findings. A front page
/// that is not an application (an error status, a parked or default page) leaves the
/// headers not assessable.
pub fn origin(front: &Front, host: &str) -> (Vec<ScanFinding>, Check) {
    let origin = front.origin.as_str();
    if assessable(front) {
        let found = assess(front, host);
        let check = judged(origin, &found);
        return (found, check);
    }
    let why = match parked_or_default(&front.body) {
        Some(what) if (200..300).contains(&front.status) => {
            format!("the front page is {what}: no application to judge")
        }
        _ => format!("the front page answered {}: no application to judge", front.status),
    };
    (Vec::new(), not_assessable(origin, why))
}

/// The headers check of `origin` from the findings it raised.
pub fn judged(origin: &str, found: &[ScanFinding]) -> Check {
    check::judged(RiskVector::WebHeaders, CHECK, origin, found, OBSERVED)
}

/// The headers check of `origin` when it could not be made, and why.
pub fn not_assessable(origin: &str, why: impl Into<String>) -> Check {
    Check::not_assessable(RiskVector::WebHeaders, CHECK, origin, why)
}

/// A visited host: its front page's headers, and the redirect of `http://H/` when H
/// serves HTTPS too.
pub fn visit(seen: &VisitSeen, out: &mut Judged) {
    let v = &seen.visit;
    if let Some(front) = &v.front {
        out.add(origin(front, &v.host));
    }
    if let Some((status, location)) = &v.plain_http
        && v.https()
    {
        out.findings.extend(redirect_finding(&format!("http://{}", v.host), *status, location.as_deref()));
    }
}

/// The hosts not reached, then the web origins on other ports.
pub fn rest(obs: &Observations, out: &mut Judged) {
    for (host, refusal) in &obs.unreached {
        out.checks.push(Check::unreached(RiskVector::WebHeaders, CHECK, host, refusal.to_string()));
    }
    for o in &obs.other_origins {
        out.add(origin(&o.front, &o.host));
    }
}

fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok()).map(str::trim)
}

/// The directive `name` of a CSP header (its source list, lower case).
fn directive<'a>(csp: &'a str, name: &str) -> Option<Vec<&'a str>> {
    csp.split(';').map(str::trim).find_map(|d| {
        let mut parts = d.split_whitespace();
        parts.next().filter(|n| n.eq_ignore_ascii_case(name)).map(|_| parts.collect())
    })
}

/// A version number in a header value (`nginx/1.18.0`, `PHP/7.4.3`, `4.0.30319`).
fn has_version(value: &str) -> bool {
    value.split(|c: char| c == '/' || c.is_whitespace() || c == '(').any(|w| {
        let w = w.trim_start_matches(['v', 'V']);
        w.starts_with(|c: char| c.is_ascii_digit()) && w.contains('.')
    })
}

/// The `<script src>` URLs of a page that load from another host without `integrity`.
fn scripts_without_sri(body: &str, host: &str) -> Vec<String> {
    let lower = body.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = lower[at..].find("<script") {
        let start = at + i;
        let end = lower[start..].find('>').map_or(lower.len(), |e| start + e);
        let tag = &body[start..end];
        let tag_lower = &lower[start..end];
        at = end.max(start + 7);
        if tag_lower.contains("integrity=") {
            continue;
        }
        for h in crate::discovery::link_hosts(tag) {
            if h != host {
                let src = tag_lower.find("src=").map(|s| {
                    tag[s + 4..]
                        .trim_matches(|c| c == '"' || c == '\'')
                        .split(['"', '\'', ' '])
                        .next()
                        .unwrap_or("")
                        .to_owned()
                });
                out.push(src.unwrap_or(h));
            }
        }
    }
    out
}

/// The findings of an assessable origin.
pub fn assess(front: &Front, host: &str) -> Vec<ScanFinding> {
    let mut out = Vec::new();
    let origin = front.origin.as_str();
    let h = &front.headers;
    let f = |code: &str, evidence: String| ScanFinding::new(code, origin, evidence);
    if front.https {
        match header(h, "strict-transport-security") {
            None => out.push(f("web_headers.hsts_missing", "no Strict-Transport-Security header".into())),
            Some(v) => {
                let max_age = v.split(';').find_map(|p| {
                    let (k, val) = p.trim().split_once('=')?;
                    k.trim()
                        .eq_ignore_ascii_case("max-age")
                        .then(|| val.trim().trim_matches('"').parse::<u64>().ok())
                        .flatten()
                });
                if max_age.is_none_or(|a| a < HSTS_MIN) {
                    out.push(f(
                        "web_headers.hsts_short_max_age",
                        format!("Strict-Transport-Security: {v} (below {HSTS_MIN} s)"),
                    ));
                }
            }
        }
    }
    let csp = header(h, "content-security-policy");
    match csp {
        None => out.push(f("web_headers.csp_missing", "no Content-Security-Policy header".into())),
        Some(csp) => {
            let scripts = directive(csp, "script-src").or_else(|| directive(csp, "default-src")).unwrap_or_default();
            let lowered: Vec<String> = scripts.iter().map(|s| s.to_ascii_lowercase()).collect();
            let nonce_or_hash = lowered.iter().any(|s| s.starts_with("'nonce-") || s.starts_with("'sha"));
            if lowered.iter().any(|s| s == "'unsafe-inline'") && !nonce_or_hash {
                out.push(f(
                    "web_headers.csp_unsafe_inline",
                    format!("script-src allows 'unsafe-inline': {}", scripts.join(" ")),
                ));
            }
            if lowered.iter().any(|s| s == "'unsafe-eval'") {
                out.push(f(
                    "web_headers.csp_unsafe_eval",
                    format!("script-src allows 'unsafe-eval': {}", scripts.join(" ")),
                ));
            }
        }
    }
    if !header(h, "x-content-type-options").is_some_and(|v| v.eq_ignore_ascii_case("nosniff")) {
        out.push(f(
            "web_headers.xcto_missing",
            format!("X-Content-Type-Options: {}", header(h, "x-content-type-options").unwrap_or("(absent)")),
        ));
    }
    let xfo = header(h, "x-frame-options")
        .is_some_and(|v| v.eq_ignore_ascii_case("deny") || v.eq_ignore_ascii_case("sameorigin"));
    let ancestors = csp.is_some_and(|c| directive(c, "frame-ancestors").is_some());
    if !xfo && !ancestors {
        out.push(f("web_headers.frame_protection_missing", "neither X-Frame-Options nor CSP frame-ancestors".into()));
    }
    match header(h, "referrer-policy") {
        None => out.push(f("web_headers.referrer_policy_missing", "no Referrer-Policy header".into())),
        Some(v) => {
            // With several values, the last one the browser knows applies.
            let last = v.split(',').map(|p| p.trim().to_ascii_lowercase()).rfind(|p| !p.is_empty()).unwrap_or_default();
            if last == "unsafe-url" || last == "no-referrer-when-downgrade" {
                out.push(f("web_headers.referrer_policy_unsafe", format!("Referrer-Policy: {v}")));
            }
        }
    }
    if header(h, "permissions-policy").is_none() {
        out.push(f("web_headers.permissions_policy_missing", "no Permissions-Policy header".into()));
    }
    // Cookies: one finding per missing attribute, naming every cookie.
    let mut no_secure = Vec::new();
    let mut no_httponly = Vec::new();
    let mut no_samesite = Vec::new();
    for cookie in h.get_all("set-cookie").iter().filter_map(|v| v.to_str().ok()) {
        let mut parts = cookie.split(';').map(str::trim);
        let name = parts.next().and_then(|nv| nv.split_once('=')).map_or("", |(n, _)| n).to_owned();
        let attrs: Vec<String> = parts.map(|a| a.split('=').next().unwrap_or("").trim().to_ascii_lowercase()).collect();
        if front.https && !attrs.iter().any(|a| a == "secure") {
            no_secure.push(name.clone());
        }
        if !attrs.iter().any(|a| a == "httponly") {
            no_httponly.push(name.clone());
        }
        if !attrs.iter().any(|a| a == "samesite") {
            no_samesite.push(name);
        }
    }
    for (list, code) in [
        (no_secure, "web_headers.cookie_without_secure"),
        (no_httponly, "web_headers.cookie_without_httponly"),
        (no_samesite, "web_headers.cookie_without_samesite"),
    ] {
        if !list.is_empty() {
            out.push(f(code, format!("cookies: {}", list.join(", "))));
        }
    }
    // CORS: a wildcard, or our own Origin reflected, together with credentials.
    let acao = header(h, "access-control-allow-origin");
    let credentials = header(h, "access-control-allow-credentials").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    if credentials && let Some(a) = acao.filter(|a| *a == "*" || *a == PROBE_ORIGIN) {
        out.push(f(
            "web_headers.cors_wildcard_with_credentials",
            format!("Access-Control-Allow-Origin: {a} with Access-Control-Allow-Credentials: true (request Origin {PROBE_ORIGIN})"),
        ));
    }
    let unprotected = scripts_without_sri(&front.body, host);
    if !unprotected.is_empty() {
        out.push(f("web_headers.sri_missing", format!("no integrity on {}", unprotected.join(", "))));
    }
    let disclosed: Vec<String> = ["server", "x-powered-by", "x-aspnet-version", "x-aspnetmvc-version", "x-generator"]
        .into_iter()
        .filter_map(|n| header(h, n).filter(|v| has_version(v)).map(|v| format!("{n}: {v}")))
        .collect();
    if !disclosed.is_empty() {
        out.push(f("web_headers.version_disclosure", disclosed.join("; ")));
    }
    out
}

/// An origin's Observatory-style score (100 minus the penalties, at least 0; no
/// bonuses) and its grade on the Observatory's chart.
pub fn observatory_score<'a>(codes: impl IntoIterator<Item = &'a str>) -> (u32, &'static str) {
    let penalty: u32 = codes.into_iter().map(model::observatory_penalty).sum();
    let score = 100u32.saturating_sub(penalty);
    let grade = match score {
        100.. => "A+",
        90..=99 => "A",
        85..=89 => "A-",
        80..=84 => "B+",
        70..=79 => "B",
        65..=69 => "B-",
        60..=64 => "C+",
        50..=59 => "C",
        45..=49 => "C-",
        40..=44 => "D+",
        30..=39 => "D",
        25..=29 => "D-",
        _ => "F",
    };
    (score, grade)
}

/// An `http://` origin (`http://H`, `http://H:8080`) of a host that also serves HTTPS
/// must redirect to `https://`.
pub fn redirect_finding(origin: &str, status: u16, location: Option<&str>) -> Option<ScanFinding> {
    let to_https =
        (300..400).contains(&status) && location.is_some_and(|l| l.to_ascii_lowercase().starts_with("https://"));
    (!to_https && (200..300).contains(&status)).then(|| {
        ScanFinding::new(
            "web_headers.no_https_redirect",
            format!("{origin}/"),
            format!("{origin}/ answered {status} with content instead of redirecting to https://"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn front(https: bool, headers: &[(&'static str, &str)], body: &str) -> Front {
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.append(*k, v.parse().unwrap());
        }
        Front { origin: "https://a.test/".into(), https, port: 443, status: 200, headers: map, body: body.into() }
    }

    fn codes(f: &Front) -> Vec<String> {
        let mut c: Vec<String> = assess(f, "a.test").into_iter().map(|x| x.code.replace("web_headers.", "")).collect();
        c.sort();
        c
    }

    #[test]
    fn a_good_origin_has_no_finding() {
        let good = front(
            true,
            &[
                ("strict-transport-security", "max-age=63072000; includeSubDomains"),
                ("content-security-policy", "default-src 'self'; frame-ancestors 'none'"),
                ("x-content-type-options", "nosniff"),
                ("referrer-policy", "no-referrer, strict-origin-when-cross-origin"),
                ("permissions-policy", "camera=()"),
                ("set-cookie", "s=1; Secure; HttpOnly; SameSite=Lax"),
                ("server", "nginx"),
                ("access-control-allow-origin", "https://partner.test"),
                ("access-control-allow-credentials", "true"),
            ],
            r#"<script src="https://cdn.test/x.js" integrity="sha384-abc"></script><script src="/local.js"></script>"#,
        );
        assert!(codes(&good).is_empty(), "{:?}", codes(&good));
    }

    #[test]
    fn a_poor_origin_has_every_finding_once() {
        let poor = front(
            true,
            &[
                ("strict-transport-security", "max-age=86400"),
                ("content-security-policy", "default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval'"),
                ("referrer-policy", "unsafe-url"),
                ("set-cookie", "a=1; Path=/"),
                ("set-cookie", "b=2; HttpOnly"),
                ("x-powered-by", "PHP/7.4.3"),
                ("access-control-allow-origin", "*"),
                ("access-control-allow-credentials", "true"),
            ],
            r#"<script src="https://code.cdn.test/jquery-1.12.4.min.js"></script>"#,
        );
        assert_eq!(
            codes(&poor),
            [
                "cookie_without_httponly",
                "cookie_without_samesite",
                "cookie_without_secure",
                "cors_wildcard_with_credentials",
                "csp_unsafe_eval",
                "csp_unsafe_inline",
                "frame_protection_missing",
                "hsts_short_max_age",
                "permissions_policy_missing",
                "referrer_policy_unsafe",
                "sri_missing",
                "version_disclosure",
                "xcto_missing",
            ]
        );
        let plain = front(false, &[("set-cookie", "a=1")], "");
        assert!(!codes(&plain).contains(&"cookie_without_secure".to_owned()), "Secure is an https:// check");
        assert!(!codes(&plain).contains(&"hsts_missing".to_owned()));
    }

    #[test]
    fn nonces_allow_inline_and_default_pages_are_not_assessed() {
        let nonce = front(true, &[("content-security-policy", "script-src 'unsafe-inline' 'nonce-abc'")], "");
        assert!(!codes(&nonce).contains(&"csp_unsafe_inline".to_owned()));
        let nginx = front(false, &[], "<title>Welcome to nginx!</title>");
        assert!(!assessable(&nginx));
        assert!(redirect_finding("http://a.test", 200, None).is_some());
        assert!(redirect_finding("http://a.test", 301, Some("https://a.test/")).is_none());
        assert!(redirect_finding("http://a.test", 404, None).is_none());
        assert!(
            has_version("nginx/1.18.0") && has_version("4.0.30319") && !has_version("nginx") && !has_version("Apache")
        );
        assert_eq!(observatory_score([]), (100, "A+"));
        assert_eq!(observatory_score(["web_headers.csp_missing", "web_headers.hsts_missing"]), (55, "C"));
        assert_eq!(observatory_score(["web_headers.cors_wildcard_with_credentials"; 3]), (0, "F"));
    }
}
