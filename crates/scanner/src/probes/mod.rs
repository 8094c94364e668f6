//! The probes, one module per group of components. Each takes what it needs (the guard,
//! the DNS client, the lab CA in lab mode) and returns findings with evidence.

pub mod digital;
pub mod headers;
pub mod mail;
pub mod ports;
pub mod standards;
pub mod web;

use time::OffsetDateTime;

use crate::check::{self, Check};
use crate::discovery::Candidate;
use crate::dns::DnsError;
use crate::dnssec::Validator;
use crate::finding::ScanFinding;
use crate::guard::Guard;

/// What every probe of a scan shares.
#[derive(Clone)]
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
    /// The time the scan is judged at (a worker sets it to each job's start).
    pub now: OffsetDateTime,
    /// What one domain's scan may spend.
    pub limits: Limits,
}

/// The budget of one domain's scan (docs/SECURITY.md §1): a hostile zone (a wildcard
/// whose pages link thousands of names, say) makes a scan that stops at these and says
/// so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Candidate names resolved, over every source and round.
    pub names: usize,
    /// Hosts kept as assets.
    pub hosts: usize,
    /// Endpoints (host and port that answered) kept.
    pub endpoints: usize,
    /// Hosts visited by the web rounds: each visit fetches the front page over HTTPS or
    /// HTTP, the plain-HTTP answer, the favicon and, for digitalization, the curated
    /// admin and listing paths, a soft-404 probe and at most
    /// [`digital::MAX_LINKED_PAGES`] linked pages, so the pages a scan's web rounds
    /// fetch are at most this times [`PAGES_PER_VISIT`].
    pub visits: usize,
    /// Page bytes held in memory at once by the web visits: visits run at once are this
    /// divided by [`VISIT_BYTES`] (at least one, at most [`CONCURRENT_VISITS`]). Bodies
    /// are dropped once a visit is analysed, so this bounds what pages cost.
    pub page_bytes: usize,
    /// Wall-clock time for the whole domain scan; a stage that runs out keeps what it has.
    pub time: std::time::Duration,
    /// The time each stage may take, within `time`.
    pub stages: StageTimes,
}

/// The time of each stage of a domain scan: a stage that runs past its own stops there
/// with what it has, so one slow stage (thousands of names to resolve, a host that
/// trickles) leaves the later stages their time. The scan's overall deadline
/// ([`Limits::time`]) still bounds them all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageTimes {
    pub discovery: std::time::Duration,
    /// Mail and standards: DNS questions; running out of it fails the scan (a partial
    /// mail check would read as records missing).
    pub mail: std::time::Duration,
    pub web: std::time::Duration,
    pub ports: std::time::Duration,
    pub other_web: std::time::Duration,
    pub tls: std::time::Duration,
}

impl Default for StageTimes {
    fn default() -> Self {
        let secs = std::time::Duration::from_secs;
        StageTimes {
            discovery: secs(120),
            mail: secs(60),
            web: secs(180),
            ports: secs(180),
            other_web: secs(60),
            tls: secs(240),
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            names: 5_000,
            hosts: 500,
            endpoints: 5_000,
            visits: 300,
            page_bytes: 128 * 1024 * 1024,
            time: std::time::Duration::from_secs(600),
            stages: StageTimes::default(),
        }
    }
}

impl Limits {
    /// Web visits run at once: as many as [`Limits::page_bytes`] holds.
    pub fn concurrent_visits(&self) -> usize {
        (self.page_bytes / VISIT_BYTES).clamp(1, CONCURRENT_VISITS)
    }
}

/// The most pages one web visit fetches (see [`Limits::visits`]).
pub const PAGES_PER_VISIT: usize =
    3 + digital::ADMIN_PATHS.len() + digital::LISTING_PATHS.len() + digital::MAX_LINKED_PAGES + 1;

/// The most page bytes one visit holds at once: its front page (kept, and a copy for
/// the fingerprints), the plain-HTTP answer, the favicon, and the page its
/// digitalization checks are reading with the front page's copy they compare against,
/// each at most [`crate::http::MAX_BODY`].
pub const VISIT_BYTES: usize = 8 * crate::http::MAX_BODY;

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
            limits: Limits::default(),
        }
    }
}

impl Context {
    /// Is `vector` probed by this scan?
    pub fn wants(&self, vector: model::RiskVector) -> bool {
        self.vectors.is_empty() || self.vectors.contains(&vector)
    }

    /// Lab mode: the guard admits the lab's range only (127.0.0.0/8), connects by the lab's
    /// port map, asks the lab's DNS server, trusts the lab CA and validates DNSSEC from
    /// the lab's anchors (the trust-anchor file's text).
    pub fn lab(
        resolver: std::net::SocketAddr,
        port_map: std::collections::BTreeMap<u16, u16>,
        ca_root_der: Option<Vec<u8>>,
        trust_anchors: &str,
    ) -> Result<Context, LabContextError> {
        let policy = crate::Policy { allow_private: true, lab_only: true, port_map, ..crate::Policy::default() };
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
    /// Every check made, with its outcome: pass, finding, or not assessable and why.
    pub checks: Vec<Check>,
    /// Names offered by a source that were not taken, with the reason.
    pub skipped: Vec<crate::discovery::Skipped>,
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

/// What cut a stage short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// The stage's own time ([`StageTimes`]).
    Budget(std::time::Duration),
    /// The scan's overall deadline ([`Limits::time`]).
    Deadline,
}

/// The running account of a domain scan: the deadlines, what is spent and what was left
/// out; [`Budget::notes`] says it in words at the end.
struct Budget {
    limits: Limits,
    deadline: tokio::time::Instant,
    names: usize,
    visits: usize,
    names_dropped: usize,
    hosts_dropped: usize,
    endpoints_dropped: usize,
    visits_dropped: usize,
    /// The stages cut short, and by what.
    late: Vec<(&'static str, Cut)>,
    stages: Vec<Stage>,
    /// When the current stage started, and the end of its time.
    started: tokio::time::Instant,
    until: tokio::time::Instant,
    /// Assets removed from the company's footprint: never admitted as hosts.
    excluded: Vec<model::FootprintAsset>,
}

impl Budget {
    fn new(limits: &Limits) -> Budget {
        let now = tokio::time::Instant::now();
        Budget {
            limits: limits.clone(),
            deadline: now + limits.time,
            names: 0,
            visits: 0,
            names_dropped: 0,
            hosts_dropped: 0,
            endpoints_dropped: 0,
            visits_dropped: 0,
            late: Vec::new(),
            stages: Vec::new(),
            started: now,
            until: now + limits.time,
            excluded: Vec::new(),
        }
    }

