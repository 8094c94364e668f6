//! The gathering step of a scan: everything the scanner looks at, and nothing it
//! judges. One company domain's scan ([`domain`]) is a sequence of named stages under
//! one budget ([`crate::probes::Limits`]): discovery (DNS sources, wordlist, CT search,
//! the company's own hosts), mail and standards, the web rounds (each visit's
//! certificate names, links and redirects are candidates of the next round), ports, the
//! other web ports (every HTTP or TLS service beyond 80 and 443 is an origin of its
//! own), TLS, software. Every name a source offers is parsed (`model::Domain`) before it
//! becomes a candidate; the names refused are in `skipped`. A stage that reaches a cap
//! or the deadline keeps what it has and adds a note.
//!
//! What it saw is the domain's [`Observations`], which the checks
//! ([`crate::checks`]) judge. Two kinds of observation are handed to the checks as soon
//! as they are made, through a [`Sink`], and not kept: the domain's mail records
//! ([`MailSeen`]) and each web visit ([`VisitSeen`]) — a visit's pages are what
//! [`crate::probes::Limits::page_bytes`] bounds, so they are dropped once judged.
//! [`host`] gathers what a rescan of one host for one risk vector looks at.

mod budget;
mod host;
mod mail;

use std::collections::BTreeMap;
use std::net::IpAddr;

use model::RiskVector;

pub use host::{HostSeen, host, host_software, unreached_host};
pub use mail::{MailSeen, StandardsSeen, WebsiteSeen, mail};

use crate::discovery::{Asset, Candidate, Skipped};
use crate::dns::DnsError;
use crate::guard::Refusal;
use crate::probes::digital::{self, PagesSeen};
use crate::probes::headers::{self, Front};
use crate::probes::ports::{self, OpenPort};
use crate::probes::web::{self, Endpoint, Visit};
use crate::probes::{CONCURRENT_VISITS, Context, standards};
use crate::software::Software;
use crate::tlsprobe::TlsReport;
use budget::Budget;

/// What one company domain's scan observed, besides what it handed to its [`Sink`].
#[derive(Debug, Default)]
pub struct Observations {
    pub domain: String,
    /// The hosts kept (in the order they were found).
    pub assets: Vec<Asset>,
    /// Names offered by a source that were not taken, with the reason.
    pub skipped: Vec<Skipped>,
    /// What a name never created under the domain resolves to (a wildcard record).
    pub wildcard: Vec<IpAddr>,
    /// Hosts the guard does not probe, and why: every check on them is not assessable.
    pub unreached: Vec<(String, Refusal)>,
    /// The CNAMEs whose target does not exist (name, target); `None` when
    /// digitalization is not probed.
    pub dangling: Option<Vec<(String, String)>>,
    /// The ports of the hosts that answered, and what answered there (in the order
    /// they were seen).
    pub endpoints: Vec<Endpoint>,
    /// The port scans; `None` when the port stage did not run.
    pub port_scans: Option<PortScans>,
    /// The open ports of every host, identified (by host and port).
    pub open_ports: Vec<OpenPort>,
    /// The web origins on other ports ([`other_web_port`]).
    pub other_origins: Vec<OriginSeen>,
    /// The TLS endpoints probed (HTTPS hosts, mail hosts' SMTP/IMAP/POP3 ports, and
    /// other ports that answered a ClientHello), and those whose probe failed (target,
    /// why).
    pub tls: Vec<TlsReport>,
    pub tls_failed: Vec<(String, String)>,
    /// The software the fingerprints found, per host.
    pub software: Vec<Software>,
    /// Whether the domain receives mail (publishes MX records).
    pub handles_mail: bool,
    /// Web origins with an application to judge (2xx, not a parked or default page).
    pub web_origins: u32,
    /// The front page titles of the hosts visited (host, title), one per visit.
    pub titles: Vec<(String, String)>,
    /// Where the scan stopped at its budget; empty for a complete scan.
    pub notes: Vec<String>,
    /// One line per stage: how long it took and what it found.
    pub stages: Vec<Stage>,
}

/// One host of a web round: the visit, and what its page checks saw on the front
/// page's origin (nothing when digitalization is not probed).
#[derive(Debug)]
pub struct VisitSeen {
    pub visit: Visit,
    pub pages: PagesSeen,
}

