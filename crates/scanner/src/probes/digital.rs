//! What the digitalization checks judge (docs/FINDINGS.md, "digitalization"): the
//! CNAMEs whose target does not exist, the hosts the guard refuses, and on every
//! assessable origin what a curated list of paths and the pages the home page links to
//! show (admin logins, directory listings), with the classifiers of names and pages.
//! Every request is a plain GET through the guard, bounded in time and size. The
//! verdicts are in `crate::checks::digitalization`.

use std::collections::BTreeSet;

use crate::discovery::Asset;
use crate::dns::Dns;
use crate::http::{self, Verify};
use crate::probes::Context;
use crate::probes::headers::{self, Front};

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

/// The CNAMEs among `assets` whose target does not exist (NXDOMAIN): (name, target).
pub async fn dangling(dns: &Dns, assets: &[Asset]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for a in assets {
        let Some(target) = &a.cname else { continue };
        if !a.addresses.is_empty() {
            continue;
        }
        match dns.nxdomain(target).await {
            Ok(true) => out.push((a.name.clone(), target.clone())),
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

/// What the page checks of one assessable origin saw: its front page, the curated
/// paths and the home page's same-origin links. Each page is read as it arrives and
/// dropped; only what it showed is kept.
#[derive(Debug, Clone, Default)]
pub struct PagesSeen {
    /// The front page carries a password field.
    pub front_password_field: bool,
    /// The front page is a directory index.
    pub front_listing: bool,
    /// The paths that answered 200 with a page of their own (neither the front page nor
    /// what a path that cannot exist answers).
    pub pages: Vec<PageSeen>,
}

/// One page of an origin that answered 200 with a page of its own.
#[derive(Debug, Clone)]
pub struct PageSeen {
    pub url: String,
    /// One of the curated [`ADMIN_PATHS`].
    pub admin_path: bool,
    pub password_field: bool,
    pub listing: bool,
}

/// The page checks' fetches on an assessable origin (nothing on one that is not): the
/// curated paths and the home page's same-origin links, each a plain GET through the
/// guard.
pub async fn pages(ctx: &Context, front: &Front, host: &str) -> PagesSeen {
    let mut out = PagesSeen::default();
    if !headers::assessable(front) {
        return out;
    }
    let base = front.origin.trim_end_matches('/').to_owned();
    out.front_password_field = password_field(&front.body);
    out.front_listing = directory_listing(&front.body);
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
        out.pages.push(PageSeen {
            url: format!("{base}{path}"),
            admin_path: ADMIN_PATHS.contains(&path.as_str()),
            password_field: password_field(&response.body),
            listing: directory_listing(&response.body),
        });
    }
    out
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
}
