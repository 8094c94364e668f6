//! digitalization: the hygiene of the footprint (docs/FINDINGS.md, "digitalization").
//! Dangling CNAMEs, wildcard records and internal addresses in public DNS; development
//! hosts and parked or default pages from each visit; admin panels and directory
//! listings from the page checks of every assessable origin.

use std::net::IpAddr;

use model::RiskVector;

use super::Judged;
use crate::check::{self, Check};
use crate::finding::ScanFinding;
use crate::gather::{Observations, VisitSeen};
use crate::probes::digital::{PagesSeen, admin_host, dev_host};
use crate::probes::headers;
use crate::probes::web::Visit;

const V: RiskVector = RiskVector::Digitalization;

/// A visited host: what its page checks saw and what the visit shows, in one check of
/// its front page's origin.
pub fn visit(seen: &VisitSeen, out: &mut Judged) {
    let v = &seen.visit;
    let mut found = v.front.as_ref().map(|front| pages(&seen.pages, &front.origin, &v.host)).unwrap_or_default();
    let host_found = host_findings(v);
    if let Some(front) = &v.front {
        let mut judged = found.clone();
        judged.extend(host_found.iter().cloned());
        out.checks.push(pages_check(&front.origin, &judged));
    }
    found.extend(host_found);
    out.findings.extend(found);
}

/// The hosts not reached, the DNS names, then the web origins on other ports.
pub fn rest(obs: &Observations, out: &mut Judged) {
    for (host, refusal) in &obs.unreached {
        out.checks.push(Check::unreached(V, "pages", host, refusal.to_string()));
    }
    if let Some(dangling) = &obs.dangling {
        let mut found = dangling_cnames(dangling);
        found.extend(wildcard(&obs.domain, &obs.wildcard));
        found.extend(internal_addresses(&obs.unreached));
        let observed = "no dangling CNAME, no wildcard record, no internal address";
        out.checks.push(check::judged(V, "dns names", &obs.domain, &found, observed));
        out.findings.extend(found);
    }
    for o in &obs.other_origins {
        let found = pages(&o.pages, &o.front.origin, &o.host);
        out.checks.push(pages_check(&o.front.origin, &found));
        out.findings.extend(found);
    }
}

/// The pages check of one origin.
fn pages_check(origin: &str, found: &[ScanFinding]) -> Check {
    check::judged(V, "pages", origin, found, "no exposed admin panel or directory listing")
}

/// Admin panels and directory listings of an origin (`origin` its front page's URL):
/// the front page of an administration host, the curated paths, and the home page's
/// same-origin links.
pub fn pages(seen: &PagesSeen, origin: &str, host: &str) -> Vec<ScanFinding> {
    let mut out = Vec::new();
    if admin_host(host) && seen.front_password_field {
        out.push(admin_finding(origin, "the front page of an administration host"));
    }
    if seen.front_listing {
        out.push(listing_finding(origin));
    }
    for page in &seen.pages {
        if page.admin_path && page.password_field {
            out.push(admin_finding(&page.url, "an administration path"));
        }
        if page.listing {
            out.push(listing_finding(&page.url));
        }
    }
    out
}

/// A CNAME whose target does not exist: one finding per name.
pub fn dangling_cnames(dangling: &[(String, String)]) -> Vec<ScanFinding> {
    dangling
        .iter()
        .map(|(name, target)| {
            ScanFinding::new(
                "digitalization.dangling_cname",
                name,
                format!("{name} CNAME {target}, and {target} does not exist (NXDOMAIN)"),
            )
        })
        .collect()
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
        let title = visit
            .front
            .as_ref()
            .and_then(|f| crate::identity::page_title(&f.body))
            .map(|t| format!(" (\"{t}\")"))
            .unwrap_or_default();
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
    use crate::probes::headers::Front;

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
