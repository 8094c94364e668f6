//! Scan jobs. The API queues a `scan` job when a known company has never been rated and
//! a `rescan` job for one (subdomain, risk vector); workers lease jobs from the store's
//! durable queue (a lease that expires if the worker dies), run the probes, and record
//! the findings: new ones open, repeated ones keep their id and first_seen, missing
//! ones close. A failed job is retried with backoff, then given up.
//!
//! The probes run so far are the DNS and mail group (spf, dkim, dmarc,
//! it_standardization), TLS (certificate_info, certificate_conf, certificate_cve) and
//! the port scan (open_ports), web_headers, and the software inventory: fingerprints
//! of pages and services → applications and SBOM components (sbom findings from the
//! lifecycle data), matched against the vulnerability database (vulnerabilities).

pub mod alerts;
pub mod disputes;
pub mod events;
pub mod feeds;
pub mod metrics;
pub mod ownership;
pub mod rate;
pub mod schedule;
pub mod software;
pub mod webhooks;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use model::{Attribution, DiscoveredHost, Finding, JobSpec, NetworkEndpoint, OffsetDateTimeText, RiskVector, SocialId};
use scanner::ScanFinding;
use scanner::probes::Context;
use store::{ScanOutcome, ScanScope, Store};
use time::OffsetDateTime;
use tokio::task::JoinSet;

/// The risk vectors the worker's probes cover.
pub const VECTORS: [RiskVector; 12] = [
    RiskVector::Spf,
    RiskVector::Dkim,
    RiskVector::Dmarc,
    RiskVector::ItStandardization,
    RiskVector::CertificateInfo,
    RiskVector::CertificateConf,
    RiskVector::CertificateCve,
    RiskVector::OpenPorts,
    RiskVector::WebHeaders,
    RiskVector::Sbom,
    RiskVector::Vulnerabilities,
    RiskVector::Digitalization,
];

#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("store: {0}")]
    Store(#[from] store::StoreError),
    #[error("DNS: {0}")]
    Dns(#[from] scanner::dns::DnsError),
    #[error("job payload: {0}")]
    Payload(String),
    #[error("company {0} is not known")]
    UnknownCompany(String),
    #[error("job {0}: its lease is gone (lapsed and taken by another worker, or cancelled); nothing written")]
    LeaseLost(i64),
    #[error("delivery: {0}")]
    Delivery(String),
}

impl JobError {
    /// Whether trying again can help (a network or store hiccup) or not (a bad payload,
    /// a company domain that does not exist).
    pub fn retryable(&self) -> bool {
        match self {
            JobError::Dns(scanner::dns::DnsError::NoSuchDomain(_)) => false,
            JobError::Store(_) | JobError::Dns(_) | JobError::Delivery(_) => true,
            JobError::Payload(_) | JobError::UnknownCompany(_) | JobError::LeaseLost(_) => false,
        }
    }
}

/// What tells a worker the time: each job is judged at the time it starts (certificate
/// days left, end-of-life dates, security.txt expiry). The system clock, or one a test
/// sets.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> OffsetDateTime + Send + Sync>);

impl Clock {
    pub fn system() -> Clock {
        Clock(Arc::new(OffsetDateTime::now_utc))
    }
    pub fn new(now: impl Fn() -> OffsetDateTime + Send + Sync + 'static) -> Clock {
        Clock(Arc::new(now))
    }
    pub fn now(&self) -> OffsetDateTime {
        (self.0)()
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::system()
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Clock({})", self.now())
    }
}

/// A holder name for a role lease (`scheduler`, `feeds`): the worker's name, the role and
/// a nonce, unique per process.
pub(crate) fn lease_holder(name: &str, role: &str) -> String {
    let nonce = OffsetDateTime::now_utc().unix_timestamp_nanos() as u64 ^ u64::from(std::process::id());
    format!("{name}-{role}-{nonce:016x}")
}

/// `ctx` with the reference data the store holds: imported fingerprint rules added to
/// its own, and the end-of-life data unless `ctx` has some already.
pub async fn with_store_data(mut ctx: Context, store: &dyn Store) -> Result<Context, store::StoreError> {
    let rows = store.fingerprints().await?;
    if !rows.is_empty() {
        let (rules, report) =
            scanner::fingerprint::RuleSet::from_rows(rows.iter().map(|(a, b)| (a.as_str(), b.as_str())));
        tracing::info!(technologies = report.technologies, "imported fingerprints loaded");
        ctx.fingerprints = Arc::new((*ctx.fingerprints).clone().merged(&rules));
    }
    if ctx.eol.is_none() {
        let rows = store.eol_products().await?;
        if !rows.is_empty() {
            ctx.eol =
                Some(Arc::new(scanner::software::Eol::from_rows(rows.iter().map(|(a, b)| (a.as_str(), b.as_str())))));
        }
    }
    Ok(ctx)
}

/// The scan context of each job: the worker's own, with the reference data the store
/// holds as the job starts (read again when the store's vulnerability-data version
/// moved: fingerprints and end-of-life data imported while the worker runs are used by
/// its next job), and the job's own time.
pub struct JobContexts {
    base: Context,
    loaded: tokio::sync::Mutex<Option<(i64, Arc<Context>)>>,
}

impl JobContexts {
    pub fn new(base: Context) -> JobContexts {
        JobContexts { base, loaded: tokio::sync::Mutex::new(None) }
    }

    pub async fn for_job(&self, store: &dyn Store, now: OffsetDateTime) -> Result<Context, store::StoreError> {
        let version = store.data_versions().await?.cve;
        let mut loaded = self.loaded.lock().await;
        let ctx = match &*loaded {
            Some((v, ctx)) if *v == version => ctx.clone(),
            _ => {
                // Read after the version: data newer than it is read again next time.
                let ctx = Arc::new(with_store_data(self.base.clone(), store).await?);
                *loaded = Some((version, ctx.clone()));
                ctx
            }
        };
        drop(loaded);
        let mut job = (*ctx).clone();
        job.now = now;
        Ok(job)
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    /// The time each job is judged at.
    pub clock: Clock,
    /// Jobs run at once by this worker.
    pub concurrency: usize,
    /// How long a lease lasts; a job whose worker died is taken again after it.
    pub lease: Duration,
    /// Attempts before a job is given up.
    pub max_attempts: i64,
    /// Longest wait between polls of an empty queue (a backend that hears of new jobs,
    /// PostgreSQL, wakes the worker sooner: `Queue::wait_for_jobs`).
    pub idle: Duration,
    /// At shutdown, how long jobs in flight may take to finish before they are stopped
    /// and their leases released (the job goes back to the queue).
    pub drain: Duration,
    pub name: String,
    /// Scheduled rescans ([`schedule`]): the cadence of companies without their own, or
    /// `None` for no scheduler in this worker.
    pub rescan_every: Option<Duration>,
    /// The feeds ([`feeds`]): the scheduled sync and the matching of what changed; `None`
    /// for neither in this worker ([`run`] only).
    pub feeds: Option<feeds::FeedsConfig>,
    /// The unit of retry waits: a scan waits unit × n² after its n-th failed attempt
    /// ([`backoff`]), a delivery unit × 3ⁿ ([`webhooks::retry_after`]).
    pub retry_unit: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            clock: Clock::system(),
            concurrency: 4,
            lease: Duration::from_secs(120),
            max_attempts: 5,
            idle: Duration::from_millis(500),
            drain: Duration::from_secs(30),
            name: format!("worker-{}", std::process::id()),
            rescan_every: None,
            feeds: None,
            retry_unit: Duration::from_secs(10),
        }
    }
}