    /// Starts a stage that may take `time` (less if the scan's deadline comes first);
    /// returns the end of its time.
    fn begin(&mut self, time: std::time::Duration) -> tokio::time::Instant {
        let now = tokio::time::Instant::now();
        self.started = now;
        self.until = (now + time).min(self.deadline);
        self.until
    }

    fn names_left(&self) -> usize {
        self.limits.names.saturating_sub(self.names)
    }

    /// Keeps the new assets the host cap has room for.
    fn admit(
        &mut self,
        assets: &mut Vec<crate::discovery::Asset>,
        resolved: crate::discovery::Resolved,
    ) -> Vec<crate::discovery::Skipped> {
        self.names += resolved.looked_up + resolved.over_budget;
        self.names_dropped += resolved.over_budget;
        let mut skipped = resolved.skipped;
        let mut new = resolved.assets;
        if !self.excluded.is_empty() {
            let (out, kept): (Vec<_>, Vec<_>) = new.into_iter().partition(|a| self.is_excluded(a));
            new = kept;
            skipped.extend(out.into_iter().map(|a| crate::discovery::Skipped {
                reason: "removed from the company's footprint (an accepted dispute): not scanned".to_owned(),
                name: a.name,
                source: a.source,
                evidence: a.evidence,
            }));
        }
        let room = self.limits.hosts.saturating_sub(assets.len());
        if new.len() > room {
            self.hosts_dropped += new.len() - room;
            new.truncate(room);
        }
        assets.extend(new);
        skipped
    }

    /// Is the host removed from the footprint: its name, or every one of its addresses?
    fn is_excluded(&self, a: &crate::discovery::Asset) -> bool {
        self.excluded.iter().any(|x| {
            x.covers(&a.name) || (!a.addresses.is_empty() && a.addresses.iter().all(|ip| x.covers_address(*ip)))
        })
    }

    /// Keeps the endpoints the endpoint cap has room for.
    fn admit_endpoint(&mut self, endpoints: &mut Vec<web::Endpoint>, e: web::Endpoint) {
        if endpoints.len() < self.limits.endpoints {
            endpoints.push(e);
        } else {
            self.endpoints_dropped += 1;
        }
    }

    /// Is the current stage's time (or the scan's) spent?
    fn expired(&self) -> bool {
        tokio::time::Instant::now() >= self.until
    }

    /// Notes that `stage` did not finish in its time: its own, or the scan's deadline.
    fn out_of_time(&mut self, stage: &'static str) {
        if self.late.iter().any(|(s, _)| *s == stage) {
            return;
        }
        let cut = if self.until >= self.deadline || tokio::time::Instant::now() >= self.deadline {
            Cut::Deadline
        } else {
            Cut::Budget(self.until.saturating_duration_since(self.started))
        };
        self.late.push((stage, cut));
    }

    fn stage(&mut self, name: &'static str, summary: String) {
        let now = tokio::time::Instant::now();
        let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let millis = ms(now.duration_since(self.started));
        let budget_millis = ms(self.until.saturating_duration_since(self.started));
        self.stages.push(Stage { name, millis, budget_millis, summary });
        self.started = now;
    }