/// A web origin on another port: its front page and what its page checks saw.
#[derive(Debug)]
pub struct OriginSeen {
    pub host: String,
    pub front: Front,
    pub pages: PagesSeen,
}

/// The port stage: the hosts it was to scan, and what each one it got to showed.
#[derive(Debug, Default)]
pub struct PortScans {
    /// Every host with an address the guard admits, those that answered the web rounds
    /// first.
    pub hosts: Vec<String>,
    /// Per host scanned: its open ports, why it was not reached, or `None` when its scan
    /// took more than [`PORT_SCAN_TIME`]. A host missing was not reached before the
    /// stage's time ran out.
    pub scanned: BTreeMap<String, Option<Result<Vec<OpenPort>, ports::Unreached>>>,
    /// The ports tried on each host.
    pub tried: usize,
}

/// A stage of a domain scan, for the scan's report.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Stage {
    pub name: &'static str,
    pub millis: u64,
    /// The time the stage was given (its own, or what was left of the scan's deadline
    /// when that was less).
    pub budget_millis: u64,
    pub summary: String,
}

/// Where the observations a scan does not keep go as they are made: the checks.
pub trait Sink {
    /// The domain's mail records; says how many findings and checks they made (for the
    /// stage's report).
    fn mail(&mut self, seen: &MailSeen) -> (usize, usize);
    /// One web visit.
    fn visit(&mut self, seen: &VisitSeen);
}

/// What the company itself says of its footprint, for a scan of one of its domains.
#[derive(Debug, Clone, Default)]
pub struct Footprint {
    /// Names (under the scanned domain) and addresses the company added, each with the
    /// evidence of its attribution (who added it, when, why): scanned as its hosts.
    pub claimed: Vec<(model::FootprintAsset, String)>,
    /// Assets removed by accepted disputes: never admitted, whatever source offers them.
    pub excluded: Vec<model::FootprintAsset>,
}

/// Hosts of the company's own addresses take this name: the address itself.
const COMPANY_SOURCE: &str = "company";
/// Mail ports whose TLS is probed on the domain's MX hosts (STARTTLS on 25 and 587).
const MAIL_TLS_PORTS: [u16; 5] = [25, 465, 587, 993, 995];
/// TLS endpoints probed at once.
const CONCURRENT_TLS: usize = 8;
/// Overall time for one host's visit, and again for its digitalization page checks:
/// every request has its own timeout, and this bounds their sum.
pub const VISIT_TIME: std::time::Duration = std::time::Duration::from_secs(30);
/// Overall time for one host's port scan.
pub const PORT_SCAN_TIME: std::time::Duration = std::time::Duration::from_secs(60);
/// Overall time for one TLS endpoint's enumeration (dozens of handshakes).
const TLS_PROBE_TIME: std::time::Duration = std::time::Duration::from_secs(120);
/// Rounds of the web visit: the hosts a round discovers (certificate names, links) are
/// visited in the next, up to this many.
const WEB_ROUNDS: usize = 3;
/// Hosts port-scanned at once.
const CONCURRENT_HOSTS: usize = 8;

/// Does the scan need the software inventory (fingerprints of pages and services)?
fn wants_software(ctx: &Context) -> bool {
    use model::RiskVector as V;
    [V::Sbom, V::Vulnerabilities].into_iter().any(|v| ctx.wants(v))
}

fn wants_tls(ctx: &Context) -> bool {
    use model::RiskVector as V;
    [V::CertificateInfo, V::CertificateConf, V::CertificateCve].into_iter().any(|v| ctx.wants(v))
}

