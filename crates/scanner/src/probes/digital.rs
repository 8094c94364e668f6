//! digitalization: the hygiene of the footprint (docs/FINDINGS.md, "digitalization").
//! Dangling CNAMEs and wildcard records come from DNS; development hosts and parked or
//! default pages from the web round's visit; admin panels and directory listings from a
//! curated list of paths, and the pages the home page links to, on every assessable
//! origin. Every request is a plain GET through the guard, bounded in time and size.

use std::collections::BTreeSet;
use std::net::IpAddr;

use crate::discovery::Asset;
use crate::dns::Dns;
use crate::finding::ScanFinding;
use crate::http::{self, Verify};
use crate::probes::Context;
use crate::probes::headers::{self, Front};
use crate::probes::web::Visit;

/// First labels of pre-production hosts (each optionally followed by digits or by `-`
/// and more: `dev2`, `staging-api`).
pub const DEV_LABELS: [&str; 11] =
    ["dev", "develop", "staging", "stage", "stg", "test", "testing", "uat", "qa", "preprod", "sandbox"];
/// First labels of hosts whose front page is itself an administration interface.
pub const ADMIN_HOST_LABELS: [&str; 5] = ["admin", "administrator", "cpanel", "manage", "backoffice"];
/// Paths where an administration login is looked for.
pub const ADMIN_PATHS: [&str; 7] =
    ["/admin/", "/administrator/", "/login/", "/login.action", "/wp-login.php", "/wp-admin/", "/phpmyadmin/"];
/// Paths where a directory listing is looked for (besides the admin paths and the
/// home page's links).
pub const LISTING_PATHS: [&str; 5] = ["/backup/", "/backups/", "/uploads/", "/files/", "/old/"];
/// Same-origin pages linked from the home page that are fetched at most.
pub const MAX_LINKED_PAGES: usize = 8;
/// A path no site serves: what it answers tells a catch-all server from real pages.
const SOFT_404_PATH: &str = "/rampart-soft-404-probe-7f3c1/";

/// Is the first label of `host` a development name?
pub fn dev_host(host: &str) -> bool {
    let first = host.split('.').next().unwrap_or_default().to_ascii_lowercase();
    DEV_LABELS.iter().any(|label| {
        first.strip_prefix(label).is_some_and(|rest| {
            rest.is_empty() || rest.bytes().all(|b| b.is_ascii_digit()) || (rest.len() > 1 && rest.starts_with('-'))
        })
    })
}

/// Is the first label of `host` an administration name?
pub fn admin_host(host: &str) -> bool {
    let first = host.split('.').next().unwrap_or_default().to_ascii_lowercase();
    ADMIN_HOST_LABELS.contains(&first.as_str())
}

/// An auto-generated directory index (Apache, nginx, IIS, lighttpd, Python's
/// http.server all title it "Index of /…" or "Directory listing for /…").
pub fn directory_listing(body: &str) -> bool {
    let lower = body.to_ascii_lowercase();
    let Some(start) = lower.find("<title>") else { return false };
    let title = lower[start + 7..].trim_start();
    title.starts_with("index of /") || title.starts_with("directory listing for /")
}

/// Does the page carry a password field (`<input … type=password …>`, any quoting)?
pub fn password_field(body: &str) -> bool {
    let lower = body.to_ascii_lowercase();
    let mut at = 0;
    while let Some(p) = lower[at..].find("<input") {
        let start = at + p;
        let end = lower[start..].find('>').map_or(lower.len(), |e| start + e);
        let tag: String = lower[start..end].chars().filter(|c| !matches!(c, '"' | '\'')).collect();
        if tag.split_whitespace().any(|attr| attr == "type=password") || tag.contains(" type=password") {
            return true;
        }
        at = end;
    }
    false
}

/// The same-origin paths the page links to (`href` of anchors, relative or absolute on
/// the same scheme and host), without query or fragment, each once, at most `limit`.
pub fn same_origin_paths(origin: &str, body: &str, limit: usize) -> Vec<String> {
    let Ok(base) = reqwest::Url::parse(origin) else { return Vec::new() };
    let lower = body.to_ascii_lowercase();
    let mut out: Vec<String> = Vec::new();
    let mut at = 0;
    while out.len() < limit {
        let Some(p) = lower[at..].find("href") else { break };
        let mut i = at + p + 4;
        at = i;
        let bytes = lower.as_bytes();
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if bytes.get(i) != Some(&b'=') {
            continue;
        }
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let (start, end) = match bytes.get(i) {
            Some(&q) if q == b'"' || q == b'\'' => {
                let e = lower[i + 1..].find(q as char).map_or(lower.len(), |e| i + 1 + e);
                (i + 1, e)
            }
            _ => {
                let e = lower[i..].find(|c: char| c.is_ascii_whitespace() || c == '>').map_or(lower.len(), |e| i + e);
                (i, e)
            }
        };
        at = end;
        let Some(raw) = body.get(start..end) else { continue };
        let Ok(url) = base.join(raw.trim()) else { continue };
        if url.scheme() != base.scheme() || url.host_str() != base.host_str() || url.port() != base.port() {
            continue;
        }
        let path = url.path().to_owned();
        if path == "/" || path.len() > 256 || out.contains(&path) {
            continue;
        }
        out.push(path);
    }
    out
}

