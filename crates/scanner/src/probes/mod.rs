//! The probes, one module per group of components. Each takes what it needs (the guard,
//! the DNS client, the lab CA in lab mode) and returns findings with evidence.

pub mod mail;
pub mod standards;

use time::OffsetDateTime;

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
            now: OffsetDateTime::now_utc(),
        }
    }
}

impl Context {
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
    pub findings: Vec<ScanFinding>,
}

/// Discovery, then the probes of this stage on what was found: the DNS and mail checks
/// of the domain, and HTTPS availability of every discovered web host.
pub async fn scan_domain(
    ctx: &Context,
    domain: &str,
    website_host: Option<&str>,
    wordlist: &[String],
) -> Result<DomainScan, DnsError> {
    let domain = crate::dns::host_name(domain);
    let assets = crate::discovery::discover(ctx.guard.dns(), &domain, wordlist).await?;
    let mut findings = mail_and_standards(ctx, &domain, website_host).await?;
    let website = website_host.map(crate::dns::host_name);
    for asset in assets.iter().filter(|a| !a.addresses.is_empty() && Some(&a.name) != website.as_ref()) {
        findings.extend(standards::https_available(&ctx.guard, &asset.name).await);
    }
    let mut seen = std::collections::BTreeSet::new();
    findings.retain(|f| seen.insert((f.code.clone(), f.asset.clone())));
    Ok(DomainScan { domain, assets, findings })
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
    let mut out = Vec::new();
    out.extend(mail::spf(dns, &domain, handles_mail).await?);
    out.extend(mail::dkim(dns, &domain, handles_mail, &ctx.selectors).await?);
    out.extend(mail::dmarc(dns, &domain).await?);
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