/// Gathers what one company domain shows, within `footprint` (the names and addresses
/// the company added are hosts of the scan, source `company`; the assets it had removed
/// are never admitted): the stages of the module's doc, under the context's budget.
/// `website_host` is the company's website host when it lies in the domain,
/// `dkim_selectors` the DKIM selectors it names. A domain that does not exist is an
/// error, as is a mail stage that fails or does not finish in its time (a partial mail
/// check would read as records missing).
pub async fn domain(
    ctx: &Context,
    domain: &str,
    website_host: Option<&str>,
    wordlist: &[String],
    dkim_selectors: &[String],
    footprint: &Footprint,
    sink: &mut (dyn Sink + Send),
) -> Result<Observations, DnsError> {
    let domain = crate::dns::host_name(domain);
    let mut budget = Budget::new(&ctx.limits);
    budget.excluded = footprint.excluded.clone();
    let dns = ctx.guard.dns();
    // A domain that does not exist is not rated: every record would read as missing.
    if dns.nxdomain(&domain).await? {
        return Err(DnsError::NoSuchDomain(domain));
    }
    let mut obs = Observations { domain, ..Observations::default() };
    discovery_stage(ctx, &mut obs, wordlist, footprint, &mut budget).await?;
    mail_stage(ctx, &mut obs, website_host, dkim_selectors, &mut budget, sink).await?;

    // The web rounds.
    budget.begin(budget.limits.stages.web);
    let web = web_rounds(ctx, &mut obs, &mut budget, sink).await;
    obs.endpoints = web.endpoints;
    obs.web_origins = web.web_origins;
    obs.titles = web.titles;
    // Hosts the guard will not probe: every check on them is not assessable with the
    // reason (never a pass).
    obs.unreached = digital::unreached(&ctx.guard, &obs.assets);
    if ctx.wants(RiskVector::Digitalization) {
        obs.dangling = Some(digital::dangling(dns, &obs.assets).await);
    }
    budget.stage("web rounds", format!("{} hosts visited, {} endpoints", budget.visits, obs.endpoints.len()));

    port_stage(ctx, &mut obs, &mut budget).await;
    let mut software = web.software;
    other_web_stage(ctx, &mut obs, &mut software, &mut budget).await;
    tls_stage(ctx, &mut obs, &mut budget).await;

    // Software: what the visits showed (already fingerprinted), and the services.
    budget.begin(budget.limits.time);
    for s in detect(&ctx.fingerprints, &[], &obs.open_ports) {
        crate::software::merge(&mut software, s);
    }
    software.sort_by(|a, b| (&a.host, &a.name, &a.version).cmp(&(&b.host, &b.name, &b.version)));
    obs.software = software;
    budget.stage("software", format!("{} products", obs.software.len()));
    obs.notes = budget.notes();
    obs.stages = std::mem::take(&mut budget.stages);
    Ok(obs)
}

/// Discovery: the DNS sources and the wordlist, the CT search, the company's own hosts.
async fn discovery_stage(
    ctx: &Context,
    obs: &mut Observations,
    wordlist: &[String],
    footprint: &Footprint,
    budget: &mut Budget,
) -> Result<(), DnsError> {
    let (dns, domain) = (ctx.guard.dns(), obs.domain.as_str());
    let until = budget.begin(budget.limits.stages.discovery);
    obs.wildcard = crate::discovery::wildcard_addresses(dns, domain).await;
    let found = crate::discovery::discover(dns, domain, wordlist, &obs.wildcard, budget.names_left(), until).await?;
    if found.late > 0 {
        budget.out_of_time("discovery");
    }
    obs.skipped = budget.admit(&mut obs.assets, found);
    if let Some(template) = ctx.ct_search.as_ref().filter(|_| !budget.expired()) {
        match crate::discovery::ct_search(template, domain, ctx.guard.policy().read_timeout * 4).await {
            Ok(names) => {
                let candidates =
                    names.into_iter().map(|(name, evidence)| Candidate::new(name, "ct", evidence)).collect();
                let known: Vec<String> = obs.assets.iter().map(|a| a.name.clone()).collect();
                let found = crate::discovery::resolve_candidates(
                    dns,
                    domain,
                    candidates,
                    &obs.wildcard,
                    &known,
                    budget.names_left(),
                    until,
                )
                .await;
                if found.late > 0 {
                    budget.out_of_time("discovery");
                }
                obs.skipped.extend(budget.admit(&mut obs.assets, found));
            }
            Err(e) => tracing::warn!(domain, error = %e, "certificate-transparency search failed"),
        }
    }
    let claimed = company_hosts(ctx, domain, footprint, &mut obs.assets, &obs.wildcard, budget, until).await;
    obs.skipped.extend(claimed);
    budget.stage("discovery", format!("{} hosts, {} names skipped", obs.assets.len(), obs.skipped.len()));
    Ok(())
}

