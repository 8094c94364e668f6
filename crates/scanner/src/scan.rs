//! A scan is gather, then the checks. A company domain's full scan
//! ([`scan_domain_within`]) gathers what the domain shows ([`crate::gather::domain`])
//! and runs every check the context wants on every asset ([`Checks::every`]); a rescan
//! ([`rescan_host`]) gathers what one host shows for one risk vector
//! ([`crate::gather::host`]) and runs that vector's check ([`Checks::one`]). Both judge
//! with the same functions, so a rescan finds on its host what a scan finds there.

use model::RiskVector;

use crate::check::Check;
use crate::checks::{Checks, Judged};
use crate::dns::DnsError;
use crate::finding::ScanFinding;
use crate::gather::{self, Footprint, MailSeen, Observations, Sink, Stage, VisitSeen};
use crate::probes::Context;
use crate::probes::ports::OpenPort;
use crate::probes::web::Endpoint;

/// What a scan of one company domain found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DomainScan {
    pub domain: String,
    pub assets: Vec<crate::discovery::Asset>,
    /// The ports of the assets that answered, and what answered there.
    pub endpoints: Vec<Endpoint>,
    /// The open ports of the assets, identified.
    pub open_ports: Vec<OpenPort>,
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
    /// Every check made, with its outcome: pass, finding, or not assessable and why.
    pub checks: Vec<Check>,
    /// Names offered by a source that were not taken, with the reason.
    pub skipped: Vec<crate::discovery::Skipped>,
    /// The front page titles of the hosts visited (host, title).
    pub titles: Vec<(String, String)>,
    /// Where the scan stopped at its budget ("truncated: 500 hosts, the cap"); empty for a
    /// complete scan.
    pub notes: Vec<String>,
    /// One line per stage: how long it took and what it found.
    pub stages: Vec<Stage>,
}

impl DomainScan {
    /// Did the scan stop at a cap or its deadline (so what it did not see is unknown,
    /// not fixed)?
    pub fn truncated(&self) -> bool {
        !self.notes.is_empty()
    }

    /// What the company's site says it is called ([`crate::identity`]): on the website
    /// host, then `www`, then the domain itself, the organisation the certificate on
    /// 443 names, else the front page's title.
    pub fn site_name(&self, website_host: Option<&str>) -> Option<String> {
        let www = format!("www.{}", self.domain);
        let hosts = website_host.into_iter().chain([www.as_str(), self.domain.as_str()]);
        hosts.into_iter().find_map(|host| {
            let target = format!("{host}:443");
            let org =
                self.tls.iter().find(|t| t.target == target).and_then(|t| t.certificate.as_ref()?.organization.clone());
            org.or_else(|| {
                let (_, title) = self.titles.iter().find(|(h, _)| h == host)?;
                crate::identity::name_from_title(title)
            })
        })
    }

    /// The scan of what `obs` saw, `judged`: what the context wants, each finding once.
    fn of(ctx: &Context, obs: Observations, judged: Judged) -> DomainScan {
        let Judged { mut findings, mut checks } = judged;
        findings.retain(|f| ctx.wants(f.risk_vector));
        checks.retain(|c| ctx.wants(c.risk_vector));
        let Observations { domain, mut assets, mut endpoints, open_ports, tls, software, titles, .. } = obs;
        assets.sort_by(|a, b| a.name.cmp(&b.name));
        endpoints.sort_by(|a, b| (&a.host, a.port).cmp(&(&b.host, b.port)));
        let mut seen = std::collections::BTreeSet::new();
        findings.retain(|f| seen.insert((f.code.clone(), f.asset.clone(), f.cve.clone(), f.component.clone())));
        DomainScan {
            domain,
            assets,
            endpoints,
            open_ports,
            tls,
            software,
            mail: obs.handles_mail,
            web_origins: obs.web_origins,
            titles,
            findings,
            checks,
            skipped: obs.skipped,
            notes: obs.notes,
            stages: obs.stages,
        }
    }
}

/// The checks of a scan, fed by its gathering as it goes.
struct Judging<'a> {
    checks: Checks<'a>,
    out: Judged,
}

impl Sink for Judging<'_> {
    fn mail(&mut self, seen: &MailSeen) -> (usize, usize) {
        let (findings, checks) = (self.out.findings.len(), self.out.checks.len());
        self.checks.mail(seen, &mut self.out);
        (self.out.findings.len() - findings, self.out.checks.len() - checks)
    }

    fn visit(&mut self, seen: &VisitSeen) {
        self.checks.visit(seen, &mut self.out);
    }
}

