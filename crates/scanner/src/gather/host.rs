//! What a rescan of one host below a company domain for one risk vector looks at: the
//! domain's mail and DNS records (cheap) for spf, dkim, dmarc and it_standardization; a
//! visit to the host for it_standardization, web_headers and digitalization (with its
//! page checks), and its origins on other ports for web_headers and digitalization (a
//! rescan closes what it did not see, so it must see what the scan saw); its DNS name for
//! digitalization; a port scan for open_ports; its software for sbom; a TLS probe of its
//! HTTPS and mail ports for the certificate vectors.

use model::RiskVector as V;

use super::{MailSeen, Observations, VisitSeen, mail, other_origins, probe_tls, tls_targets};
use crate::discovery::Candidate;
use crate::dns::DnsError;
use crate::probes::digital::{self, PagesSeen};
use crate::probes::{Context, ports, standards, web};
use crate::software::Software;

/// What a rescan of one host saw: nothing when the host was not reached (and why), else
/// the domain's mail records, the host's visits and the rest, as a scan's are.
#[derive(Debug, Default)]
pub struct HostSeen {
    /// Why the host was not probed: then it saw nothing, and nothing it did not see is
    /// fixed.
    pub unreached: Option<String>,
    pub mail: Option<MailSeen>,
    pub visits: Vec<VisitSeen>,
    pub obs: Observations,
}

impl HostSeen {
    fn unreached(why: String) -> HostSeen {
        HostSeen { unreached: Some(why), ..HostSeen::default() }
    }
}

/// Gathers what a rescan of `host` (below the company domain `domain`) for `vector`
/// looks at (the module's doc). `website_host` and `dkim_selectors` are as for a scan.
pub async fn host(
    ctx: &Context,
    domain: &str,
    host: &str,
    website_host: Option<&str>,
    vector: V,
    dkim_selectors: &[String],
) -> Result<HostSeen, DnsError> {
    // A host the guard refuses (or whose name fails to resolve) is not probed: the
    // rescan says so, and closes nothing.
    if !matches!(vector, V::Spf | V::Dkim | V::Dmarc)
        && let Some(why) = unreached_host(ctx, host).await
    {
        return Ok(HostSeen::unreached(why));
    }
    let mut seen =
        HostSeen { obs: Observations { domain: domain.to_owned(), ..Observations::default() }, ..HostSeen::default() };
    if matches!(vector, V::Spf | V::Dkim | V::Dmarc | V::ItStandardization) {
        seen.mail = Some(mail(ctx, domain, website_host, dkim_selectors).await?);
    }
    // The origins on other ports (8080, 8443 …) are looked at again too.
    if matches!(vector, V::WebHeaders | V::Digitalization) && !host.starts_with("*.") {
        let open = tokio::time::timeout(super::PORT_SCAN_TIME, ports::scan(&ctx.guard, host, &ctx.ports)).await;
        let deadline = tokio::time::Instant::now() + super::PORT_SCAN_TIME;
        seen.obs.other_origins =
            other_origins(ctx, &open.ok().and_then(Result::ok).unwrap_or_default(), deadline).await.0;
    }
    if matches!(vector, V::ItStandardization | V::WebHeaders) {
        let visit = web::visit(ctx, host).await;
        seen.visits.push(VisitSeen { visit, pages: PagesSeen::default() });
    }
    if vector == V::Digitalization {
        digitalization(ctx, domain, host, &mut seen).await;
    }
    if vector == V::OpenPorts {
        match ports::scan(&ctx.guard, host, &ctx.ports).await {
            Ok(open) => seen.obs.open_ports = open,
            Err(why) => return Ok(HostSeen::unreached(why.0)),
        }
    }
    if vector == V::Sbom && ctx.eol.is_some() {
        seen.obs.software = host_software(ctx, host).await;
    }
    if matches!(vector, V::CertificateInfo | V::CertificateConf | V::CertificateCve) {
        let mx = ctx.guard.dns().mx(domain).await?;
        let https = standards::listens(&ctx.guard, host, 443).await;
        let targets = tls_targets(ctx, host, https, mx.iter().any(|m| m == host)).await;
        seen.obs.tls = probe_tls(ctx, targets).await;
    }
    Ok(seen)
}

/// Digitalization of one host: for a wildcard's `*.` name, what a name never created
/// resolves to; else a visit with its page checks, and its DNS name (a CNAME whose
/// target does not exist).
async fn digitalization(ctx: &Context, domain: &str, host: &str, seen: &mut HostSeen) {
    let dns = ctx.guard.dns();
    match host.strip_prefix("*.") {
        Some(parent) => {
            seen.obs.domain = parent.to_owned();
            seen.obs.wildcard = crate::discovery::wildcard_addresses(dns, parent).await;
            seen.obs.dangling = Some(Vec::new());
        }
        None => {
            let visit = web::visit(ctx, host).await;
            let pages = match &visit.front {
                Some(front) => digital::pages(ctx, front, host).await,
                None => PagesSeen::default(),
            };
            seen.visits.push(VisitSeen { visit, pages });
            let named = vec![Candidate::new(host, "rescan", "")];
            let until = tokio::time::Instant::now() + super::VISIT_TIME;
            let resolved = crate::discovery::resolve_candidates(dns, domain, named, &[], &[], 1, until).await;
            seen.obs.dangling = Some(digital::dangling(dns, &resolved.assets).await);
        }
    }
}

/// Why `host` is not probed ([`ports::Unreached`]): the guard refuses one of its
/// addresses, or its name fails to resolve (a name with no address is reached: it has
/// nothing open). `None` for a wildcard's `*.` name, which is not a host.
pub async fn unreached_host(ctx: &Context, host: &str) -> Option<String> {
    if host.starts_with("*.") {
        return None;
    }
    ports::reach(&ctx.guard, host).await.err().map(|why| why.0)
}

/// The software of one host: a visit and a port scan, fingerprinted.
pub async fn host_software(ctx: &Context, host: &str) -> Vec<Software> {
    let mut visit = web::visit(ctx, host).await;
    let open = ports::scan(&ctx.guard, host, &ctx.ports).await.unwrap_or_default();
    let deadline = tokio::time::Instant::now() + super::PORT_SCAN_TIME;
    for o in other_origins(ctx, &open, deadline).await.0 {
        visit.pages.push(o.front);
    }
    super::detect(&ctx.fingerprints, std::slice::from_ref(&visit), &open)
}