/// Mail and standards: DNS questions, bounded by their own timeouts; running out of
/// time here fails the scan (a partial mail check would read as records missing).
async fn mail_stage(
    ctx: &Context,
    obs: &mut Observations,
    website_host: Option<&str>,
    dkim_selectors: &[String],
    budget: &mut Budget,
    sink: &mut (dyn Sink + Send),
) -> Result<(), DnsError> {
    let until = budget.begin(budget.limits.stages.mail);
    let gathered = mail(ctx, &obs.domain, website_host, dkim_selectors);
    let seen = match tokio::time::timeout_at(until, gathered).await {
        Ok(seen) => seen?,
        Err(_) => {
            return Err(DnsError::Failed(format!(
                "{}: the mail and standards checks did not finish in their {} seconds",
                obs.domain,
                budget.limits.stages.mail.min(budget.limits.time).as_secs()
            )));
        }
    };
    obs.handles_mail = seen.handles_mail;
    let (findings, checks) = sink.mail(&seen);
    budget.stage("mail and standards", format!("{findings} findings, {checks} checks"));
    Ok(())
}

/// Ports: every host with an address the guard admits, a few at a time.
async fn port_stage(ctx: &Context, obs: &mut Observations, budget: &mut Budget) {
    use futures_util::StreamExt;
    let until = budget.begin(budget.limits.stages.ports);
    if ctx.wants(RiskVector::OpenPorts)
        || ctx.wants(RiskVector::ItStandardization)
        || wants_tls(ctx)
        || wants_software(ctx)
    {
        let mut hosts: Vec<String> = obs
            .assets
            .iter()
            .filter(|a| !a.addresses.is_empty() && !obs.unreached.iter().any(|(h, _)| h == &a.name))
            .map(|a| a.name.clone())
            .collect();
        // The hosts that answered the web rounds first: if the stage's time runs out on
        // hosts that hold their ports open, the live ones are scanned already.
        hosts.sort_by_key(|h| !obs.endpoints.iter().any(|e| &e.host == h));
        let total = hosts.len();
        // Unordered, so a host that holds its ports open does not keep the scans that
        // finished after it from counting when the stage's time runs out.
        type Scanned = Option<Result<Vec<OpenPort>, ports::Unreached>>;
        let scans: Vec<(String, Scanned)> = futures_util::stream::iter(hosts.clone())
            .map(|h| async move {
                let scanned = tokio::time::timeout(PORT_SCAN_TIME, ports::scan(&ctx.guard, &h, &ctx.ports)).await.ok();
                (h, scanned)
            })
            .buffer_unordered(CONCURRENT_HOSTS)
            .take_until(tokio::time::sleep_until(until))
            .collect()
            .await;
        if scans.len() < total {
            budget.out_of_time("the port scan");
        }
        let scanned: BTreeMap<String, Scanned> = scans.into_iter().collect();
        let mut open: Vec<OpenPort> =
            scanned.values().flatten().flat_map(|r| r.as_ref().ok()).flatten().cloned().collect();
        open.sort_by(|a, b| (&a.host, a.port).cmp(&(&b.host, b.port)));
        obs.open_ports = open;
        obs.port_scans = Some(PortScans { hosts, scanned, tried: ctx.ports.len() });
    }
    for p in &obs.open_ports {
        if !obs.endpoints.iter().any(|e| e.host == p.host && e.port == p.port) {
            let e = Endpoint {
                host: p.host.clone(),
                ip: p.ip,
                port: p.port,
                service: p.service.clone(),
                product: p.product.clone(),
                version: p.version.clone(),
                banner: p.banner.clone(),
            };
            budget.admit_endpoint(&mut obs.endpoints, e);
        }
    }
    budget.stage("ports", format!("{} open ports", obs.open_ports.len()));
}

/// Web origins on other ports: every HTTP or TLS service the port scan identified
/// beyond 80 and 443 (8080, 8443, 3000, 9200 …) is looked at like the front page of a
/// host (headers, page checks, fingerprints into `software`).
async fn other_web_stage(ctx: &Context, obs: &mut Observations, software: &mut Vec<Software>, budget: &mut Budget) {
    if ctx.quick {
        budget.stage("other web ports", "not looked at by a quick scan".to_owned());
        return;
    }
    let until = budget.begin(budget.limits.stages.other_web);
    let any_other = obs.open_ports.iter().any(other_web_port);
    if any_other && !budget.expired() {
        let (origins, complete) = other_origins(ctx, &obs.open_ports, until).await;
        if !complete {
            budget.out_of_time("the other web ports");
        }
        for o in &origins {
            if headers::assessable(&o.front) {
                obs.web_origins += 1;
            }
            if wants_software(ctx) {
                let v = Visit { host: o.host.clone(), pages: vec![o.front.clone()], ..Visit::default() };
                for s in detect(&ctx.fingerprints, std::slice::from_ref(&v), &[]) {
                    crate::software::merge(software, s);
                }
            }
        }
        obs.other_origins = origins;
    } else if any_other {
        budget.out_of_time("the other web ports");
    }
    budget.stage("other web ports", format!("{} web origins assessed in all", obs.web_origins));
}