/// The lease a job runs under. Before each of its writes the job renews it, so a worker
/// whose lease lapsed (and whose job another worker took) writes nothing: the renewal
/// is refused and the job ends with [`JobError::LeaseLost`]. A renewal gives the job
/// the lease's whole length, far more than one write takes.
#[derive(Debug, Clone)]
pub struct Lease {
    pub job_id: i64,
    pub token: String,
    pub length: Duration,
    /// When the job was first leased: what it records is dated then on every attempt,
    /// so an attempt after a worker died replaces the dead worker's writes (one rating
    /// per job) rather than adding to them.
    pub started: Option<OffsetDateTime>,
    /// Which attempt this is (1 for the first).
    pub attempt: i64,
}

impl Lease {
    /// The lease of a job `store.lease_job` handed out.
    pub fn of(job: &model::Job, length: Duration) -> Option<Lease> {
        let started = job
            .started_at
            .as_deref()
            .and_then(|t| OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok());
        Some(Lease { job_id: job.id, token: job.lease_token.clone()?, length, started, attempt: job.attempts })
    }
}

/// Renews `lease` (when the job runs under one) before a write.
async fn hold(store: &dyn Store, lease: Option<&Lease>) -> Result<(), JobError> {
    let Some(lease) = lease else { return Ok(()) };
    if store.renew_lease(lease.job_id, &lease.token, lease.length).await? {
        Ok(())
    } else {
        Err(JobError::LeaseLost(lease.job_id))
    }
}

/// What runs a leased job. [`run`] runs [`process`]; tests give their own.
pub type Handler = Arc<
    dyn Fn(model::Job) -> std::pin::Pin<Box<dyn Future<Output = Result<ScanOutcome, JobError>> + Send>> + Send + Sync,
>;

/// Backoff of a scan before attempt `n + 1`: 10 s, 40 s, 90 s, … capped at 15 minutes.
pub fn backoff(attempts: i64) -> Duration {
    backoff_in(attempts, Duration::from_secs(10))
}

/// [`backoff`] in units of `unit` (10 s by default): unit × n², at most 90 units.
fn backoff_in(attempts: i64, unit: Duration) -> Duration {
    let n = u32::try_from(attempts.clamp(1, 100)).unwrap_or(1);
    unit.saturating_mul(n * n).min(unit.saturating_mul(90))
}

/// The wait before a failed job's next attempt, after `attempts` of them.
pub fn retry_delay(spec: &JobSpec, attempts: i64, unit: Duration) -> Duration {
    match spec {
        JobSpec::Deliver { .. } => webhooks::retry_after(attempts, unit),
        JobSpec::Scan { .. } | JobSpec::Quick { .. } | JobSpec::Rescan { .. } | JobSpec::Verify { .. } => {
            backoff_in(attempts, unit)
        }
    }
}

/// Leases and runs jobs until `shutdown` completes (see [`run_with`]). Each job runs
/// with `ctx` as [`JobContexts`] makes it: the store's reference data as the job starts,
/// and `config.clock`'s time then.
pub async fn run(store: Arc<dyn Store>, ctx: Arc<Context>, config: Config, shutdown: impl Future<Output = ()>) {
    let runner = store.clone();
    let (config_lease, clock) = (config.lease, config.clock.clone());
    let contexts = Arc::new(JobContexts::new((*ctx).clone()));
    // The feeds' maintainer, when this worker runs one, stops when the shutdown begins.
    let (end_tx, mut end_rx) = tokio::sync::watch::channel(false);
    let maintainer = config.feeds.clone().map(|feeds| {
        let maintainer = feeds::Maintainer::new(store.clone(), contexts.clone(), feeds);
        tokio::spawn(maintainer.run(async move {
            let _ = end_rx.wait_for(|ending| *ending).await;
        }))
    });
    let handler: Handler = Arc::new(move |job: model::Job| {
        let (store, contexts, clock) = (runner.clone(), contexts.clone(), clock.clone());
        Box::pin(async move {
            let lease = Lease::of(&job, config_lease);
            let ctx = contexts.for_job(&*store, clock.now()).await?;
            process_leased(&*store, &ctx, &job.spec, lease.as_ref()).await
        })
    });
    let shutdown = async move {
        shutdown.await;
        let _ = end_tx.send(true);
    };
    run_with(store, config, shutdown, handler).await;
    if let Some(maintainer) = maintainer {
        let _ = maintainer.await;
    }
}