/// A company domain's full scan (see [`crate::gather`] for its stages).
pub async fn scan_domain(
    ctx: &Context,
    domain: &str,
    website_host: Option<&str>,
    wordlist: &[String],
) -> Result<DomainScan, DnsError> {
    scan_domain_with(ctx, domain, website_host, wordlist, &[]).await
}

/// [`scan_domain`] with the DKIM selectors the company names (tried first; no key at
/// them is `dkim.missing`, where no key at the curated selectors alone is not
/// assessable).
pub async fn scan_domain_with(
    ctx: &Context,
    domain: &str,
    website_host: Option<&str>,
    wordlist: &[String],
    dkim_selectors: &[String],
) -> Result<DomainScan, DnsError> {
    scan_domain_within(ctx, domain, website_host, wordlist, dkim_selectors, &Footprint::default()).await
}

/// [`scan_domain_with`] within the company's own footprint: the names and addresses it
/// added are hosts of the scan (source `company`, addresses through the guard), the
/// assets it had removed are never admitted. Every check the context wants runs on
/// every asset.
pub async fn scan_domain_within(
    ctx: &Context,
    domain: &str,
    website_host: Option<&str>,
    wordlist: &[String],
    dkim_selectors: &[String],
    footprint: &Footprint,
) -> Result<DomainScan, DnsError> {
    let mut judging = Judging { checks: Checks::every(ctx), out: Judged::default() };
    let obs = gather::domain(ctx, domain, website_host, wordlist, dkim_selectors, footprint, &mut judging).await?;
    let Judging { checks, mut out } = judging;
    checks.rest(&obs, &mut out);
    Ok(DomainScan::of(ctx, obs, out))
}

/// What a rescan of one host saw: its findings, or why the host was not probed (then
/// it saw nothing, and nothing it did not see is fixed).
#[derive(Debug, Clone, Default)]
pub struct Rescanned {
    pub findings: Vec<ScanFinding>,
    pub unreached: Option<String>,
}

/// A rescan of one host below a company domain for one risk vector ([`gather::host`]
/// says what it looks at), judged by that vector's check; only findings on the host
/// (or below it) are returned. The stack-consistency check needs every host, so it
/// runs only when the host is the domain (use [`scan_domain`]).
pub async fn rescan_host(
    ctx: &Context,
    domain: &str,
    host: &str,
    website_host: Option<&str>,
    vector: RiskVector,
    dkim_selectors: &[String],
) -> Result<Rescanned, DnsError> {
    let seen = gather::host(ctx, domain, host, website_host, vector, dkim_selectors).await?;
    if let Some(why) = seen.unreached {
        return Ok(Rescanned { findings: Vec::new(), unreached: Some(why) });
    }
    let checks = Checks::one(ctx, vector);
    let mut out = Judged::default();
    if let Some(mail) = &seen.mail {
        checks.mail(mail, &mut out);
    }
    for visit in &seen.visits {
        checks.visit(visit, &mut out);
    }
    checks.rest(&seen.obs, &mut out);
    let host = crate::dns::host_name(host);
    let mut found = out.findings;
    found.retain(|f| f.risk_vector == vector && model::asset_under(&f.asset, &host));
    Ok(Rescanned { findings: found, unreached: None })
}

/// The DNS and mail checks of one company domain (spf, dkim, dmarc, it_standardization):
/// `website_host` is the host of the company's website when it lies in this domain.
pub async fn mail_and_standards(
    ctx: &Context,
    domain: &str,
    website_host: Option<&str>,
) -> Result<Vec<ScanFinding>, DnsError> {
    Ok(mail_and_standards_checked(ctx, domain, website_host, &[]).await?.findings)
}

/// What the mail and standards checks of one domain found, and every check made.
#[derive(Debug, Clone, Default)]
pub struct MailStandards {
    pub findings: Vec<ScanFinding>,
    pub checks: Vec<Check>,
    /// The domain publishes MX records (false when that lookup failed).
    pub handles_mail: bool,
}

/// [`mail_and_standards`] with every check's outcome. A lookup that fails (timeout,
/// SERVFAIL, REFUSED) makes the checks that needed it not assessable, with the reason;
/// it is never a finding, and the other checks go on. Only a domain that does not
/// exist, or whose existence cannot be asked, ends them all (an error). `dkim_selectors`
/// are the selectors the company names (tried first; their keys' absence is a finding).
pub async fn mail_and_standards_checked(
    ctx: &Context,
    domain: &str,
    website_host: Option<&str>,
    dkim_selectors: &[String],
) -> Result<MailStandards, DnsError> {
    let seen = gather::mail(ctx, domain, website_host, dkim_selectors).await?;
    let mut out = Judged::default();
    Checks::every(ctx).mail(&seen, &mut out);
    Ok(MailStandards { findings: out.findings, checks: out.checks, handles_mail: seen.handles_mail })
}