/// TLS: port 443 of the hosts that answered there, the mail ports of the domain's MX
/// hosts, and any other port that answered a ClientHello.
async fn tls_stage(ctx: &Context, obs: &mut Observations, budget: &mut Budget) {
    let until = budget.begin(budget.limits.stages.tls);
    if wants_tls(ctx) && !budget.expired() {
        let domain = obs.domain.as_str();
        // A quick scan probes TLS on 443 only.
        let mx: Vec<String> = if ctx.quick {
            Vec::new()
        } else {
            ctx.guard
                .dns()
                .mx(domain)
                .await
                .unwrap_or_default()
                .into_iter()
                .filter(|h| crate::discovery::inside(h, domain))
                .collect()
        };
        let mut targets = Vec::new();
        let reached =
            obs.assets.iter().filter(|a| !a.addresses.is_empty() && !obs.unreached.iter().any(|(h, _)| h == &a.name));
        for a in reached {
            let https = obs.endpoints.iter().any(|e| e.host == a.name && e.port == 443);
            targets.extend(tls_targets(ctx, &a.name, https, mx.contains(&a.name)).await);
        }
        // Any other port that answered a ClientHello.
        for p in obs.open_ports.iter().filter(|p| p.service == "tls" && !ctx.quick) {
            if !targets.iter().any(|t| t.host == p.host && t.port == p.port) {
                targets.push(crate::tlsprobe::Target::new(&p.host, p.port));
            }
        }
        let total = targets.len();
        let (reports, done, failed) = probe_tls_until(ctx, targets, until).await;
        if done < total {
            budget.out_of_time("the TLS probes");
        }
        obs.tls = reports;
        obs.tls_failed = failed;
    } else if wants_tls(ctx) {
        budget.out_of_time("the TLS probes");
    }
    budget.stage("tls", format!("{} TLS endpoints", obs.tls.len()));
}

/// The software a scan saw: the fingerprints of every page of the visits and of every
/// identified open port, per host.
pub fn detect(rules: &crate::fingerprint::RuleSet, visits: &[Visit], open_ports: &[OpenPort]) -> Vec<Software> {
    use crate::fingerprint::{Observation, analyze};
    use crate::software::{from_detections, merge};
    let mut all = Vec::new();
    for v in visits {
        if let Some(hash) = v.favicon {
            let o = Observation { favicon: Some(hash), ..Observation::default() };
            for s in from_detections(&v.host, &analyze(rules, &o)) {
                merge(&mut all, s);
            }
        }
        for page in &v.pages {
            let o = Observation::http(&page.origin, &page.headers, &page.body);
            for s in from_detections(&v.host, &analyze(rules, &o)) {
                merge(&mut all, s);
            }
        }
    }
    for p in open_ports {
        let o = Observation::service(&p.banner, p.product.as_deref(), p.version.as_deref());
        for s in from_detections(&p.host, &analyze(rules, &o)) {
            merge(&mut all, s);
        }
    }
    all.sort_by(|a, b| (&a.host, &a.name, &a.version).cmp(&(&b.host, &b.name, &b.version)));
    all
}

/// What the web rounds found besides what they handed to the sink.
struct WebRounds {
    endpoints: Vec<Endpoint>,
    software: Vec<Software>,
    web_origins: u32,
    titles: Vec<(String, String)>,
}