/// Leases and runs jobs with `handler` until `shutdown` completes. Each job runs in a
/// task of its own while its lease is renewed (a heartbeat every third of the lease);
/// a job whose lease is lost (it lapsed and another worker took the job, or an operator
/// cancelled it) is stopped, and its end is not recorded. A job that panics is dead with
/// the panic's message. At shutdown, jobs in flight get `config.drain` to finish; those
/// still running are then stopped and their leases released, so another worker takes
/// them at once.
pub async fn run_with(store: Arc<dyn Store>, config: Config, shutdown: impl Future<Output = ()>, handler: Handler) {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    // The scheduler, when this worker runs one, stops when the shutdown begins.
    let (end_tx, mut end_rx) = tokio::sync::watch::channel(false);
    let scheduler = config.rescan_every.map(|every| {
        let schedule = schedule::ScheduleConfig::new(every, config.concurrency, &config.name);
        let scheduler = schedule::Scheduler::new(store.clone(), schedule);
        tokio::spawn(scheduler.run(async move {
            let _ = end_rx.wait_for(|ending| *ending).await;
        }))
    });
    let shutdown = async move {
        shutdown.await;
        let _ = end_tx.send(true);
    };
    serve_jobs(store, &config, shutdown, handler, &stop_tx, stop_rx).await;
    if let Some(scheduler) = scheduler {
        let _ = scheduler.await;
    }
}

async fn serve_jobs(
    store: Arc<dyn Store>,
    config: &Config,
    shutdown: impl Future<Output = ()>,
    handler: Handler,
    stop_tx: &tokio::sync::watch::Sender<bool>,
    stop_rx: tokio::sync::watch::Receiver<bool>,
) {
    tokio::pin!(shutdown);
    let mut running: JoinSet<()> = JoinSet::new();
    loop {
        while running.len() >= config.concurrency.max(1) {
            tokio::select! {
                () = &mut shutdown => return drain(running, config, stop_tx).await,
                _ = running.join_next() => {}
            }
        }
        let leased = tokio::select! {
            () = &mut shutdown => break,
            leased = store.lease_job(&config.name, config.lease, config.max_attempts) => leased,
        };
        match leased {
            Ok(Some(job)) => {
                let (store, handler, config, stop) = (store.clone(), handler.clone(), config.clone(), stop_rx.clone());
                running.spawn(async move { supervise(&*store, job, &config, handler, stop).await });
            }
            Ok(None) => {
                tokio::select! {
                    () = &mut shutdown => break,
                    () = store.wait_for_jobs(config.idle) => {}
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "leasing a job failed");
                tokio::select! {
                    () = &mut shutdown => break,
                    () = tokio::time::sleep(config.idle) => {}
                }
            }
        }
    }
    drain(running, config, stop_tx).await
}

/// Waits up to `config.drain` for the jobs in flight, then stops the rest (each releases
/// its lease) and waits for them to do so.
async fn drain(mut running: JoinSet<()>, config: &Config, stop: &tokio::sync::watch::Sender<bool>) {
    if running.is_empty() {
        return;
    }
    tracing::info!(jobs = running.len(), drain_secs = config.drain.as_secs(), "waiting for jobs in flight");
    let finished = tokio::time::timeout(config.drain, async { while running.join_next().await.is_some() {} }).await;
    if finished.is_err() {
        tracing::warn!(jobs = running.len(), "jobs still running at the end of the drain: releasing their leases");
        let _ = stop.send(true);
        while running.join_next().await.is_some() {}
    }
}

/// Runs one leased job to its recorded end: done, failed (retried or dead), or released.
async fn supervise(
    store: &dyn Store,
    job: model::Job,
    config: &Config,
    handler: Handler,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let Some(token) = job.lease_token.clone() else {
        tracing::error!(job = job.id, "a leased job without a lease token");
        return;
    };
    let (id, kind, attempts) = (job.id, job.spec.kind(), job.attempts);
    let spec = job.spec.clone();
    let max_attempts = spec.max_attempts().unwrap_or(config.max_attempts);
    let started = std::time::Instant::now();
    let mut work = tokio::spawn((handler)(job));
    let heartbeat = async {
        let every = (config.lease / 3).max(Duration::from_millis(100));
        loop {
            tokio::time::sleep(every).await;
            match store.renew_lease(id, &token, config.lease).await {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => tracing::warn!(job = id, error = %e, "renewing the lease failed; trying again"),
            }
        }
    };
    let stopped = async {
        while !*stop.borrow_and_update() {
            if stop.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    };
    let recorded = tokio::select! {
        joined = &mut work => match joined {
            Ok(Ok(o)) => {
                tracing::info!(job = id, kind = %kind, opened = o.opened, closed = o.closed, "job done");
                metrics::job_ended(kind, "done", started.elapsed());
                store.complete_job(id, &token).await
            }
            Ok(Err(e)) => {
                let give_up = !e.retryable() || attempts >= max_attempts;
                tracing::warn!(job = id, error = %e, give_up, "job failed");
                metrics::job_ended(kind, if give_up { "dead" } else { "retry" }, started.elapsed());
                if give_up && spec.scans() && !matches!(e, JobError::LeaseLost(_)) {
                    let at = config.clock.now();
                    if let Err(e) = events::scan_failed(store, &spec, &e.to_string(), at).await {
                        tracing::error!(job = id, error = %e, "recording the failed scan's event failed");
                    }
                }
                store.fail_job(id, &token, &e.to_string(), retry_delay(&spec, attempts, config.retry_unit), give_up).await
            }
            Err(e) => {
                let why = if e.is_panic() { format!("panicked: {}", panic_message(e.into_panic())) } else { e.to_string() };
                tracing::error!(job = id, kind = %kind, error = %why, "job panicked; it is dead");
                metrics::job_ended(kind, "panicked", started.elapsed());
                store.fail_job(id, &token, &why, Duration::ZERO, true).await
            }
        },
        () = heartbeat => {
            work.abort();
            tracing::warn!(job = id, "the job's lease is gone (lapsed and taken over, or cancelled): stopped, nothing recorded");
            metrics::job_ended(kind, "lease_lost", started.elapsed());
            return;
        }
        () = stopped => {
            work.abort();
            tracing::info!(job = id, "stopped at shutdown; lease released");
            metrics::job_ended(kind, "released", started.elapsed());
            store.release_job(id, &token).await
        }
    };
    match recorded {
        Ok(true) => {}
        Ok(false) => tracing::warn!(
            job = id,
            "the job's lease was gone when its end was recorded: another worker's result stands"
        ),
        Err(e) => tracing::error!(job = id, error = %e, "recording the job's end failed; its lease will expire"),
    }
}

/// The text of a panic's payload.
fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(payload) => match payload.downcast::<&'static str>() {
            Ok(s) => (*s).to_owned(),
            Err(_) => "a panic without a message".to_owned(),
        },
    }
}

