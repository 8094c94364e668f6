//! The probes, one module per group of components. Each takes what it needs (the guard,
//! the DNS client, the lab CA in lab mode) and returns findings with evidence.

pub mod digital;
pub mod headers;
pub mod mail;
pub mod ports;
pub mod standards;
pub mod web;

use time::OffsetDateTime;

use crate::discovery::Candidate;
use crate::dns::DnsError;
use crate::dnssec::Validator;
use crate::finding::ScanFinding;
use crate::guard::Guard;

/// What every probe of a scan shares.
pub struct Context {
    pub guard: Guard,
    /// The lab CA root (DER) that certificates validate against in lab mode.
    pub lab_root: Option<Vec<u8>>,
    /// DNSSEC validation from the configured trust anchors; `None` skips the DNSSEC check.
    pub validator: Option<Validator>,
    pub selectors: Vec<String>,
    /// Host labels discovery tries under every domain.
    pub wordlist: Vec<String>,
    /// A crt.sh-compatible certificate-transparency search URL with `{domain}` in it;
    /// `None` (the default) leaves that source out.
    pub ct_search: Option<String>,
    /// The risk vectors to probe; empty for all.
    pub vectors: Vec<model::RiskVector>,
    /// The TCP ports the port scan tries on every host.
    pub ports: Vec<u16>,
    /// The fingerprint rules (built-in, plus imported Wappalyzer technologies).
    pub fingerprints: std::sync::Arc<crate::fingerprint::RuleSet>,
    /// endoflife.date lifecycle data; `None` leaves the sbom findings out.
    pub eol: Option<std::sync::Arc<crate::software::Eol>>,
    pub now: OffsetDateTime,
}

impl Context {
    pub fn new(guard: Guard) -> Context {
        Context {
            guard,
            lab_root: None,
            validator: None,
            selectors: mail::DEFAULT_SELECTORS.iter().map(|s| (*s).to_owned()).collect(),
            wordlist: crate::discovery::DEFAULT_WORDLIST.iter().map(|s| (*s).to_owned()).collect(),
            ct_search: None,
            vectors: Vec::new(),
            ports: ports::DEFAULT_PORTS.to_vec(),
            fingerprints: std::sync::Arc::new(crate::fingerprint::RuleSet::builtin().clone()),
            eol: None,
            now: OffsetDateTime::now_utc(),
        }
    }
}

impl Context {
    /// Is `vector` probed by this scan?
    pub fn wants(&self, vector: model::RiskVector) -> bool {
        self.vectors.is_empty() || self.vectors.contains(&vector)
    }