/// One host of a web round: the visit, then (for digitalization) its page checks'
/// fetches, each within [`VISIT_TIME`]. A visit over its time is a visit that saw
/// nothing.
async fn visit_and_pages(ctx: &Context, host: String) -> VisitSeen {
    let visit = match tokio::time::timeout(VISIT_TIME, web::visit(ctx, &host)).await {
        Ok(v) => v,
        Err(_) => {
            tracing::debug!(host, "visit over its time");
            Visit { host, ..Visit::default() }
        }
    };
    // A quick scan reads the web root only.
    let pages = match (&visit.front, ctx.wants(RiskVector::Digitalization) && !ctx.quick) {
        (Some(front), true) => {
            tokio::time::timeout(VISIT_TIME, digital::pages(ctx, front, &visit.host)).await.unwrap_or_default()
        }
        _ => PagesSeen::default(),
    };
    VisitSeen { visit, pages }
}

/// Rounds of visits: every host with an address not yet visited, then the hosts their
/// certificates, links and redirects name. Each visit is handed to the sink as it
/// completes (headers, HTTPS, digitalization's page checks) and fingerprinted, and its
/// page bodies are dropped, so what a scan holds does not grow with the pages it reads.
async fn web_rounds(
    ctx: &Context,
    obs: &mut Observations,
    budget: &mut Budget,
    sink: &mut (dyn Sink + Send),
) -> WebRounds {
    use futures_util::StreamExt;
    let dns = ctx.guard.dns();
    let (domain, wildcard) = (obs.domain.as_str(), obs.wildcard.as_slice());
    let (assets, skipped) = (&mut obs.assets, &mut obs.skipped);
    let mut out = WebRounds { endpoints: Vec::new(), software: Vec::new(), web_origins: 0, titles: Vec::new() };
    let mut visited = std::collections::BTreeSet::new();
    for _ in 0..WEB_ROUNDS {
        let mut hosts: Vec<String> = assets
            .iter()
            .filter(|a| !a.addresses.is_empty() && !visited.contains(&a.name))
            .map(|a| a.name.clone())
            .collect();
        if hosts.is_empty() {
            break;
        }
        if ctx.quick {
            // The apex and its `www` first: a quick scan visits few hosts.
            let www = format!("www.{domain}");
            hosts.sort_by_key(|h| (h.as_str() != domain, h != &www));
        }
        let room = budget.limits.visits.saturating_sub(budget.visits);
        if hosts.len() > room {
            budget.visits_dropped += hosts.len() - room;
            hosts.truncate(room);
        }
        if hosts.is_empty() {
            break;
        }
        if budget.expired() {
            budget.out_of_time("the web rounds");
            break;
        }
        visited.extend(hosts.iter().cloned());
        let total = hosts.len();
        // Each name once (the least of its offers: certificate before link, then by
        // evidence, so the order visits finish in does not change the attribution).
        let mut candidates: BTreeMap<String, Candidate> = BTreeMap::new();
        let known: std::collections::HashSet<String> = assets.iter().map(|a| a.name.clone()).collect();
        let mut unoffered = 0usize;
        let mut done = 0;
        // Unordered, so that a host that never answers does not hold back the visits
        // that finished after it when the stage's time runs out.
        let mut visits = std::pin::pin!(
            futures_util::stream::iter(hosts)
                .map(|host| visit_and_pages(ctx, host))
                .buffer_unordered(budget.limits.concurrent_visits())
                .take_until(tokio::time::sleep_until(budget.until))
        );
        while let Some(seen) = visits.next().await {
            done += 1;
            sink.visit(&seen);
            let mut v = seen.visit;
            if v.front.as_ref().is_some_and(headers::assessable) {
                out.web_origins += 1;
            }
            if let Some(title) = v.front.as_ref().and_then(|f| crate::identity::page_title(&f.body)) {
                out.titles.push((v.host.clone(), title));
            }
            if wants_software(ctx) {
                for s in detect(&ctx.fingerprints, std::slice::from_ref(&v), &[]) {
                    crate::software::merge(&mut out.software, s);
                }
            }
            out.endpoints.append(&mut v.endpoints);
            let named = v.certificate_names.iter().map(|name| {
                let evidence = format!("named by the certificate of {}:443", v.host);
                Candidate::new(name.trim_start_matches("*."), "certificate", evidence)
            });
            let linked = v.linked.drain(..).map(|(name, evidence)| Candidate::new(name, "link", evidence));
            for c in named.chain(linked) {
                // Inside the domain, new, and no more than the budget can resolve: a
                // page of thousands of links costs a map lookup each.
                if !crate::discovery::inside(&c.name, domain) || known.contains(&c.name) {
                    continue;
                }
                let full = candidates.len() >= budget.names_left();
                match candidates.get_mut(&c.name) {
                    Some(kept) => {
                        if (&c.source, &c.evidence) < (&kept.source, &kept.evidence) {
                            *kept = c;
                        }
                    }
                    None if full => unoffered += 1,
                    None => {
                        candidates.insert(c.name.clone(), c);
                    }
                }
            }
            // The bodies are analysed: drop them now.
            v.front = None;
            v.pages.clear();
        }
        budget.visits += done;
        budget.names += unoffered;
        budget.names_dropped += unoffered;
        if done < total {
            budget.out_of_time("the web rounds");
            break;
        }
        let candidates: Vec<Candidate> = candidates.into_values().collect();
        let known: Vec<String> = known.into_iter().collect();
        let found = crate::discovery::resolve_candidates(
            dns,
            domain,
            candidates,
            wildcard,
            &known,
            budget.names_left(),
            budget.until,
        )
        .await;
        if found.late > 0 {
            budget.out_of_time("the web rounds");
        }
        skipped.extend(budget.admit(assets, found));
    }
    out
}