/// A CNAME whose target does not exist: one finding per name.
pub async fn dangling_cnames(dns: &Dns, assets: &[Asset]) -> Vec<ScanFinding> {
    let mut out = Vec::new();
    for a in assets {
        let Some(target) = &a.cname else { continue };
        if !a.addresses.is_empty() {
            continue;
        }
        match dns.nxdomain(target).await {
            Ok(true) => out.push(ScanFinding::new(
                "digitalization.dangling_cname",
                &a.name,
                format!("{} CNAME {target}, and {target} does not exist (NXDOMAIN)", a.name),
            )),
            Ok(false) => {}
            Err(e) => tracing::debug!(name = %a.name, target, error = %e, "CNAME target not checked"),
        }
    }
    out
}

/// Hosts the guard does not probe, and why ([`crate::guard::Guard::refusal`]): one
/// internal address beside public ones, or (in lab mode) an address outside the lab.
pub fn unreached(guard: &crate::guard::Guard, assets: &[Asset]) -> Vec<(String, crate::guard::Refusal)> {
    assets.iter().filter_map(|a| Some((a.name.clone(), guard.refusal(&a.name, &a.addresses)?))).collect()
}

/// A name in the company's public DNS that publishes an internal address (private,
/// loopback, unique local, link-local, shared): it discloses the inside of a network,
/// and it is how a company would hide a host from an outside rating.
pub fn internal_addresses(unreached: &[(String, crate::guard::Refusal)]) -> Vec<ScanFinding> {
    unreached
        .iter()
        .filter(|(_, r)| r.internal())
        .map(|(host, r)| {
            ScanFinding::new(
                "digitalization.internal_address",
                host,
                format!("{host} has the address {} ({}) in public DNS", r.addr, r.why),
            )
        })
        .collect()
}

/// A wildcard record under `domain`: what a name never created resolves to.
pub fn wildcard(domain: &str, addresses: &[IpAddr]) -> Option<ScanFinding> {
    if addresses.is_empty() {
        return None;
    }
    let seen: Vec<String> = addresses.iter().map(ToString::to_string).collect();
    Some(ScanFinding::new(
        "digitalization.wildcard_dns",
        format!("*.{domain}"),
        format!("a random name under {domain} resolves to {}", seen.join(", ")),
    ))
}

/// What the visit of one host shows: a development host answering on a web port, and a
/// parked or default front page.
pub fn host_findings(visit: &Visit) -> Vec<ScanFinding> {
    let mut out = Vec::new();
    let web: Vec<String> =
        visit.endpoints.iter().filter(|e| e.port == 80 || e.port == 443).map(|e| e.port.to_string()).collect();
    if !web.is_empty() && dev_host(&visit.host) {
        let title =
            visit.front.as_ref().and_then(|f| page_title(&f.body)).map(|t| format!(" (\"{t}\")")).unwrap_or_default();
        out.push(ScanFinding::new(
            "digitalization.dev_host_exposed",
            &visit.host,
            format!("{} answers on port {}{title}", visit.host, web.join(" and ")),
        ));
    }
    if let Some(front) = &visit.front
        && (200..300).contains(&front.status)
        && let Some(what) = headers::parked_or_default(&front.body)
    {
        out.push(ScanFinding::new(
            "digitalization.parked_host",
            &visit.host,
            format!("{} shows {what} instead of an application", front.origin),
        ));
    }
    out
}

/// The `<title>` of a page (trimmed, at most 80 characters).
fn page_title(body: &str) -> Option<String> {
    let lower = body.to_ascii_lowercase();
    let start = lower.find("<title>")? + 7;
    let end = start + lower[start..].find("</title>")?;
    let title: String = body.get(start..end)?.split_whitespace().collect::<Vec<_>>().join(" ");
    (!title.is_empty()).then(|| title.chars().take(80).collect())
}