/// Runs one job outside the queue (`rampart scan`, tests).
pub async fn process(store: &dyn Store, ctx: &Context, spec: &JobSpec) -> Result<ScanOutcome, JobError> {
    process_leased(store, ctx, spec, None).await
}

/// [`process`] under a lease: each write is preceded by a renewal of `lease`, and a job
/// whose lease is gone writes nothing more ([`Lease`]). One function per kind of job.
pub async fn process_leased(
    store: &dyn Store,
    ctx: &Context,
    spec: &JobSpec,
    lease: Option<&Lease>,
) -> Result<ScanOutcome, JobError> {
    let job = Job { store, ctx, lease };
    match spec {
        JobSpec::Deliver { .. } => deliver(&job, spec).await,
        JobSpec::Verify { social_id, domain } => verify(&job, social_id, domain).await,
        JobSpec::Scan { social_id } => scan(&job, social_id).await,
        JobSpec::Quick { social_id } => quick(&job, social_id).await,
        JobSpec::Rescan { social_id, subdomain, risk_vector } => {
            rescan(&job, social_id, subdomain.as_str(), *risk_vector).await
        }
    }
}

/// A job at work: it reads the store at will, and writes only through [`Job::write`],
/// which renews its lease first (a job whose lease is gone writes nothing).
struct Job<'a> {
    store: &'a dyn Store,
    ctx: &'a Context,
    lease: Option<&'a Lease>,
}

impl<'a> Job<'a> {
    /// The store for the write (or the writes of one step) that follows, once the lease
    /// is renewed.
    async fn write(&self) -> Result<&'a dyn Store, JobError> {
        hold(self.store, self.lease).await?;
        Ok(self.store)
    }

    /// The job's first start, on every attempt (see [`Lease::started`]).
    fn now(&self) -> OffsetDateTime {
        self.lease.and_then(|l| l.started).unwrap_or(self.ctx.now)
    }
}

/// A `deliver` job: one event posted to one webhook ([`webhooks::deliver`]).
async fn deliver(job: &Job<'_>, spec: &JobSpec) -> Result<ScanOutcome, JobError> {
    let attempt = job.lease.map_or(1, |l| l.attempt);
    let last = attempt >= spec.max_attempts().unwrap_or(1);
    webhooks::deliver(job.store, job.ctx, spec, attempt, last).await?;
    Ok(ScanOutcome::default())
}

/// A `verify` job: the company's proof of control of one domain looked for.
async fn verify(job: &Job<'_>, social_id: &SocialId, domain: &model::Domain) -> Result<ScanOutcome, JobError> {
    let company = known_company(job.store, social_id).await?;
    ownership::verify(job.write().await?, job.ctx, &company, domain).await?;
    Ok(ScanOutcome::default())
}

async fn known_company(store: &dyn Store, social_id: &SocialId) -> Result<model::Company, JobError> {
    store.company_by_social_id(social_id).await?.ok_or_else(|| JobError::UnknownCompany(social_id.to_string()))
}

/// What a scan or a rescan of one company starts from: the company, its domains (those
/// no accepted dispute removed), the DKIM selectors it names, its footprint, and what
/// it looked like before (for the events).
struct CompanyScan {
    social_id: SocialId,
    company: model::Company,
    website_host: Option<String>,
    domains: Vec<String>,
    /// The DKIM selectors the company names: tried first, and no key at them is a finding.
    named: Vec<String>,
    /// What the company added to its footprint and what accepted disputes removed.
    footprint: scanner::gather::Footprint,
    /// The footprint without its addresses: they belong to no domain, and the scan of
    /// the first domain takes them.
    names_only: scanner::gather::Footprint,
    before: events::Before,
    now: OffsetDateTime,
}

impl CompanyScan {
    async fn read(job: &Job<'_>, social_id: &SocialId) -> Result<CompanyScan, JobError> {
        let store = job.store;
        let company = known_company(store, social_id).await?;
        let website_host = model::website_host(&company.website);
        let mut domains: Vec<String> =
            store.domains(company.id).await?.into_iter().map(|d| d.name.to_string()).collect();
        if let Some(d) = &company.domain
            && !domains.contains(&d.to_string())
        {
            domains.push(d.to_string());
        }
        let named = store.dkim_selectors(company.id).await?;
        let footprint = disputes::footprint_of(&store.footprint(company.id).await?);
        domains.retain(|d| !disputes::excluded(&footprint, d));
        let names_only = scanner::gather::Footprint {
            claimed: footprint.claimed.iter().filter(|(a, _)| a.kind() == "name").cloned().collect(),
            excluded: footprint.excluded.clone(),
        };
        let before = events::Before::read(store, company.id).await?;
        Ok(CompanyScan {
            social_id: social_id.clone(),
            company,
            website_host,
            domains,
            named,
            footprint,
            names_only,
            before,
            now: job.now(),
        })
    }