/// The hosts the company added that lie under `domain` (resolved like any candidate)
/// and its addresses (checked by the guard), admitted into `assets` within the budget.
/// Returns what was refused.
async fn company_hosts(
    ctx: &Context,
    domain: &str,
    footprint: &Footprint,
    assets: &mut Vec<Asset>,
    wildcard: &[std::net::IpAddr],
    budget: &mut Budget,
    until: tokio::time::Instant,
) -> Vec<Skipped> {
    let mut names = Vec::new();
    let mut addressed = Vec::new();
    let mut refused = Vec::new();
    for (asset, evidence) in &footprint.claimed {
        match asset {
            model::FootprintAsset::Name(n) if model::asset_under(n.as_str(), domain) => {
                if !assets.iter().any(|a| a.name == n.as_str()) {
                    names.push(Candidate::new(n.as_str(), COMPANY_SOURCE, evidence.clone()));
                }
            }
            model::FootprintAsset::Name(_) => {}
            other => {
                for ip in other.addresses() {
                    let name = ip.to_string();
                    if assets.iter().any(|a| a.name == name) {
                        continue;
                    }
                    // A company's own address is a public one; in the lab, a loopback one.
                    // (The guard admits every private range in lab mode: a company may not.)
                    let checked = match crate::guard::special_range(ip) {
                        Some(why) if !(ctx.guard.policy().allow_private && ip.is_loopback()) => {
                            Err(format!("{name}: a {why} address is not scanned as a company's own"))
                        }
                        _ => ctx.guard.check(&name, ip).map_err(|e| e.to_string()),
                    };
                    match checked {
                        Ok(()) => addressed.push(Asset {
                            name,
                            addresses: vec![ip],
                            source: COMPANY_SOURCE.to_owned(),
                            evidence: evidence.clone(),
                            cname: None,
                        }),
                        Err(reason) => refused.push(Skipped {
                            name,
                            source: COMPANY_SOURCE.to_owned(),
                            evidence: evidence.clone(),
                            reason,
                        }),
                    }
                }
            }
        }
    }
    if !names.is_empty() {
        let known: Vec<String> = assets.iter().map(|a| a.name.clone()).collect();
        let dns = ctx.guard.dns();
        let found =
            crate::discovery::resolve_candidates(dns, domain, names, wildcard, &known, budget.names_left(), until)
                .await;
        refused.extend(budget.admit(assets, found));
    }
    if !addressed.is_empty() {
        let resolved = crate::discovery::Resolved {
            assets: addressed,
            skipped: Vec::new(),
            looked_up: 0,
            over_budget: 0,
            late: 0,
        };
        refused.extend(budget.admit(assets, resolved));
    }
    refused
}

/// Is this open port a web origin the web rounds did not visit? HTTP (Elasticsearch
/// answers HTTP too) or TLS on any port but 80 and 443, and not a mail or directory
/// port whose TLS carries another protocol.
pub fn other_web_port(p: &OpenPort) -> bool {
    const NOT_WEB: [u16; 7] = [80, 443, 465, 587, 636, 993, 995];
    matches!(p.service.as_str(), "http" | "tls" | "elasticsearch") && !NOT_WEB.contains(&p.port)
}

