//! The mail and DNS records of one company domain: what the spf, dkim, dmarc and the
//! domain's it_standardization checks judge. Only DNS questions, and for MTA-STS and
//! security.txt one request each.

use model::RiskVector as V;

use crate::dns::DnsError;
use crate::dnssec::{DnssecError, Status};
use crate::probes::Context;
use crate::probes::mail::{self, DkimSeen, DmarcSeen, SpfSeen};
use crate::probes::standards::{self, MtaStsSeen};

/// What the mail and DNS records of one domain showed. A component not probed (the
/// context does not want it) has nothing here.
#[derive(Debug)]
pub struct MailSeen {
    pub domain: String,
    /// The domain's MX hosts (none when that lookup failed).
    pub mx: Vec<String>,
    /// Why the MX lookup failed: the checks that need it are not assessable.
    pub mx_failed: Option<String>,
    /// The domain publishes MX records (false when that lookup failed).
    pub handles_mail: bool,
    /// The SPF record, or the failure of its TXT lookup; not looked up when the MX
    /// lookup failed.
    pub spf: Option<Result<SpfSeen, DnsError>>,
    /// The DKIM keys; not looked up when the MX lookup failed.
    pub dkim: Option<DkimSeen>,
    pub dmarc: Option<Result<DmarcSeen, DnsError>>,
    pub standards: Option<StandardsSeen>,
}

/// The domain's records and services the it_standardization checks judge.
#[derive(Debug)]
pub struct StandardsSeen {
    /// DNSSEC validation of the domain; `None` with no validating resolver configured.
    pub dnssec: Option<Result<Status, DnssecError>>,
    /// Whether the domain publishes CAA records.
    pub caa: Result<bool, DnsError>,
    /// For a domain that receives mail (its MX lookup answered with hosts): the TLS-RPT
    /// records and MTA-STS.
    pub tls_rpt: Option<Result<Vec<String>, DnsError>>,
    pub mta_sts: Option<Result<MtaStsSeen, DnsError>>,
    /// The website host and the mail hosts inside the domain, each with whether it has
    /// an AAAA record.
    pub ipv6: Vec<(String, Result<bool, DnsError>)>,
    pub website: Option<WebsiteSeen>,
}

/// The company's website host, when it lies in the domain.
#[derive(Debug)]
pub struct WebsiteSeen {
    pub host: String,
    /// It accepts connections on 443.
    pub https: bool,
    /// What its `/.well-known/security.txt` answered (status, body), or why not.
    pub security_txt: Result<(u16, String), String>,
    /// It accepts connections on 80 (asked only when 443 does not).
    pub http: bool,
}

/// The mail and DNS records of `domain` (`website_host` is the host of the company's
/// website when it lies in this domain; `dkim_selectors` the selectors the company
/// names). A lookup that fails (timeout, SERVFAIL, REFUSED) is kept as such, and the
/// other lookups go on; only a domain that does not exist, or whose existence cannot be
/// asked, is an error.
pub async fn mail(
    ctx: &Context,
    domain: &str,
    website_host: Option<&str>,
    dkim_selectors: &[String],
) -> Result<MailSeen, DnsError> {
    let dns = ctx.guard.dns();
    let domain = crate::dns::host_name(domain);
    if dns.nxdomain(&domain).await? {
        return Err(DnsError::NoSuchDomain(domain));
    }
    let (mx, mx_failed) = match dns.mx(&domain).await {
        Ok(mx) => (mx, None),
        Err(e) => (Vec::new(), Some(format!("the MX lookup of {domain} failed: {e}"))),
    };
    let handles_mail = !mx.is_empty();
    let mut seen =
        MailSeen { domain, mx, mx_failed, handles_mail, spf: None, dkim: None, dmarc: None, standards: None };
    let domain = seen.domain.as_str();
    let mx_answered = seen.mx_failed.is_none();
    if ctx.wants(V::Spf) && mx_answered {
        seen.spf = Some(mail::spf(dns, domain).await);
    }
    if ctx.wants(V::Dkim) && mx_answered {
        seen.dkim = Some(mail::dkim(dns, domain, dkim_selectors, &ctx.selectors).await);
    }
    if ctx.wants(V::Dmarc) {
        seen.dmarc = Some(mail::dmarc(dns, domain).await);
    }
    if ctx.wants(V::ItStandardization) {
        seen.standards = Some(standards_of(ctx, &seen, website_host).await);
    }
    Ok(seen)
}

async fn standards_of(ctx: &Context, seen: &MailSeen, website_host: Option<&str>) -> StandardsSeen {
    let domain = seen.domain.as_str();
    let dnssec = match &ctx.validator {
        Some(validator) => Some(validator.zone_status(domain).await),
        None => None,
    };
    let caa = standards::caa(&ctx.guard, domain).await;
    let (mut tls_rpt, mut mta_sts) = (None, None);
    if seen.mx_failed.is_none() && seen.handles_mail {
        tls_rpt = Some(standards::tls_rpt(&ctx.guard, domain).await);
        mta_sts = Some(standards::mta_sts(&ctx.guard, ctx.lab_root.as_deref(), domain).await);
    }
    // IPv6 on the website host and the mail hosts inside the domain.
    let mut hosts: Vec<String> = website_host.map(crate::dns::host_name).into_iter().collect();
    for h in &seen.mx {
        if (h == domain || h.ends_with(&format!(".{domain}"))) && !hosts.contains(h) {
            hosts.push(h.clone());
        }
    }
    let mut ipv6 = Vec::new();
    for host in hosts {
        let aaaa = standards::ipv6(&ctx.guard, &host).await;
        ipv6.push((host, aaaa));
    }
    let mut website = None;
    if let Some(web) = website_host {
        let https = standards::listens(&ctx.guard, web, 443).await;
        let security_txt = standards::security_txt(&ctx.guard, web, https).await;
        let http = !https && standards::listens(&ctx.guard, web, 80).await;
        website = Some(WebsiteSeen { host: web.to_owned(), https, security_txt, http });
    }
    StandardsSeen { dnssec, caa, tls_rpt, mta_sts, ipv6, website }
}