    /// The company's website host when it lies in `domain`.
    fn website_in(&self, domain: &str) -> Option<&str> {
        self.website_host.as_deref().filter(|h| under(h, domain))
    }

    /// The footprint the scan of the `i`-th domain works within: the first takes the
    /// company's addresses too.
    fn within(&self, i: usize) -> &scanner::gather::Footprint {
        if i == 0 { &self.footprint } else { &self.names_only }
    }

    /// One company domain's full scan.
    async fn scan_domain(&self, ctx: &Context, i: usize) -> Result<scanner::scan::DomainScan, scanner::dns::DnsError> {
        let domain = &self.domains[i];
        let (website, within) = (self.website_in(domain), self.within(i));
        scanner::scan::scan_domain_within(ctx, domain, website, &ctx.wordlist, &self.named, within).await
    }
}

/// What the scans of a company's domains saw, summed.
#[derive(Default)]
struct DomainsScanned {
    found: Vec<ScanFinding>,
    hosts: Vec<DiscoveredHost>,
    endpoints: Vec<NetworkEndpoint>,
    detected: Vec<scanner::software::Software>,
    assessed: rate::Assessed,
    truncated: bool,
    /// Domains that do not exist (NXDOMAIN).
    absent: Vec<String>,
    /// Domains whose scan failed (a lookup REFUSED, SERVFAIL or timed out): their own
    /// checks are not assessable and what earlier scans found under them is kept; the
    /// other domains are scanned and rated.
    failed: Vec<(String, scanner::dns::DnsError)>,
    notes: Vec<String>,
    /// What the company's site says it is called (the first domain that says).
    site_name: Option<String>,
}

/// The note a quick rating carries first.
pub const QUICK_NOTE: &str =
    "quick rating: DNS and mail, the web root, TLS on 443 and the common ports; the full scan follows";

/// A `quick` job: a new company's first rating in seconds, from a quick scan of its
/// domains ([`Context::quick`]), then its full scan queued among the work that keeps
/// ratings fresh ([`JobSpec::BACKGROUND`], first come first served with the scheduled
/// rescans, so neither starves the other). A company rated already is left to its full
/// scans: a quick rating never replaces a full one.
async fn quick(job: &Job<'_>, social_id: &SocialId) -> Result<ScanOutcome, JobError> {
    let company = known_company(job.store, social_id).await?;
    let mut outcome = ScanOutcome::default();
    if job.store.latest_score(company.id).await?.is_none() {
        let ctx = job.ctx.quick();
        // A company onboarded by its domain alone: its website is where its site is
        // (`www.` or the domain itself), so that the checks of the website look there.
        if let Some(domain) = &company.domain
            && company.website == format!("https://{domain}")
            && let Some(found) = scanner::identity::website(&ctx, domain.as_str()).await
            && let Ok(site) = model::Website::parse(&found)
            && job.write().await?.website_from_site(company.id, &site).await?
        {
            tracing::info!(company = %social_id, website = site.as_str(), "website found");
        }
        outcome = scan(&Job { store: job.store, ctx: &ctx, lease: job.lease }, social_id).await?;
    }
    let full = JobSpec::Scan { social_id: social_id.clone() };
    job.write().await?.enqueue_with(&full, JobSpec::BACKGROUND, OffsetDateTime::now_utc()).await?;
    Ok(outcome)
}