/// Fetches `/` of the origin an open port serves (https when the port spoke TLS) and,
/// for digitalization, makes the page checks' fetches there. `None` when no HTTP answered.
async fn visit_origin(ctx: &Context, p: OpenPort) -> Option<OriginSeen> {
    let target = crate::guard::target(&p.host).ok()?;
    let origin = crate::http::Origin { https: p.service == "tls", target, port: p.port };
    let origin_header = [("Origin", headers::PROBE_ORIGIN)];
    let response = crate::http::get_origin(
        &ctx.guard,
        ctx.lab_root.as_deref(),
        &origin,
        "/",
        crate::http::Verify::No,
        &origin_header,
    )
    .await
    .map_err(|e| tracing::debug!(origin = %origin, error = %e, "no HTTP on the port"))
    .ok()?;
    let front = Front {
        origin: format!("{origin}/"),
        https: origin.https,
        port: p.port,
        status: response.status,
        headers: response.headers,
        body: response.body,
    };
    let pages = if ctx.wants(RiskVector::Digitalization) {
        digital::pages(ctx, &front, &p.host).await
    } else {
        PagesSeen::default()
    };
    Some(OriginSeen { host: p.host, front, pages })
}

/// The web origins of `open` beyond 80 and 443 ([`other_web_port`]), each fetched and
/// fetched with the page checks' pages ([`visit_origin`]) within [`VISIT_TIME`], a few at a time, until
/// `deadline`: the scan's "other web ports" stage, and what a rescan of one host looks
/// at besides its front page. Also says whether every origin was looked at in time.
async fn other_origins(ctx: &Context, open: &[OpenPort], deadline: tokio::time::Instant) -> (Vec<OriginSeen>, bool) {
    use futures_util::StreamExt;
    let other: Vec<OpenPort> = open.iter().filter(|p| other_web_port(p)).cloned().collect();
    let total = other.len();
    let visited: Vec<Option<OriginSeen>> = futures_util::stream::iter(other)
        .map(|p| async move { tokio::time::timeout(VISIT_TIME, visit_origin(ctx, p)).await.ok().flatten() })
        .buffer_unordered(CONCURRENT_VISITS)
        .take_until(tokio::time::sleep_until(deadline))
        .collect()
        .await;
    let complete = visited.len() == total;
    let mut origins: Vec<_> = visited.into_iter().flatten().collect();
    origins.sort_by(|a, b| (&a.host, a.front.port).cmp(&(&b.host, b.front.port)));
    (origins, complete)
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
pub(crate) async fn probe_tls(ctx: &Context, targets: Vec<crate::tlsprobe::Target>) -> Vec<crate::tlsprobe::TlsReport> {
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

/// [`probe_tls`] until `deadline`: the reports finished by then, and how many targets
/// were done.
async fn probe_tls_until(
    ctx: &Context,
    targets: Vec<crate::tlsprobe::Target>,
    deadline: tokio::time::Instant,
) -> (Vec<crate::tlsprobe::TlsReport>, usize, Vec<(String, String)>) {
    use futures_util::StreamExt;
    let lab_root = ctx.lab_root.as_deref();
    let results: Vec<Result<crate::tlsprobe::TlsReport, (String, String)>> = futures_util::stream::iter(targets)
        .map(|t| async move {
            match tokio::time::timeout(TLS_PROBE_TIME, crate::tlsprobe::probe(&ctx.guard, &t, lab_root, ctx.now)).await
            {
                Ok(Ok(r)) => Ok(r),
                Ok(Err(e)) => {
                    tracing::debug!(target = %t.asset(), error = %e, "TLS probe failed");
                    Err((t.asset(), format!("the TLS probe failed: {e}")))
                }
                Err(_) => {
                    tracing::debug!(target = %t.asset(), "TLS probe over its time");
                    Err((t.asset(), format!("the TLS probe took more than {} s", TLS_PROBE_TIME.as_secs())))
                }
            }
        })
        .buffer_unordered(CONCURRENT_TLS)
        .take_until(tokio::time::sleep_until(deadline))
        .collect()
        .await;
    let done = results.len();
    let (mut reports, mut failed) = (Vec::new(), Vec::new());
    for r in results {
        match r {
            Ok(report) => reports.push(report),
            Err(f) => failed.push(f),
        }
    }
    reports.sort_by(|a, b| a.target.cmp(&b.target));
    failed.sort();
    (reports, done, failed)
}