    /// Lab mode: the guard admits loopback and private targets, connects by the lab's
    /// port map, asks the lab's DNS server, trusts the lab CA and validates DNSSEC from
    /// the lab's anchors (the trust-anchor file's text).
    pub fn lab(
        resolver: std::net::SocketAddr,
        port_map: std::collections::BTreeMap<u16, u16>,
        ca_root_der: Option<Vec<u8>>,
        trust_anchors: &str,
    ) -> Result<Context, LabContextError> {
        let policy = crate::Policy { allow_private: true, port_map, ..crate::Policy::default() };
        let mut ctx = Context::new(Guard::new(policy, crate::Dns::with_server(resolver)?));
        ctx.lab_root = ca_root_der;
        let anchors = crate::dnssec::TrustAnchor::parse(trust_anchors)?;
        if !anchors.is_empty() {
            ctx.validator = Some(Validator::new(resolver, anchors));
        }
        Ok(ctx)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LabContextError {
    #[error(transparent)]
    Dns(#[from] DnsError),
    #[error(transparent)]
    Anchor(#[from] crate::dnssec::DnssecError),
}

/// What a scan of one company domain found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DomainScan {
    pub domain: String,
    pub assets: Vec<crate::discovery::Asset>,
    /// The ports of the assets that answered, and what answered there.
    pub endpoints: Vec<web::Endpoint>,
    /// The open ports of the assets, identified.
    pub open_ports: Vec<ports::OpenPort>,
    /// The TLS endpoints probed (HTTPS hosts, mail hosts' SMTP/IMAP/POP3 ports, and
    /// other ports that answered a ClientHello).
    pub tls: Vec<crate::tlsprobe::TlsReport>,
    /// The software the fingerprints found, per host.
    pub software: Vec<crate::software::Software>,
    /// Whether the domain receives mail (publishes MX records).
    pub mail: bool,
    /// Web origins assessed for headers (2xx, not a parked or default page).
    pub web_origins: u32,
    pub findings: Vec<ScanFinding>,
}

/// Mail ports whose TLS is probed on the domain's MX hosts (STARTTLS on 25 and 587).
const MAIL_TLS_PORTS: [u16; 5] = [25, 465, 587, 993, 995];
/// TLS endpoints probed at once.
const CONCURRENT_TLS: usize = 8;

/// Does the scan need the software inventory (fingerprints of pages and services)?
fn wants_software(ctx: &Context) -> bool {
    use model::RiskVector as V;
    [V::Sbom, V::Vulnerabilities].into_iter().any(|v| ctx.wants(v))
}

fn wants_tls(ctx: &Context) -> bool {
    use model::RiskVector as V;
    [V::CertificateInfo, V::CertificateConf, V::CertificateCve].into_iter().any(|v| ctx.wants(v))
}

/// The TLS endpoints of `host`: 443 when it was seen answering, and the mail ports that
/// accept a connection when the host receives mail.
async fn tls_targets(ctx: &Context, host: &str, https: bool, mail: bool) -> Vec<crate::tlsprobe::Target> {
    let mut out = Vec::new();
    if https {
        out.push(crate::tlsprobe::Target::new(host, 443));
    }
    if mail {
        for port in MAIL_TLS_PORTS {
            if standards::listens(&ctx.guard, host, port).await {
                out.push(crate::tlsprobe::Target::new(host, port));
            }
        }
    }
    out
}

/// Probes the TLS of `targets` (bounded concurrency); endpoints that fail to answer are
/// skipped with a log line.
pub async fn probe_tls(ctx: &Context, targets: Vec<crate::tlsprobe::Target>) -> Vec<crate::tlsprobe::TlsReport> {
    use futures_util::StreamExt;
    let lab_root = ctx.lab_root.as_deref();
    futures_util::stream::iter(targets)
        .map(|t| async move {
            match crate::tlsprobe::probe(&ctx.guard, &t, lab_root, ctx.now).await {
                Ok(r) => Some(r),
                Err(e) => {
                    tracing::debug!(target = %t.asset(), error = %e, "TLS probe failed");
                    None
                }
            }
        })
        .buffered(CONCURRENT_TLS)
        .filter_map(|r| async move { r })
        .collect()
        .await
}

/// Rounds of the web visit: the hosts a round discovers (certificate names, links) are
/// visited in the next, up to this many.
const WEB_ROUNDS: usize = 3;
/// Hosts visited at once.
const CONCURRENT_VISITS: usize = 16;
/// Hosts port-scanned at once.
const CONCURRENT_HOSTS: usize = 8;

/// Discovery, then the probes of this stage on what was found: the DNS and mail checks
/// of the domain, and a visit to every discovered host (HTTPS availability, the stack's
/// consistency, and the names its certificates and pages lead to).
pub async fn scan_domain(
    ctx: &Context,
    domain: &str,
    website_host: Option<&str>,
    wordlist: &[String],
) -> Result<DomainScan, DnsError> {
    let domain = crate::dns::host_name(domain);
    let dns = ctx.guard.dns();
    let mut assets = crate::discovery::discover(dns, &domain, wordlist).await?;
    if let Some(template) = &ctx.ct_search {
        match crate::discovery::ct_search(template, &domain, ctx.guard.policy().read_timeout * 4).await {
            Ok(names) => {
                let candidates =
                    names.into_iter().map(|(name, evidence)| Candidate::new(name, "ct", evidence)).collect();
                let known: Vec<String> = assets.iter().map(|a| a.name.clone()).collect();
                assets.extend(crate::discovery::resolve_candidates(dns, &domain, candidates, &[], &known).await);
            }
            Err(e) => tracing::warn!(domain, error = %e, "certificate-transparency search failed"),
        }
    }
    let mut findings = mail_and_standards(ctx, &domain, website_host).await?;
    let mail = !dns.mx(&domain).await?.is_empty();
    let mut web_origins = 0u32;
    let mut endpoints = Vec::new();
    let mut visited = std::collections::BTreeSet::new();
    let mut all_visits = Vec::new();
    for _ in 0..WEB_ROUNDS {
        let hosts: Vec<String> = assets
            .iter()
            .filter(|a| !a.addresses.is_empty() && !visited.contains(&a.name))
            .map(|a| a.name.clone())
            .collect();
        if hosts.is_empty() {
            break;
        }
        visited.extend(hosts.iter().cloned());
        let visits = visit_all(ctx, hosts).await;
        let mut candidates = Vec::new();
        for v in &visits {
            findings.extend(web::https_findings(v));
            findings.extend(digital::host_findings(v));
            if let Some(front) = v.front.as_ref().filter(|f| headers::assessable(f)) {
                findings.extend(headers::assess(front, &v.host));
                web_origins += 1;
            }
            if let Some((status, location)) = &v.plain_http
                && v.https()
            {
                findings.extend(headers::redirect_finding(&v.host, *status, location.as_deref()));
            }
            endpoints.extend(v.endpoints.iter().cloned());
            for name in &v.certificate_names {
                let evidence = format!("named by the certificate of {}:443", v.host);
                candidates.push(Candidate::new(name.trim_start_matches("*."), "certificate", evidence));
            }
            for (name, evidence) in &v.linked {
                candidates.push(Candidate::new(name.clone(), "link", evidence.clone()));
            }
        }
        let known: Vec<String> = assets.iter().map(|a| a.name.clone()).collect();
        assets.extend(crate::discovery::resolve_candidates(dns, &domain, candidates, &[], &known).await);
        all_visits.extend(visits);
    }
    if ctx.wants(model::RiskVector::Digitalization) {
        findings.extend(digital::dangling_cnames(dns, &assets).await);
        findings.extend(digital::wildcard(&domain, &crate::discovery::wildcard_addresses(dns, &domain).await));
        findings.extend(page_findings(ctx, &all_visits).await);
    }
    // The port scan: every host with an address, a few at a time.
    let mut open_ports = Vec::new();
    if ctx.wants(model::RiskVector::OpenPorts)
        || ctx.wants(model::RiskVector::ItStandardization)
        || wants_tls(ctx)
        || wants_software(ctx)
    {
        use futures_util::StreamExt;
        let hosts: Vec<String> = assets.iter().filter(|a| !a.addresses.is_empty()).map(|a| a.name.clone()).collect();
        let scans: Vec<Vec<ports::OpenPort>> = futures_util::stream::iter(hosts)
            .map(|h| async move { ports::scan(&ctx.guard, &h, &ctx.ports).await })
            .buffered(CONCURRENT_HOSTS)
            .collect()
            .await;
        open_ports = scans.into_iter().flatten().collect();
    }
    findings.extend(ports::judge(&open_ports));
    for p in &open_ports {
        if !endpoints.iter().any(|e| e.host == p.host && e.port == p.port) {
            endpoints.push(web::Endpoint {
                host: p.host.clone(),
                ip: p.ip,
                port: p.port,
                service: p.service.clone(),
                product: p.product.clone(),
                version: p.version.clone(),
                banner: p.banner.clone(),
            });
        }
    }
    findings.extend(web::inconsistent_stack(&domain, &endpoints));
    let mut tls = Vec::new();
    if wants_tls(ctx) {
        let mx: Vec<String> =
            dns.mx(&domain).await?.into_iter().filter(|h| crate::discovery::inside(h, &domain)).collect();
        let mut targets = Vec::new();
        for a in assets.iter().filter(|a| !a.addresses.is_empty()) {
            let https = endpoints.iter().any(|e| e.host == a.name && e.port == 443);
            targets.extend(tls_targets(ctx, &a.name, https, mx.contains(&a.name)).await);
        }
        // Any other port that answered a ClientHello.
        for p in open_ports.iter().filter(|p| p.service == "tls") {
            if !targets.iter().any(|t| t.host == p.host && t.port == p.port) {
                targets.push(crate::tlsprobe::Target::new(&p.host, p.port));
            }
        }
        tls = probe_tls(ctx, targets).await;
        for report in &tls {
            findings.extend(crate::tlsprobe::findings::judge(report));
        }
    }
    let software = crate::software::detect(&ctx.fingerprints, &all_visits, &open_ports);
    if let Some(eol) = &ctx.eol {
        findings.extend(crate::software::sbom_findings(&software, eol, ctx.now.date()));
    }
    findings.retain(|f| ctx.wants(f.risk_vector));
    assets.sort_by(|a, b| a.name.cmp(&b.name));
    endpoints.sort_by(|a, b| (&a.host, a.port).cmp(&(&b.host, b.port)));
    let mut seen = std::collections::BTreeSet::new();
    findings.retain(|f| seen.insert((f.code.clone(), f.asset.clone(), f.cve.clone(), f.component.clone())));
    Ok(DomainScan { domain, assets, endpoints, open_ports, tls, software, mail, web_origins, findings })
}

/// A rescan of one host below a company domain for one risk vector: the domain's checks
/// of that vector (DNS and mail, cheap), for it_standardization and web_headers a visit
/// to the host, for the certificate vectors a TLS probe of its HTTPS and mail ports, for
/// open_ports a port scan of the host;
/// only findings on the host (or below it) are returned. The stack-consistency check
/// needs every host, so it runs only when the host is the domain (use [`scan_domain`]).
pub async fn rescan_host(
    ctx: &Context,
    domain: &str,
    host: &str,
    website_host: Option<&str>,
    vector: model::RiskVector,
) -> Result<Vec<ScanFinding>, DnsError> {
    use model::RiskVector as V;
    let mut found = Vec::new();
    if matches!(vector, V::Spf | V::Dkim | V::Dmarc | V::ItStandardization) {
        found = mail_and_standards(ctx, domain, website_host).await?;
    }
    if matches!(vector, V::ItStandardization | V::WebHeaders) {
        let visit = web::visit(ctx, host).await;
        found.extend(web::https_findings(&visit));
        if let Some(front) = visit.front.as_ref().filter(|f| headers::assessable(f)) {
            found.extend(headers::assess(front, host));
        }
        if let Some((status, location)) = &visit.plain_http
            && visit.https()
        {
            found.extend(headers::redirect_finding(host, *status, location.as_deref()));
        }
    }
    if vector == V::Digitalization {
        let dns = ctx.guard.dns();
        match host.strip_prefix("*.") {
            Some(parent) => {
                found.extend(digital::wildcard(parent, &crate::discovery::wildcard_addresses(dns, parent).await))
            }
            None => {
                let visit = web::visit(ctx, host).await;
                found.extend(digital::host_findings(&visit));
                if let Some(front) = &visit.front {
                    found.extend(digital::page_findings(ctx, front, host).await);
                }
                let named = vec![Candidate::new(host, "rescan", "")];
                let assets = crate::discovery::resolve_candidates(dns, domain, named, &[], &[]).await;
                found.extend(digital::dangling_cnames(dns, &assets).await);
            }
        }
    }
    if vector == V::OpenPorts {
        found.extend(ports::judge(&ports::scan(&ctx.guard, host, &ctx.ports).await));
    }
    if vector == V::Sbom
        && let Some(eol) = &ctx.eol
    {
        let software = host_software(ctx, host).await;
        found.extend(crate::software::sbom_findings(&software, eol, ctx.now.date()));
    }
    if matches!(vector, V::CertificateInfo | V::CertificateConf | V::CertificateCve) {
        let mx = ctx.guard.dns().mx(domain).await?;
        let https = standards::listens(&ctx.guard, host, 443).await;
        let targets = tls_targets(ctx, host, https, mx.iter().any(|m| m == host)).await;
        for report in probe_tls(ctx, targets).await {
            found.extend(crate::tlsprobe::findings::judge(&report));
        }
    }
    let host = crate::dns::host_name(host);
    found.retain(|f| f.risk_vector == vector && model::asset_under(&f.asset, &host));
    Ok(found)
}

/// The software of one host: a visit and a port scan, fingerprinted.
pub async fn host_software(ctx: &Context, host: &str) -> Vec<crate::software::Software> {
    let visit = web::visit(ctx, host).await;
    let open = ports::scan(&ctx.guard, host, &ctx.ports).await;
    crate::software::detect(&ctx.fingerprints, std::slice::from_ref(&visit), &open)
}

/// Admin panels and directory listings of every visited host's assessable origin.
async fn page_findings(ctx: &Context, visits: &[web::Visit]) -> Vec<ScanFinding> {
    use futures_util::StreamExt;
    // By index: a closure over references in a tuple trips the Send check of callers.
    let found: Vec<Vec<ScanFinding>> = futures_util::stream::iter(0..visits.len())
        .map(|i| async move {
            let v = &visits[i];
            match &v.front {
                Some(front) => digital::page_findings(ctx, front, &v.host).await,
                None => Vec::new(),
            }
        })
        .buffered(CONCURRENT_VISITS)
        .collect()
        .await;
    found.into_iter().flatten().collect()
}

async fn visit_all(ctx: &Context, hosts: Vec<String>) -> Vec<web::Visit> {
    use futures_util::StreamExt;
    futures_util::stream::iter(hosts)
        .map(|host| async move { web::visit(ctx, &host).await })
        .buffered(CONCURRENT_VISITS)
        .collect()
        .await
}

/// The DNS and mail checks of one company domain (spf, dkim, dmarc, it_standardization):
/// `website_host` is the host of the company's website when it lies in this domain.
pub async fn mail_and_standards(
    ctx: &Context,
    domain: &str,
    website_host: Option<&str>,
) -> Result<Vec<ScanFinding>, DnsError> {
    let dns = ctx.guard.dns();
    let domain = crate::dns::host_name(domain);
    let mx = dns.mx(&domain).await?;
    let handles_mail = !mx.is_empty();
    use model::RiskVector as V;
    let mut out = Vec::new();
    if ctx.wants(V::Spf) {
        out.extend(mail::spf(dns, &domain, handles_mail).await?);
    }
    if ctx.wants(V::Dkim) {
        out.extend(mail::dkim(dns, &domain, handles_mail, &ctx.selectors).await?);
    }
    if ctx.wants(V::Dmarc) {
        out.extend(mail::dmarc(dns, &domain).await?);
    }
    if !ctx.wants(V::ItStandardization) {
        return Ok(out);
    }
    if let Some(validator) = &ctx.validator {
        out.extend(standards::dnssec(validator, &domain).await);
    }
    out.extend(standards::caa(&ctx.guard, &domain).await?);
    if handles_mail {
        out.extend(standards::mail_transport(&ctx.guard, ctx.lab_root.as_deref(), &domain, &mx).await?);
    }
    // IPv6 on the website host and the mail hosts inside the domain.
    let mut hosts: Vec<String> = website_host.map(crate::dns::host_name).into_iter().collect();
    for h in &mx {
        if (h == &domain || h.ends_with(&format!(".{domain}"))) && !hosts.contains(h) {
            hosts.push(h.clone());
        }
    }
    out.extend(standards::ipv6(&ctx.guard, &hosts).await?);
    if let Some(web) = website_host {
        let https = standards::listens(&ctx.guard, web, 443).await;
        out.extend(standards::security_txt(&ctx.guard, web, https, ctx.now).await);
        out.extend(standards::https_available_given(&ctx.guard, web, https).await);
    }
    Ok(out)
}