/// A `scan` job: every domain of the company scanned, what was seen recorded (hosts,
/// endpoints, software), the findings opened, refreshed and closed, and a rating. A
/// quick scan (its context is [`Context::quick`]) closes nothing: it did not look at
/// everything a full scan does.
async fn scan(job: &Job<'_>, social_id: &SocialId) -> Result<ScanOutcome, JobError> {
    let (store, ctx) = (job.store, job.ctx);
    let quick = ctx.quick;
    let c = CompanyScan::read(job, social_id).await?;
    let now = c.now;
    let mut s = scan_domains(job, &c).await?;
    if !s.absent.is_empty() && s.absent.len() == c.domains.len() {
        let e = scanner::dns::DnsError::NoSuchDomain(s.absent.join(", "));
        job.write().await?.set_scan_error(c.company.id, Some(&e.to_string())).await?;
        return Err(e.into());
    }
    if !s.failed.is_empty() && s.failed.len() + s.absent.len() == c.domains.len() {
        // Nothing could be scanned: the job fails (and is tried again); the kept
        // rating is marked stale with the reason until a scan succeeds.
        let (_, e) = s.failed.swap_remove(0);
        job.write().await?.set_scan_error(c.company.id, Some(&e.to_string())).await?;
        return Err(e.into());
    }
    let failed_domains: Vec<String> = s.failed.iter().map(|(d, _)| d.clone()).collect();
    for (d, e) in &s.failed {
        let why = format!("not reached: {e}");
        s.notes.push(format!("{d}: not scanned ({e}); what earlier scans found under it is kept"));
        for v in [RiskVector::Spf, RiskVector::Dkim, RiskVector::Dmarc, RiskVector::ItStandardization] {
            s.assessed.checks.push(model::Check::unreached(v, "domain", d, why.clone()));
        }
    }
    // Domains that do not exist are not scanned: what was found on them stays as
    // it was (the scan is partial, like a truncated one).
    s.truncated |= !s.absent.is_empty();
    s.notes.extend(s.absent.iter().map(|d| format!("{d}: the domain does not exist (NXDOMAIN); not scanned")));
    job.write().await?.record_discovery(c.company.id, &s.hosts, &s.endpoints, now).await?;
    let inventory = software::inventory(store, &s.detected, ctx.eol.as_deref(), now).await?;
    if ctx.wants(RiskVector::Vulnerabilities) {
        s.found.extend(inventory.findings);
        s.assessed.checks.extend(inventory.checks);
    }
    let writing = job.write().await?;
    writing.record_software(c.company.id, &inventory.applications, &inventory.components, now).await?;
    // Kept to be matched again when the feeds change (`feeds::rematch`).
    let kept = serde_json::to_string(&s.detected).map_err(|e| JobError::Payload(e.to_string()))?;
    writing.save_detected_software(c.company.id, &kept, &feeds::products(&s.detected), now).await?;
    s.assessed.set_software(&s.detected);
    let left_out: Vec<&str> = failed_domains.iter().chain(s.absent.iter()).map(String::as_str).collect();
    let open = store.open_findings(c.company.id).await?;
    let unreached = recheck_missing(ctx, &c, &open, &s.hosts, &left_out).await;
    s.assessed.checks.extend(unreached);
    metrics::not_assessable(&s.assessed.checks);
    // The open findings on hosts the scan could not reach stay open, and those
    // hosts are judged on them (a host hidden from the scanner is not clean).
    let unreached = unreached_findings(&open, &s.assessed.checks, &failed_domains);
    s.assessed.carried = unreached.hosts;
    // A scan cut short by its budget opens and refreshes what it saw and closes
    // nothing: what it did not look at is unknown, not fixed.
    let scope = ScanScope {
        risk_vectors: &VECTORS,
        asset: None,
        below: false,
        close_missing: !s.truncated && !quick,
        keep_open: &unreached.ids,
    };
    let outcome = job.write().await?.record_scan(c.company.id, scope, &to_findings(s.found, now), now).await?;
    let writing = job.write().await?;
    if quick {
        s.notes.insert(0, QUICK_NOTE.to_owned());
    }
    let basis = rate::Basis { quick, ..s.assessed.basis(&s.notes) };
    rate::rate(writing, c.company.id, c.website_host.as_deref(), &basis, now).await?;
    writing.set_scan_error(c.company.id, None).await?;
    // A company onboarded by its domain is named by what its site says (a name someone
    // gave stays).
    if let Some(name) = &s.site_name
        && writing.name_from_site(c.company.id, name).await?
    {
        tracing::info!(company = %social_id, name, "named from its site");
    }
    let truncated = (s.truncated && !quick).then_some(s.notes.as_slice());
    events::after(writing, &c.company, c.before, now, truncated).await?;
    Ok(outcome)
}

/// The full scan of each of the company's domains, summed. A domain that does not
/// exist, or whose scan failed, is left out and said so ([`DomainsScanned`]).
async fn scan_domains(job: &Job<'_>, c: &CompanyScan) -> Result<DomainsScanned, JobError> {
    let social_id = &c.social_id;
    let mut s = DomainsScanned::default();
    let unproven = store::judged::unproven_claims(job.store, c.company.id).await?;
    for (i, domain) in c.domains.iter().enumerate() {
        let scan = match c.scan_domain(job.ctx, i).await {
            Ok(scan) => scan,
            // A domain that does not exist is left out (its findings would all
            // be false "missing" verdicts); with none left, nothing is rated.
            Err(scanner::dns::DnsError::NoSuchDomain(d)) => {
                tracing::warn!(company = %social_id, domain = %d, "the domain does not exist (NXDOMAIN): not scanned");
                s.absent.push(d);
                continue;
            }
            Err(e) => {
                tracing::warn!(company = %social_id, domain, error = %e, "the domain's scan failed: its findings are kept");
                s.failed.push((domain.clone(), e));
                continue;
            }
        };
        report_budget(social_id, &scan);
        s.notes.extend(scan_notes(&scan));
        if scan.truncated() {
            metrics::truncated();
        }
        s.truncated |= scan.truncated();
        if unproven.contains(domain) {
            s.notes.push(format!("{domain}: claimed by the company, not yet verified: scanned, not rated"));
        } else {
            s.assessed.add_scan(&scan);
            if s.site_name.is_none() {
                s.site_name = scan.site_name(c.website_in(domain));
            }
        }
        s.found.extend(scan.findings.into_iter().filter(|f| !disputes::excluded(&c.footprint, &f.asset)));
        let (h, e) = discovered(&scan.assets, &scan.endpoints, c.now);
        s.hosts.extend(h);
        s.endpoints.extend(e);
        for sw in scan.software {
            scanner::software::merge(&mut s.detected, sw);
        }
    }
    Ok(s)
}

/// Hosts earlier scans saw findings on that this scan did not find (`hosts` are those it
/// found; `left_out` the domains it did not scan): gone from DNS (NXDOMAIN, no address)
/// their findings close, but a name whose lookup now fails or whose address the guard
/// refuses was not looked at. The checks of those, each unreached.
async fn recheck_missing(
    ctx: &Context,
    c: &CompanyScan,
    open: &[Finding],
    hosts: &[DiscoveredHost],
    left_out: &[&str],
) -> Vec<model::Check> {
    let seen: std::collections::BTreeSet<&str> = hosts.iter().map(|h| h.name.as_str()).collect();
    let mut missing: std::collections::BTreeMap<String, std::collections::BTreeSet<RiskVector>> =
        std::collections::BTreeMap::new();
    for f in open {
        let host = host_of(&f.asset);
        if model::Domain::parse(&host).is_err()
            || seen.contains(host.as_str())
            || left_out.iter().any(|d| under(&host, d))
            || disputes::excluded(&c.footprint, &host)
        {
            continue;
        }
        missing.entry(host).or_default().insert(f.risk_vector);
    }
    let mut out = Vec::new();
    for (host, vectors) in missing.iter().take(MAX_RECHECKED_HOSTS) {
        if let Some(why) = scanner::gather::unreached_host(ctx, host).await {
            for v in vectors {
                out.push(model::Check::unreached(*v, "host", host, &why));
            }
        }
    }
    out
}

