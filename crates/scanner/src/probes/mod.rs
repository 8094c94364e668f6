//! The probes, one module per group of components: what the gathering step
//! (`crate::gather`) looks with. Each takes what it needs (the guard, the DNS client,
//! the lab CA in lab mode) and returns what it saw; the checks (`crate::checks`) judge
//! it. [`Context`] is what every probe of a scan shares, [`Limits`] a scan's budget.

pub mod digital;
pub mod headers;
pub mod mail;
pub mod ports;
pub mod standards;
pub mod web;

use time::OffsetDateTime;

use crate::dns::DnsError;
use crate::dnssec::Validator;
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
    /// A quick scan ([`Context::quick`]): the web root and TLS on 443 only.
    pub quick: bool,
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

/// Hosts visited at once.
pub(crate) const CONCURRENT_VISITS: usize = 16;

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
            quick: false,
        }
    }

    /// The context of a quick scan, a new company's first rating in seconds: the DNS and
    /// mail checks as in a full scan, discovery by the DNS sources and `www` only (no CT
    /// search), the web root of at most [`QUICK_VISITS`] hosts (no page checks beyond
    /// it, no other web ports), TLS on 443, and the [`ports::QUICK_PORTS`], all within
    /// [`QUICK_TIME`]. A quick scan sees part of what a full one does: it opens and
    /// refreshes findings and closes none.
    pub fn quick(&self) -> Context {
        let secs = std::time::Duration::from_secs;
        let mut ctx = self.clone();
        ctx.quick = true;
        ctx.ct_search = None;
        ctx.wordlist = vec!["www".to_owned()];
        ctx.ports = ports::QUICK_PORTS.to_vec();
        ctx.limits = Limits {
            names: 100,
            hosts: 20,
            endpoints: 200,
            visits: QUICK_VISITS,
            page_bytes: self.limits.page_bytes.min(QUICK_VISITS * VISIT_BYTES),
            time: QUICK_TIME.min(self.limits.time),
            stages: StageTimes {
                discovery: secs(5),
                mail: secs(10),
                web: secs(8),
                ports: secs(6),
                other_web: secs(0),
                tls: secs(8),
            },
        };
        ctx
    }
}

/// Hosts a quick scan visits (the company's website host and apex first).
pub const QUICK_VISITS: usize = 4;
/// The whole time of a quick scan of one domain.
pub const QUICK_TIME: std::time::Duration = std::time::Duration::from_secs(30);

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
}
