//! The Mozilla HTTP Observatory's score modifiers for the web_headers finding codes
//! (docs/METHODOLOGY.md, "web_headers"): the scanner scores one origin with them and the
//! rating scores the web_headers component with them.

/// The Observatory's penalty for a finding code (codes it has no modifier for cost
/// nothing).
pub fn observatory_penalty(code: &str) -> u32 {
    match code {
        "web_headers.cors_wildcard_with_credentials" => 50,
        "web_headers.cookie_without_httponly" => 30,
        "web_headers.csp_missing" => 25,
        "web_headers.hsts_missing"
        | "web_headers.no_https_redirect"
        | "web_headers.frame_protection_missing"
        | "web_headers.cookie_without_secure"
        | "web_headers.csp_unsafe_inline" => 20,
        "web_headers.hsts_short_max_age" | "web_headers.csp_unsafe_eval" => 10,
        "web_headers.xcto_missing" | "web_headers.sri_missing" | "web_headers.referrer_policy_unsafe" => 5,
        _ => 0,
    }
}