/// Admin panels and directory listings of an assessable origin: the front page of an
/// administration host, the curated paths, and the home page's same-origin links.
pub async fn page_findings(ctx: &Context, front: &Front, host: &str) -> Vec<ScanFinding> {
    let mut out = Vec::new();
    if !headers::assessable(front) {
        return out;
    }
    let base = front.origin.trim_end_matches('/').to_owned();
    if admin_host(host) && password_field(&front.body) {
        out.push(admin_finding(&front.origin, "the front page of an administration host"));
    }
    if directory_listing(&front.body) {
        out.push(listing_finding(&front.origin));
    }
    let mut paths: Vec<String> = ADMIN_PATHS.iter().chain(LISTING_PATHS.iter()).map(|p| (*p).to_owned()).collect();
    let linked = same_origin_paths(&front.origin, &front.body, MAX_LINKED_PAGES);
    let mut seen: BTreeSet<String> = paths.iter().cloned().collect();
    for p in linked {
        if seen.insert(p.clone()) {
            paths.push(p);
        }
    }
    // A server that answers 200 with one page for any path (a single-page application's
    // catch-all, a soft 404) shows nothing at the curated paths: a page identical to the
    // front page or to what a path that cannot exist answers is not looked at.
    let Ok(target) = crate::guard::target(host) else { return out };
    let origin = http::Origin { https: front.https, target, port: front.port };
    let lab_root = ctx.lab_root.as_deref();
    let mut catch_all = vec![front.body.clone()];
    if let Ok(r) = http::get_origin(&ctx.guard, lab_root, &origin, SOFT_404_PATH, Verify::No, &[]).await
        && r.status == 200
    {
        catch_all.push(r.body);
    }
    for path in paths {
        let response = match http::get_origin(&ctx.guard, lab_root, &origin, &path, Verify::No, &[]).await {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!(host, path, error = %e, "page not fetched");
                continue;
            }
        };
        if response.status != 200 || catch_all.contains(&response.body) {
            continue;
        }
        let url = format!("{base}{path}");
        if ADMIN_PATHS.contains(&path.as_str()) && password_field(&response.body) {
            out.push(admin_finding(&url, "an administration path"));
        }
        if directory_listing(&response.body) {
            out.push(listing_finding(&url));
        }
    }
    out
}

fn admin_finding(url: &str, what: &str) -> ScanFinding {
    ScanFinding::new(
        "digitalization.admin_panel_exposed",
        url,
        format!("{url} ({what}) answers 200 with a password field"),
    )
}

fn listing_finding(url: &str) -> ScanFinding {
    ScanFinding::new("digitalization.directory_listing", url, format!("{url} answers 200 with a directory index"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn development_names() {
        for yes in [
            "dev.a.test",
            "DEV2.a.test",
            "staging-api.a.test",
            "uat.a.test",
            "qa.a.test",
            "preprod.a.test",
            "test.a.test",
        ] {
            assert!(dev_host(yes), "{yes}");
        }
        for no in ["devices.a.test", "www.a.test", "contest.a.test", "dev-.a.test", "testimonials.a.test", "a.test"] {
            assert!(!dev_host(no), "{no}");
        }
        assert!(admin_host("admin.a.test") && admin_host("cPanel.a.test"));
        assert!(!admin_host("administration.a.test") && !admin_host("www.admin.a.test"));
    }

    #[test]
    fn listings_and_password_fields() {
        assert!(directory_listing("<html><head><title>Index of /backup</title>"));
        assert!(directory_listing("<TITLE> Directory listing for /files/</TITLE>"));
        assert!(!directory_listing("<title>The index of our products</title>"));
        assert!(!directory_listing("no title; Index of /x"));
        assert!(password_field(r#"<form><input name="u"><input type="password" name="p"></form>"#));
        assert!(password_field("<INPUT TYPE='Password' name=p>"));
        assert!(password_field("<input name=p type=password>"));
        assert!(!password_field(r#"<input type="text" name="password">"#));
        assert!(!password_field("<p>Forgot your password?</p>"));
    }

    #[test]
    fn links_on_the_same_origin() {
        let page = r#"<a href="/backup/">b</a> <a href='docs/'>d</a> <a href="https://x.test/a/?q=1#f">a</a>
            <a href="https://other.test/z/">z</a> <a href="http://x.test/plain/">p</a> <a href=/>root</a>
            <a href="/backup/">again</a> <link href = "/style.css"> <a href="mailto:a@x.test">m</a>"#;
        assert_eq!(same_origin_paths("https://x.test/", page, 10), vec!["/backup/", "/docs/", "/a/", "/style.css"]);
        assert_eq!(same_origin_paths("https://x.test/", page, 2).len(), 2);
        assert!(same_origin_paths("not a url", page, 10).is_empty());
    }

    #[test]
    fn wildcards_and_hosts() {
        assert!(wildcard("a.test", &[]).is_none());
        let w = wildcard("a.test", &["127.0.0.9".parse().unwrap()]).unwrap();
        assert_eq!((w.code.as_str(), w.asset.as_str()), ("digitalization.wildcard_dns", "*.a.test"));
        let visit = Visit {
            host: "staging.a.test".into(),
            endpoints: vec![crate::probes::web::Endpoint {
                host: "staging.a.test".into(),
                ip: "127.0.0.1".parse().unwrap(),
                port: 80,
                service: "http".into(),
                product: None,
                version: None,
                banner: String::new(),
            }],
            front: Some(Front {
                origin: "http://staging.a.test/".into(),
                https: false,
                port: 80,
                status: 200,
                headers: Default::default(),
                body: "<title>Welcome to nginx!</title><h1>Welcome to nginx!</h1>".into(),
            }),
            ..Visit::default()
        };
        let found: Vec<String> = host_findings(&visit).into_iter().map(|f| f.code).collect();
        assert_eq!(found, ["digitalization.dev_host_exposed", "digitalization.parked_host"]);
        let silent = Visit { host: "dev.a.test".into(), ..Visit::default() };
        assert!(host_findings(&silent).is_empty(), "nothing answers: nothing exposed");
    }
}