/// A `rescan` job: one host and risk vector of the company looked at again, its
/// findings of that vector opened, refreshed and closed, the `fixed` disputes it
/// covers settled, and a re-rating.
async fn rescan(
    job: &Job<'_>,
    social_id: &SocialId,
    subdomain: &str,
    vector: RiskVector,
) -> Result<ScanOutcome, JobError> {
    let store = job.store;
    let c = CompanyScan::read(job, social_id).await?;
    let now = c.now;
    let subdomain = subdomain.to_owned();
    if !VECTORS.contains(&vector) || disputes::excluded(&c.footprint, &subdomain) {
        // Not probed yet by this worker, or no longer the company's: nothing to
        // re-run, nothing to close.
        return Ok(ScanOutcome::default());
    }
    // The company domain the subdomain lies in (the longest, for nested ones).
    let Some(i) =
        (0..c.domains.len()).filter(|i| under(&subdomain, &c.domains[*i])).max_by_key(|i| c.domains[*i].len())
    else {
        return Err(JobError::Payload(format!("{subdomain} is not under any domain of {social_id}")));
    };
    let seen = rescanned(job, &c, i, &subdomain, vector).await?;
    let (mut found, unreached) = (seen.found, seen.unreached);
    let mut complete = seen.complete;
    if let Some(why) = &unreached {
        tracing::warn!(company = %social_id, host = %subdomain, %vector, why, "rescan: the host was not reached; nothing closes");
        complete = false;
    }
    found.retain(|f| f.risk_vector == vector && under(&f.asset, &subdomain));
    let vectors = [vector];
    let scope = ScanScope {
        risk_vectors: &vectors,
        asset: Some(&subdomain),
        below: true,
        close_missing: complete,
        keep_open: &seen.keep_open,
    };
    let company = &c.company;
    let outcome = job.write().await?.record_scan(company.id, scope, &to_findings(found, now), now).await?;
    // The `fixed` disputes this rescan covers are decided by what it saw.
    let writing = job.write().await?;
    let settled = match unreached {
        None => disputes::settle_fixed(writing, company.id, vector, &subdomain, now).await?,
        Some(_) => Vec::new(),
    };
    // The score moves with the fix: re-rated over the assets of the last computed
    // rating (an imported rating is left alone).
    if let Some(last) = store.latest_score(company.id).await?.filter(|s| s.methodology.is_some()) {
        let writing = job.write().await?;
        let reason = if settled.is_empty() {
            model::RATED_BY_RESCAN.to_owned()
        } else {
            format!("{}: {}", model::RATED_BY_RESCAN, settled.join("; "))
        };
        let basis = rate::Basis { reason: Some(reason), ..rate::basis_of(&last) };
        rate::rate(writing, company.id, c.website_host.as_deref(), &basis, now).await?;
    }
    events::after(store, company, c.before, now, None).await?;
    Ok(outcome)
}

/// What a rescan saw: its findings (of every vector; the caller keeps the one asked
/// for), whether it saw everything it looked for, the open findings it must keep
/// although it did not see them, and why the host was not reached.
struct Rescanned {
    found: Vec<ScanFinding>,
    complete: bool,
    keep_open: Vec<i64>,
    unreached: Option<String>,
}

/// The rescan of `subdomain` under the `i`-th domain of the company for `vector`: the
/// domain itself is scanned in full (and what it discovered recorded); the software of
/// a host is matched against the vulnerability database; any other vector is the
/// scanner's rescan of the host.
async fn rescanned(
    job: &Job<'_>,
    c: &CompanyScan,
    i: usize,
    subdomain: &str,
    vector: RiskVector,
) -> Result<Rescanned, JobError> {
    let (store, ctx) = (job.store, job.ctx);
    let domain = &c.domains[i];
    let mut out = Rescanned { found: Vec::new(), complete: true, keep_open: Vec::new(), unreached: None };
    if domain == subdomain {
        let scan = c.scan_domain(ctx, i).await?;
        report_budget(&c.social_id, &scan);
        out.complete = !scan.truncated();
        if scan.checks.iter().any(|c| c.unreached) {
            out.keep_open = unreached_findings(&store.open_findings(c.company.id).await?, &scan.checks, &[]).ids;
        }
        let (h, e) = discovered(&scan.assets, &scan.endpoints, c.now);
        job.write().await?.record_discovery(c.company.id, &h, &e, c.now).await?;
        out.found = scan.findings;
    } else if vector == RiskVector::Vulnerabilities {
        out.unreached = scanner::gather::unreached_host(ctx, subdomain).await;
        let detected = match out.unreached {
            Some(_) => Vec::new(),
            None => scanner::gather::host_software(ctx, subdomain).await,
        };
        out.found = software::inventory(store, &detected, ctx.eol.as_deref(), c.now).await?.findings;
    } else {
        let host = scanner::scan::rescan_host(ctx, domain, subdomain, c.website_in(domain), vector, &c.named).await?;
        out.unreached = host.unreached;
        out.found = host.findings;
    }
    Ok(out)
}

/// The most hosts a full scan looks up again because earlier findings are on them and
/// this scan did not find them (each one DNS question through the guard).
const MAX_RECHECKED_HOSTS: usize = 200;