    /// One line per cap reached and for each stage cut short, e.g. "truncated: 500
    /// hosts, the cap (1549 more found)".
    fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.names_dropped > 0 {
            out.push(format!(
                "truncated: {} candidate names, the cap ({} more not resolved)",
                self.limits.names, self.names_dropped
            ));
        }
        if self.hosts_dropped > 0 {
            out.push(format!("truncated: {} hosts, the cap ({} more found)", self.limits.hosts, self.hosts_dropped));
        }
        if self.endpoints_dropped > 0 {
            out.push(format!(
                "truncated: {} endpoints, the cap ({} more found)",
                self.limits.endpoints, self.endpoints_dropped
            ));
        }
        if self.visits_dropped > 0 {
            out.push(format!(
                "truncated: {} host visits, the cap ({} more hosts not visited)",
                self.limits.visits, self.visits_dropped
            ));
        }
        let overall: Vec<&str> = self.late.iter().filter(|(_, c)| *c == Cut::Deadline).map(|(s, _)| *s).collect();
        for (stage, cut) in &self.late {
            if let Cut::Budget(time) = cut {
                out.push(format!("truncated: {stage} ran out of its {}-second budget", time.as_secs()));
            }
        }
        if !overall.is_empty() {
            out.push(format!(
                "truncated: the {}-second deadline passed during {}",
                self.limits.time.as_secs(),
                overall.join(", ")
            ));
        }
        for n in &out {
            tracing::warn!(note = %n, "scan budget");
        }
        out
    }
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

/// Overall time for one host's visit, and again for its digitalization page checks:
/// every request has its own timeout, and this bounds their sum.
const VISIT_TIME: std::time::Duration = std::time::Duration::from_secs(30);
/// Overall time for one host's port scan.
const PORT_SCAN_TIME: std::time::Duration = std::time::Duration::from_secs(60);
/// Overall time for one TLS endpoint's enumeration (dozens of handshakes).
const TLS_PROBE_TIME: std::time::Duration = std::time::Duration::from_secs(120);

/// One host of a web round: the visit, then (for digitalization) its page checks, each
/// within [`VISIT_TIME`]. A visit over its time is a visit that saw nothing.
async fn visit_and_check(ctx: &Context, host: String) -> (web::Visit, Vec<ScanFinding>) {
    let v = match tokio::time::timeout(VISIT_TIME, web::visit(ctx, &host)).await {
        Ok(v) => v,
        Err(_) => {
            tracing::debug!(host, "visit over its time");
            web::Visit { host, ..web::Visit::default() }
        }
    };
    let pages = match (&v.front, ctx.wants(model::RiskVector::Digitalization)) {
        (Some(front), true) => {
            tokio::time::timeout(VISIT_TIME, digital::page_findings(ctx, front, &v.host)).await.unwrap_or_default()
        }
        _ => Vec::new(),
    };
    (v, pages)
}

/// Rounds of the web visit: the hosts a round discovers (certificate names, links) are
/// visited in the next, up to this many.
const WEB_ROUNDS: usize = 3;
/// Hosts visited at once.
const CONCURRENT_VISITS: usize = 16;
/// Hosts port-scanned at once.
const CONCURRENT_HOSTS: usize = 8;

/// The hosts the company added that lie under `domain` (resolved like any candidate)
/// and its addresses (checked by the guard), admitted into `assets` within the budget.
/// Returns what was refused.
async fn company_hosts(
    ctx: &Context,
    domain: &str,
    footprint: &Footprint,
    assets: &mut Vec<crate::discovery::Asset>,
    wildcard: &[std::net::IpAddr],
    budget: &mut Budget,
    until: tokio::time::Instant,
) -> Vec<crate::discovery::Skipped> {
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
                        Ok(()) => addressed.push(crate::discovery::Asset {
                            name,
                            addresses: vec![ip],
                            source: COMPANY_SOURCE.to_owned(),
                            evidence: evidence.clone(),
                            cname: None,
                        }),
                        Err(reason) => refused.push(crate::discovery::Skipped {
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

/// A company domain's scan, as a sequence of named stages under one budget
/// ([`Limits`]): discovery (DNS sources, wordlist, CT search), mail and standards, the
/// web rounds (each visit's certificate names, links and redirects are candidates of the
/// next round), ports, the other web ports (every HTTP or TLS service beyond 80 and 443
/// is an origin of its own), TLS, software. Every name a source offers is parsed
/// (`model::Domain`) before it becomes a candidate; the names refused are in `skipped`.
/// A stage that reaches a cap or the deadline keeps what it has and adds a note.
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

/// [`scan_domain_with`] within the company's own footprint: the names and addresses it
/// added are hosts of the scan (source `company`, addresses through the guard), the
/// assets it had removed are never admitted.
pub async fn scan_domain_within(
    ctx: &Context,
    domain: &str,
    website_host: Option<&str>,
    wordlist: &[String],
    dkim_selectors: &[String],
    footprint: &Footprint,
) -> Result<DomainScan, DnsError> {
    let domain = crate::dns::host_name(domain);
    let mut budget = Budget::new(&ctx.limits);
    budget.excluded = footprint.excluded.clone();
    let dns = ctx.guard.dns();
    // A domain that does not exist is not rated: every record would read as missing.
    if dns.nxdomain(&domain).await? {
        return Err(DnsError::NoSuchDomain(domain));
    }

    // Discovery.
    let until = budget.begin(budget.limits.stages.discovery);
    let wildcard = crate::discovery::wildcard_addresses(dns, &domain).await;
    let mut assets = Vec::new();
    let found = crate::discovery::discover(dns, &domain, wordlist, &wildcard, budget.names_left(), until).await?;
    if found.late > 0 {
        budget.out_of_time("discovery");
    }
    let mut skipped = budget.admit(&mut assets, found);
    if let Some(template) = ctx.ct_search.as_ref().filter(|_| !budget.expired()) {
        match crate::discovery::ct_search(template, &domain, ctx.guard.policy().read_timeout * 4).await {
            Ok(names) => {
                let candidates =
                    names.into_iter().map(|(name, evidence)| Candidate::new(name, "ct", evidence)).collect();
                let known: Vec<String> = assets.iter().map(|a| a.name.clone()).collect();
                let found = crate::discovery::resolve_candidates(
                    dns,
                    &domain,
                    candidates,
                    &wildcard,
                    &known,
                    budget.names_left(),
                    until,
                )
                .await;
                if found.late > 0 {
                    budget.out_of_time("discovery");
                }
                skipped.extend(budget.admit(&mut assets, found));
            }
            Err(e) => tracing::warn!(domain, error = %e, "certificate-transparency search failed"),
        }
    }
    let claimed = company_hosts(ctx, &domain, footprint, &mut assets, &wildcard, &mut budget, until).await;
    skipped.extend(claimed);
    budget.stage("discovery", format!("{} hosts, {} names skipped", assets.len(), skipped.len()));

    // Mail and standards: DNS questions, bounded by their own timeouts; running out of
    // time here fails the scan (a partial mail check would read as records missing).
    let until = budget.begin(budget.limits.stages.mail);
    let checked = mail_and_standards_checked(ctx, &domain, website_host, dkim_selectors);
    let MailStandards { mut findings, mut checks, handles_mail: mail } =
        match tokio::time::timeout_at(until, checked).await {
            Ok(found) => found?,
            Err(_) => {
                return Err(DnsError::Failed(format!(
                    "{domain}: the mail and standards checks did not finish in their {} seconds",
                    budget.limits.stages.mail.min(budget.limits.time).as_secs()
                )));
            }
        };
    budget.stage("mail and standards", format!("{} findings, {} checks", findings.len(), checks.len()));

    // The web rounds.
    budget.begin(budget.limits.stages.web);
    let web = web_rounds(ctx, &domain, &wildcard, &mut assets, &mut skipped, &mut budget).await;
    findings.extend(web.findings);
    checks.extend(web.checks);
    let mut endpoints = web.endpoints;
    let web_origins = web.web_origins;
    // Hosts the guard will not probe: every check on them is not assessable with the
    // reason (never a pass), and a public name with an internal address is a finding.
    let unreached = digital::unreached(&ctx.guard, &assets);
    for (host, refusal) in &unreached {
        checks.extend(unreached_checks(host, &refusal.to_string()));
    }
    if ctx.wants(model::RiskVector::Digitalization) {
        let mut found = digital::dangling_cnames(dns, &assets).await;
        found.extend(digital::wildcard(&domain, &wildcard));
        found.extend(digital::internal_addresses(&unreached));
        let observed = "no dangling CNAME, no wildcard record, no internal address";
        checks.push(check::judged(model::RiskVector::Digitalization, "dns names", &domain, &found, observed));
        findings.extend(found);
    }
    budget.stage("web rounds", format!("{} hosts visited, {} endpoints", budget.visits, endpoints.len()));

    // Ports: every host with an address, a few at a time.
    let until = budget.begin(budget.limits.stages.ports);
    let mut open_ports = Vec::new();
    if ctx.wants(model::RiskVector::OpenPorts)
        || ctx.wants(model::RiskVector::ItStandardization)
        || wants_tls(ctx)
        || wants_software(ctx)
    {
        use futures_util::StreamExt;
        let mut hosts: Vec<String> = assets
            .iter()
            .filter(|a| !a.addresses.is_empty() && !unreached.iter().any(|(h, _)| h == &a.name))
            .map(|a| a.name.clone())
            .collect();
        // The hosts that answered the web rounds first: if the stage's time runs out on
        // hosts that hold their ports open, the live ones are scanned already.
        hosts.sort_by_key(|h| !endpoints.iter().any(|e| &e.host == h));
        let total = hosts.len();
        // Unordered, so a host that holds its ports open does not keep the scans that
        // finished after it from counting when the stage's time runs out.
        type Scanned = Option<Result<Vec<ports::OpenPort>, ports::Unreached>>;
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
        let judged: std::collections::BTreeMap<String, Scanned> = scans.into_iter().collect();
        let tried = ctx.ports.len();
        for host in &hosts {
            let check = match judged.get(host) {
                Some(Some(Err(why))) => {
                    Check::unreached(model::RiskVector::OpenPorts, "port scan", host, why.to_string())
                }
                Some(Some(Ok(open))) => {
                    let found = ports::judge(open);
                    check::judged(
                        model::RiskVector::OpenPorts,
                        "port scan",
                        host,
                        &found,
                        format!("{} of {tried} ports open, none exposing a risky service", open.len()),
                    )
                }
                Some(None) => Check::not_assessable(
                    model::RiskVector::OpenPorts,
                    "port scan",
                    host,
                    format!("the host's port scan took more than {} s", PORT_SCAN_TIME.as_secs()),
                ),
                None => Check::not_assessable(
                    model::RiskVector::OpenPorts,
                    "port scan",
                    host,
                    "the port scan stage ran out of time before this host",
                ),
            };
            checks.push(check);
        }
        open_ports = judged.into_values().flatten().flat_map(Result::ok).flatten().collect();
        open_ports.sort_by(|a, b| (&a.host, a.port).cmp(&(&b.host, b.port)));
    }
    findings.extend(ports::judge(&open_ports));
    for p in &open_ports {
        if !endpoints.iter().any(|e| e.host == p.host && e.port == p.port) {
            let e = web::Endpoint {
                host: p.host.clone(),
                ip: p.ip,
                port: p.port,
                service: p.service.clone(),
                product: p.product.clone(),
                version: p.version.clone(),
                banner: p.banner.clone(),
            };
            budget.admit_endpoint(&mut endpoints, e);
        }
    }
    findings.extend(web::inconsistent_stack(&domain, &endpoints));
    budget.stage("ports", format!("{} open ports", open_ports.len()));

    // Web origins on other ports: every HTTP or TLS service the port scan identified
    // beyond 80 and 443 (8080, 8443, 3000, 9200 …) gets the web_headers checks, the
    // digitalization page checks and fingerprints, like the front page of a host.
    let until = budget.begin(budget.limits.stages.other_web);
    let mut web_software = web.software;
    let mut web_origins = web_origins;
    let any_other = open_ports.iter().any(other_web_port);
    if any_other && !budget.expired() {
        let (origins, complete) = other_origins(ctx, &open_ports, until).await;
        if !complete {
            budget.out_of_time("the other web ports");
        }
        for (host, front, pages) in origins {
            checks.extend(origin_checks(ctx, &front, &host, &pages));
            findings.extend(pages);
            if headers::assessable(&front) {
                findings.extend(headers::assess(&front, &host));
                web_origins += 1;
            }
            if wants_software(ctx) {
                let v = web::Visit { host, pages: vec![front], ..web::Visit::default() };
                for s in crate::software::detect(&ctx.fingerprints, std::slice::from_ref(&v), &[]) {
                    crate::software::merge(&mut web_software, s);
                }
            }
        }
    } else if any_other {
        budget.out_of_time("the other web ports");
    }
    budget.stage("other web ports", format!("{web_origins} web origins assessed in all"));

    // TLS.
    let until = budget.begin(budget.limits.stages.tls);
    let mut tls = Vec::new();
    if wants_tls(ctx) && !budget.expired() {
        let mx: Vec<String> = dns
            .mx(&domain)
            .await
            .unwrap_or_default()
            .into_iter()
            .filter(|h| crate::discovery::inside(h, &domain))
            .collect();
        let mut targets = Vec::new();
        for a in assets.iter().filter(|a| !a.addresses.is_empty() && !unreached.iter().any(|(h, _)| h == &a.name)) {
            let https = endpoints.iter().any(|e| e.host == a.name && e.port == 443);
            targets.extend(tls_targets(ctx, &a.name, https, mx.contains(&a.name)).await);
        }
        // Any other port that answered a ClientHello.
        for p in open_ports.iter().filter(|p| p.service == "tls") {
            if !targets.iter().any(|t| t.host == p.host && t.port == p.port) {
                targets.push(crate::tlsprobe::Target::new(&p.host, p.port));
            }
        }
        let total = targets.len();
        let (reports, done, failed) = probe_tls_until(ctx, targets, until).await;
        if done < total {
            budget.out_of_time("the TLS probes");
        }
        tls = reports;
        for report in &tls {
            let found = crate::tlsprobe::findings::judge(report);
            checks.extend(tls_checks(&report.target, &found));
            findings.extend(found);
        }
        for (target, why) in failed {
            for v in TLS_VECTORS {
                checks.push(Check::not_assessable(v, "tls endpoint", &target, why.clone()));
            }
        }
    } else if wants_tls(ctx) {
        budget.out_of_time("the TLS probes");
    }
    budget.stage("tls", format!("{} TLS endpoints", tls.len()));

    // Software: what the visits showed (already fingerprinted), and the services.
    budget.begin(budget.limits.time);
    let mut software = web_software;
    for s in crate::software::detect(&ctx.fingerprints, &[], &open_ports) {
        crate::software::merge(&mut software, s);
    }
    software.sort_by(|a, b| (&a.host, &a.name, &a.version).cmp(&(&b.host, &b.name, &b.version)));
    if let Some(eol) = &ctx.eol {
        let found = crate::software::sbom_findings(&software, eol, ctx.now.date());
        checks.extend(crate::software::sbom_checks(&software, eol, ctx.now.date(), &found));
        findings.extend(found);
    } else if wants_software(ctx) {
        let why = "no lifecycle data (endoflife.date) is loaded";
        checks.push(Check::not_assessable(model::RiskVector::Sbom, "lifecycles", &domain, why));
    }
    budget.stage("software", format!("{} products", software.len()));

    findings.retain(|f| ctx.wants(f.risk_vector));
    checks.retain(|c| ctx.wants(c.risk_vector));
    assets.sort_by(|a, b| a.name.cmp(&b.name));
    endpoints.sort_by(|a, b| (&a.host, a.port).cmp(&(&b.host, b.port)));
    let mut seen = std::collections::BTreeSet::new();
    findings.retain(|f| seen.insert((f.code.clone(), f.asset.clone(), f.cve.clone(), f.component.clone())));
    Ok(DomainScan {
        domain,
        assets,
        endpoints,
        open_ports,
        tls,
        software,
        mail,
        web_origins,
        findings,
        checks,
        skipped,
        notes: budget.notes(),
        stages: budget.stages,
    })
}

/// The checks on a host the scanner did not reach (`why`): one per component judged
/// per host, each not assessable, so the findings a probe that ran saw on it stay open.
fn unreached_checks(host: &str, why: &str) -> Vec<Check> {
    use model::RiskVector as V;
    let tls = format!("{host}:443");
    vec![
        Check::unreached(V::OpenPorts, "port scan", host, why),
        Check::unreached(V::WebHeaders, "security headers", host, why),
        Check::unreached(V::ItStandardization, "https", host, why),
        Check::unreached(V::Digitalization, "pages", host, why),
        Check::unreached(V::CertificateInfo, "tls endpoint", &tls, why),
        Check::unreached(V::CertificateConf, "tls endpoint", &tls, why),
        Check::unreached(V::CertificateCve, "tls endpoint", &tls, why),
        Check::unreached(V::Sbom, "software", host, why),
        Check::unreached(V::Vulnerabilities, "software", host, why),
    ]
}

/// The three certificate components of one TLS endpoint's report.
const TLS_VECTORS: [model::RiskVector; 3] =
    [model::RiskVector::CertificateInfo, model::RiskVector::CertificateConf, model::RiskVector::CertificateCve];

/// The checks of one TLS endpoint: one per certificate component, judged from `found`.
pub fn tls_checks(target: &str, found: &[ScanFinding]) -> Vec<Check> {
    TLS_VECTORS
        .iter()
        .map(|v| {
            let mine: Vec<ScanFinding> = found.iter().filter(|f| f.risk_vector == *v).cloned().collect();
            let (check, observed) = match v {
                model::RiskVector::CertificateInfo => ("certificate", "a valid chain for the name, not expiring soon"),
                model::RiskVector::CertificateConf => ("tls configuration", "modern versions and suites only"),
                _ => ("tls vulnerabilities", "none of the known TLS vulnerabilities"),
            };
            check::judged(*v, check, target, &mine, observed)
        })
        .collect()
}

/// The web_headers and digitalization checks of one web origin's front page (`pages`:
/// what its page checks found). A front page that is not an application (an error
/// status, a parked or default page) leaves the headers not assessable.
fn origin_checks(ctx: &Context, front: &headers::Front, host: &str, pages: &[ScanFinding]) -> Vec<Check> {
    use model::RiskVector as V;
    let mut out = Vec::new();
    let origin = front.origin.as_str();
    if headers::assessable(front) {
        let found = headers::assess(front, host);
        out.push(check::judged(V::WebHeaders, "security headers", origin, &found, "every header the method asks for"));
    } else {
        let why = match headers::parked_or_default(&front.body) {
            Some(what) if (200..300).contains(&front.status) => {
                format!("the front page is {what}: no application to judge")
            }
            _ => format!("the front page answered {}: no application to judge", front.status),
        };
        out.push(Check::not_assessable(V::WebHeaders, "security headers", origin, why));
    }
    if ctx.wants(V::Digitalization) {
        let observed = "no exposed admin panel or directory listing";
        out.push(check::judged(V::Digitalization, "pages", origin, pages, observed));
    }
    out
}

/// Is this open port a web origin the web rounds did not visit? HTTP (Elasticsearch
/// answers HTTP too) or TLS on any port but 80 and 443, and not a mail or directory
/// port whose TLS carries another protocol.
fn other_web_port(p: &ports::OpenPort) -> bool {
    const NOT_WEB: [u16; 7] = [80, 443, 465, 587, 636, 993, 995];
    matches!(p.service.as_str(), "http" | "tls" | "elasticsearch") && !NOT_WEB.contains(&p.port)
}

/// Fetches `/` of the origin an open port serves (https when the port spoke TLS) and,
/// for digitalization, runs the page checks there. `None` when no HTTP answered.
async fn visit_origin(ctx: &Context, p: ports::OpenPort) -> Option<(String, headers::Front, Vec<ScanFinding>)> {
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
    let front = headers::Front {
        origin: format!("{origin}/"),
        https: origin.https,
        port: p.port,
        status: response.status,
        headers: response.headers,
        body: response.body,
    };
    let pages = if ctx.wants(model::RiskVector::Digitalization) {
        digital::page_findings(ctx, &front, &p.host).await
    } else {
        Vec::new()
    };
    Some((p.host, front, pages))
}

/// What the web rounds found.
struct WebRounds {
    findings: Vec<ScanFinding>,
    checks: Vec<Check>,
    endpoints: Vec<web::Endpoint>,
    software: Vec<crate::software::Software>,
    web_origins: u32,
}

/// Rounds of visits: every host with an address not yet visited, then the hosts their
/// certificates, links and redirects name. Each visit is analysed as it completes
/// (headers, HTTPS, digitalization's page checks, fingerprints) and its page bodies are
/// dropped, so what a scan holds does not grow with the pages it reads.
async fn web_rounds(
    ctx: &Context,
    domain: &str,
    wildcard: &[std::net::IpAddr],
    assets: &mut Vec<crate::discovery::Asset>,
    skipped: &mut Vec<crate::discovery::Skipped>,
    budget: &mut Budget,
) -> WebRounds {
    use futures_util::StreamExt;
    let dns = ctx.guard.dns();
    let mut out = WebRounds {
        findings: Vec::new(),
        checks: Vec::new(),
        endpoints: Vec::new(),
        software: Vec::new(),
        web_origins: 0,
    };
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
        let mut candidates: std::collections::BTreeMap<String, Candidate> = std::collections::BTreeMap::new();
        let known: std::collections::HashSet<String> = assets.iter().map(|a| a.name.clone()).collect();
        let mut unoffered = 0usize;
        let mut done = 0;
        // Unordered, so that a host that never answers does not hold back the visits
        // that finished after it when the stage's time runs out.
        let mut visits = std::pin::pin!(
            futures_util::stream::iter(hosts)
                .map(|host| visit_and_check(ctx, host))
                .buffer_unordered(budget.limits.concurrent_visits())
                .take_until(tokio::time::sleep_until(budget.until))
        );
        while let Some((mut v, pages)) = visits.next().await {
            done += 1;
            let host_found = digital::host_findings(&v);
            if let Some(front) = &v.front {
                let mut seen = pages.clone();
                seen.extend(host_found.iter().cloned());
                out.checks.extend(origin_checks(ctx, front, &v.host, &seen));
            }
            out.findings.extend(pages);
            out.findings.extend(web::https_findings(&v));
            out.findings.extend(host_found);
            if let Some(front) = v.front.as_ref().filter(|f| headers::assessable(f)) {
                out.findings.extend(headers::assess(front, &v.host));
                out.web_origins += 1;
            }
            if let Some((status, location)) = &v.plain_http
                && v.https()
            {
                out.findings.extend(headers::redirect_finding(
                    &format!("http://{}", v.host),
                    *status,
                    location.as_deref(),
                ));
            }
            if wants_software(ctx) {
                for s in crate::software::detect(&ctx.fingerprints, std::slice::from_ref(&v), &[]) {
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
    dkim_selectors: &[String],
) -> Result<Rescanned, DnsError> {
    use model::RiskVector as V;
    // A host the guard refuses (or whose name fails to resolve) is not probed: the
    // rescan says so, and closes nothing.
    if !matches!(vector, V::Spf | V::Dkim | V::Dmarc)
        && let Some(why) = unreached_host(ctx, host).await
    {
        return Ok(Rescanned { findings: Vec::new(), unreached: Some(why) });
    }
    let mut found = Vec::new();
    if matches!(vector, V::Spf | V::Dkim | V::Dmarc | V::ItStandardization) {
        found = mail_and_standards_checked(ctx, domain, website_host, dkim_selectors).await?.findings;
    }
    // The origins on other ports (8080, 8443 …) are looked at again too: a rescan
    // closes what it did not see, so it must see what the scan saw.
    let others = if matches!(vector, V::WebHeaders | V::Digitalization) && !host.starts_with("*.") {
        let open = tokio::time::timeout(PORT_SCAN_TIME, ports::scan(&ctx.guard, host, &ctx.ports)).await;
        let deadline = tokio::time::Instant::now() + PORT_SCAN_TIME;
        other_origins(ctx, &open.ok().and_then(Result::ok).unwrap_or_default(), deadline).await.0
    } else {
        Vec::new()
    };
    for (origin_host, front, pages) in others {
        if vector == V::WebHeaders && headers::assessable(&front) {
            found.extend(headers::assess(&front, &origin_host));
        }
        if vector == V::Digitalization {
            found.extend(pages);
        }
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
            found.extend(headers::redirect_finding(&format!("http://{host}"), *status, location.as_deref()));
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
                let until = tokio::time::Instant::now() + VISIT_TIME;
                let resolved = crate::discovery::resolve_candidates(dns, domain, named, &[], &[], 1, until).await;
                found.extend(digital::dangling_cnames(dns, &resolved.assets).await);
            }
        }
    }
    if vector == V::OpenPorts {
        match ports::scan(&ctx.guard, host, &ctx.ports).await {
            Ok(open) => found.extend(ports::judge(&open)),
            Err(why) => return Ok(Rescanned { findings: Vec::new(), unreached: Some(why.0) }),
        }
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
    Ok(Rescanned { findings: found, unreached: None })
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

/// What a rescan of one host saw: its findings, or why the host was not probed (then
/// it saw nothing, and nothing it did not see is fixed).
#[derive(Debug, Clone, Default)]
pub struct Rescanned {
    pub findings: Vec<ScanFinding>,
    pub unreached: Option<String>,
}

/// The software of one host: a visit and a port scan, fingerprinted.
pub async fn host_software(ctx: &Context, host: &str) -> Vec<crate::software::Software> {
    let mut visit = web::visit(ctx, host).await;
    let open = ports::scan(&ctx.guard, host, &ctx.ports).await.unwrap_or_default();
    let deadline = tokio::time::Instant::now() + PORT_SCAN_TIME;
    for (_, front, _) in other_origins(ctx, &open, deadline).await.0 {
        visit.pages.push(front);
    }
    crate::software::detect(&ctx.fingerprints, std::slice::from_ref(&visit), &open)
}

/// The web origins of `open` beyond 80 and 443 ([`other_web_port`]), each fetched and
/// page-checked ([`visit_origin`]) within [`VISIT_TIME`], a few at a time, until
/// `deadline`: the scan's "other web ports" stage, and what a rescan of one host looks
/// at besides its front page. Also says whether every origin was looked at in time.
async fn other_origins(
    ctx: &Context,
    open: &[ports::OpenPort],
    deadline: tokio::time::Instant,
) -> (Vec<(String, headers::Front, Vec<ScanFinding>)>, bool) {
    use futures_util::StreamExt;
    let other: Vec<ports::OpenPort> = open.iter().filter(|p| other_web_port(p)).cloned().collect();
    let total = other.len();
    let visited: Vec<Option<(String, headers::Front, Vec<ScanFinding>)>> = futures_util::stream::iter(other)
        .map(|p| async move { tokio::time::timeout(VISIT_TIME, visit_origin(ctx, p)).await.ok().flatten() })
        .buffer_unordered(CONCURRENT_VISITS)
        .take_until(tokio::time::sleep_until(deadline))
        .collect()
        .await;
    let complete = visited.len() == total;
    let mut origins: Vec<_> = visited.into_iter().flatten().collect();
    origins.sort_by(|a, b| (&a.0, a.1.port).cmp(&(&b.0, b.1.port)));
    (origins, complete)
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
    use model::RiskVector as V;
    let dns = ctx.guard.dns();
    let domain = crate::dns::host_name(domain);
    if dns.nxdomain(&domain).await? {
        return Err(DnsError::NoSuchDomain(domain));
    }
    let mut out = MailStandards::default();
    let (mx, mx_failed) = match dns.mx(&domain).await {
        Ok(mx) => (mx, None),
        Err(e) => (Vec::new(), Some(format!("the MX lookup of {domain} failed: {e}"))),
    };
    out.handles_mail = !mx.is_empty();
    let na = |v: V, check: &'static str, asset: &str, why: &str| Check::not_assessable(v, check, asset, why);
    if ctx.wants(V::Spf) {
        match &mx_failed {
            Some(why) => out.checks.push(na(V::Spf, "spf record", &domain, why)),
            None => match mail::spf_check(dns, &domain, out.handles_mail).await {
                Ok((found, check)) => {
                    out.findings.extend(found);
                    out.checks.push(check);
                }
                Err(e) => {
                    let why = format!("the TXT lookup of {domain} failed: {e}");
                    out.checks.push(na(V::Spf, "spf record", &domain, &why));
                }
            },
        }
    }
    if ctx.wants(V::Dkim) {
        match &mx_failed {
            Some(why) => out.checks.push(na(V::Dkim, "dkim keys", &domain, why)),
            None => {
                let (found, check) = mail::dkim(dns, &domain, out.handles_mail, dkim_selectors, &ctx.selectors).await;
                out.findings.extend(found);
                out.checks.push(check);
            }
        }
    }
    if ctx.wants(V::Dmarc) {
        match mail::dmarc(dns, &domain).await {
            Ok(found) => {
                out.checks.push(check::judged(V::Dmarc, "dmarc record", &domain, &found, "p=reject, with reports"));
                out.findings.extend(found);
            }
            Err(e) => {
                let why = format!("the TXT lookup of _dmarc.{domain} failed: {e}");
                out.checks.push(na(V::Dmarc, "dmarc record", &domain, &why));
            }
        }
    }
    if !ctx.wants(V::ItStandardization) {
        return Ok(out);
    }
    let it = V::ItStandardization;
    match &ctx.validator {
        Some(validator) => {
            let (found, check) = standards::dnssec(validator, &domain).await;
            out.findings.extend(found);
            out.checks.push(check);
        }
        None => out.checks.push(na(it, "dnssec", &domain, "no validating resolver with a trust anchor is configured")),
    }
    match standards::caa(&ctx.guard, &domain).await {
        Ok(found) => {
            out.checks.push(check::judged(it, "caa", &domain, &found, "CAA records name the CAs that may issue"));
            out.findings.extend(found);
        }
        Err(e) => out.checks.push(na(it, "caa", &domain, &format!("the CAA lookup failed: {e}"))),
    }
    if let Some(why) = &mx_failed {
        out.checks.push(na(it, "mta-sts", &domain, why));
        out.checks.push(na(it, "tls-rpt", &domain, why));
    } else if out.handles_mail {
        match standards::tls_rpt(&ctx.guard, &domain).await {
            Ok(found) => {
                out.checks.push(check::judged(it, "tls-rpt", &domain, &found, "a v=TLSRPTv1 record"));
                out.findings.extend(found);
            }
            Err(e) => out.checks.push(na(it, "tls-rpt", &domain, &format!("the TXT lookup failed: {e}"))),
        }
        match standards::mta_sts(&ctx.guard, ctx.lab_root.as_deref(), &domain, &mx).await {
            Ok(found) => {
                let observed = "an enforced policy over valid HTTPS that covers every MX host";
                out.checks.push(check::judged(it, "mta-sts", &domain, &found, observed));
                out.findings.extend(found);
            }
            Err(e) => out.checks.push(na(it, "mta-sts", &domain, &format!("the TXT lookup failed: {e}"))),
        }
    }
    // IPv6 on the website host and the mail hosts inside the domain.
    let mut hosts: Vec<String> = website_host.map(crate::dns::host_name).into_iter().collect();
    for h in &mx {
        if (h == &domain || h.ends_with(&format!(".{domain}"))) && !hosts.contains(h) {
            hosts.push(h.clone());
        }
    }
    for host in &hosts {
        match standards::ipv6(&ctx.guard, std::slice::from_ref(host)).await {
            Ok(found) => {
                out.checks.push(check::judged(it, "ipv6", host, &found, "AAAA records"));
                out.findings.extend(found);
            }
            Err(e) => out.checks.push(na(it, "ipv6", host, &format!("the AAAA lookup failed: {e}"))),
        }
    }
    if let Some(web) = website_host {
        let https = standards::listens(&ctx.guard, web, 443).await;
        let (found, check) = standards::security_txt(&ctx.guard, web, https, ctx.now).await;
        out.findings.extend(found);
        out.checks.push(check);
        let found = standards::https_available_given(&ctx.guard, web, https).await;
        if https || !found.is_empty() {
            out.checks.push(check::judged(it, "https", web, &found, "HTTPS answers on 443"));
        } else {
            out.checks.push(na(it, "https", web, "the website host answers on neither 443 nor 80"));
        }
        out.findings.extend(found);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_memory_sets_the_visits_run_at_once() {
        let mib = 1024 * 1024;
        let visits = |page_bytes| Limits { page_bytes, ..Limits::default() }.concurrent_visits();
        assert_eq!(Limits::default().concurrent_visits(), CONCURRENT_VISITS);
        assert_eq!(visits(8 * mib), 1);
        assert_eq!(visits(24 * mib), 3);
        assert_eq!(visits(0), 1, "one visit at least");
        assert_eq!(visits(usize::MAX), CONCURRENT_VISITS);
    }

    #[tokio::test]
    async fn endpoints_beyond_the_cap_are_noted() {
        let limits = Limits { endpoints: 2, ..Limits::default() };
        let mut budget = Budget::new(&limits);
        let mut kept = Vec::new();
        for port in [80, 443, 8080, 8443] {
            let e = web::Endpoint {
                host: "a.test".into(),
                ip: std::net::Ipv4Addr::LOCALHOST.into(),
                port,
                service: "http".into(),
                product: None,
                version: None,
                banner: String::new(),
            };
            budget.admit_endpoint(&mut kept, e);
        }
        assert_eq!(kept.iter().map(|e| e.port).collect::<Vec<_>>(), [80, 443]);
        assert_eq!(budget.notes(), ["truncated: 2 endpoints, the cap (2 more found)"]);
    }

    #[tokio::test]
    async fn a_stage_cut_by_the_deadline_is_told_from_one_cut_by_its_own_time() {
        let limits = Limits { time: std::time::Duration::from_secs(100), ..Limits::default() };
        let mut budget = Budget::new(&limits);
        budget.begin(std::time::Duration::from_secs(30));
        budget.out_of_time("the port scan");
        budget.begin(std::time::Duration::from_secs(300));
        budget.out_of_time("the TLS probes");
        assert_eq!(
            budget.notes(),
            [
                "truncated: the port scan ran out of its 30-second budget",
                "truncated: the 100-second deadline passed during the TLS probes"
            ]
        );
    }
}