/// The open findings a scan must keep although it did not see them: those on a target
/// its checks of that vector could not reach ([`model::Check::unreached`]) and every one
/// under a domain whose scan failed (`failed`), by id, and per risk vector the number of
/// such targets that carry some (they count as assets judged on their last observed
/// state).
struct Unreached {
    ids: Vec<i64>,
    hosts: std::collections::BTreeMap<RiskVector, u32>,
}

fn unreached_findings(open: &[Finding], checks: &[model::Check], failed: &[String]) -> Unreached {
    use std::collections::{BTreeMap, BTreeSet};
    let targets: BTreeSet<(RiskVector, String)> =
        checks.iter().filter(|c| c.unreached).map(|c| (c.risk_vector, host_of(&c.asset))).collect();
    let mut out = Unreached { ids: Vec::new(), hosts: BTreeMap::new() };
    if targets.is_empty() && failed.is_empty() {
        return out;
    }
    let mut carried: BTreeSet<(RiskVector, String)> = BTreeSet::new();
    for f in open {
        let key = (f.risk_vector, host_of(&f.asset));
        if targets.contains(&key) || failed.iter().any(|d| under(&key.1, d)) {
            out.ids.push(f.id);
            carried.insert(key);
        }
    }
    for (v, _) in carried {
        *out.hosts.entry(v).or_default() += 1;
    }
    out
}

/// The host an asset text names (`https://www.acme.test/`, `www.acme.test:443` →
/// `www.acme.test`), or the text itself (an address).
fn host_of(asset: &str) -> String {
    match (model::dispute::asset_address(asset), model::dispute::asset_host(asset)) {
        (Some(ip), _) => ip.to_string(),
        (None, Some(h)) => h.to_string(),
        (None, None) => asset.to_owned(),
    }
}

/// The names a scan refused and the caps it reached, in the worker's log.
/// What limited one domain's scan, for the rating: its truncation notes, and how many
/// names it refused (each named in the worker's log).
fn scan_notes(scan: &scanner::scan::DomainScan) -> Vec<String> {
    let mut out: Vec<String> = scan.notes.iter().map(|n| format!("{}: {n}", scan.domain)).collect();
    if !scan.skipped.is_empty() {
        let first: Vec<&str> = scan.skipped.iter().take(3).map(|s| s.reason.as_str()).collect();
        out.push(format!(
            "{}: {} discovered names refused (not a host name the scanner may connect to: {}{})",
            scan.domain,
            scan.skipped.len(),
            first.join("; "),
            if scan.skipped.len() > 3 { "; …" } else { "" }
        ));
    }
    out
}

fn report_budget(company: &SocialId, scan: &scanner::scan::DomainScan) {
    for s in &scan.skipped {
        tracing::info!(company = %company, domain = %scan.domain, name = %s.name, source = %s.source, reason = %s.reason, "name skipped");
    }
    for note in &scan.notes {
        tracing::warn!(company = %company, domain = %scan.domain, note = %note, "scan truncated; open findings are kept");
    }
}

/// The store's records of what discovery found: each host with its attribution, and
/// each observed endpoint with the attribution of its host.
fn discovered(
    assets: &[scanner::discovery::Asset],
    endpoints: &[scanner::probes::web::Endpoint],
    now: OffsetDateTime,
) -> (Vec<DiscoveredHost>, Vec<NetworkEndpoint>) {
    let why = |a: &scanner::discovery::Asset| Attribution { source: a.source.clone(), evidence: a.evidence.clone() };
    let hosts = assets
        .iter()
        .map(|a| DiscoveredHost {
            name: a.name.clone(),
            addresses: a.addresses.clone(),
            attribution: why(a),
            first_seen: OffsetDateTimeText(now),
            last_seen: OffsetDateTimeText(now),
        })
        .collect();
    let endpoints = endpoints
        .iter()
        .map(|e| NetworkEndpoint {
            ip: e.ip,
            port: e.port,
            protocol: "tcp".into(),
            host: Some(e.host.clone()),
            service: Some(e.service.clone()),
            product: e.product.clone(),
            version: e.version.clone(),
            banner: e.banner.clone(),
            attribution: assets.iter().find(|a| a.name == e.host).map(why),
            first_seen: OffsetDateTimeText(now),
            last_seen: OffsetDateTimeText(now),
        })
        .collect();
    (hosts, endpoints)
}

use store::asset_under as under;

/// Scan findings as the store keeps them (one per identity), stamped `now`.
pub fn to_findings(found: Vec<ScanFinding>, now: OffsetDateTime) -> Vec<Finding> {
    // One finding per (risk vector, asset, code, CVE or component): the store's identity.
    let mut seen = std::collections::BTreeSet::new();
    found
        .into_iter()
        .filter(|f| seen.insert((f.risk_vector, f.asset.clone(), f.code.clone(), f.cve.clone(), f.component.clone())))
        .map(|f| Finding {
            id: 0,
            risk_vector: f.risk_vector,
            asset: f.asset,
            severity: f.severity,
            code: f.code,
            title: f.title,
            evidence: f.evidence,
            remediation: f.remediation,
            references: f.references,
            cve: f.cve.as_deref().and_then(|c| model::CveId::parse(c).ok()),
            component: f.component,
            first_seen: OffsetDateTimeText(now),
            last_seen: OffsetDateTimeText(now),
            disputed: false,
            no_weight: false,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assets_below_a_name() {
        assert!(under("acme.test", "acme.test"));
        assert!(under("s1._domainkey.acme.test", "acme.test"));
        assert!(under("https://www.acme.test/", "acme.test"));
        assert!(under("www.acme.test:443", "acme.test"));
        assert!(!under("notacme.test", "acme.test"));
        assert!(!under("https://evil.test/acme.test", "acme.test"));
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        assert_eq!(backoff(1), Duration::from_secs(10));
        assert_eq!(backoff(2), Duration::from_secs(40));
        assert_eq!(backoff(100), Duration::from_secs(900));
    }
}
