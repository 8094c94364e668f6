//! `rampart`: the one binary. Wiring only: parse the command line, open the store,
//! hand over to the library crates.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use model::{Scope, SocialId};
use tokio::net::TcpListener;

/// `println!` for what the commands print: when stdout is closed early
/// (`rampart scan … | head`) the process ends quietly, as the other tools of a pipeline
/// do, instead of panicking. (SIGPIPE stays ignored, as Rust sets it: the scanner's and
/// the server's socket writes must get EPIPE, not end the process.)
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout().lock(), $($arg)*) {
            $crate::stdout_failed(e);
        }
    }};
}

/// `text` cut to `max` characters, with `…` when it was longer (a table cell).
pub(crate) fn clip(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).collect();
    if text.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}

/// The end of a command whose stdout failed: quietly for a closed pipe (the exit status
/// a shell gives a process SIGPIPE ended), with the error otherwise.
pub(crate) fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(141);
    }
    eprintln!("rampart: writing to stdout: {e}");
    std::process::exit(1);
}

mod explain;
mod report;
mod rescore;
mod sbom;
mod scan;
mod status;

#[derive(Parser)]
#[command(name = "rampart", version, about = "Open, explainable cyber-risk ratings")]
struct Cli {
    /// How log lines are written to stderr: text, or one JSON object per line.
    #[arg(long, global = true, env = "RAMPART_LOG_FORMAT", value_enum, default_value = "text")]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Args, Clone)]
struct DbArg {
    /// Database: postgres://USER@HOST:PORT/DB, sqlite://PATH, a file path, or sqlite::memory:
    #[arg(long, env = "RAMPART_DB", default_value = "rampart.db")]
    db: String,
}

#[derive(Args, Clone, Debug)]
struct FeedSources {
    /// Where downloads are kept (and partial ones resumed from).
    #[arg(long, default_value = "rampart-cache")]
    cache: PathBuf,
    /// Base URL of the yearly NVD JSON 2.0 feed files (default: NVD's).
    #[arg(long)]
    nvd_feed_base: Option<String>,
    /// The NVD CVE API 2.0 endpoint (default: NVD's).
    #[arg(long)]
    nvd_api: Option<String>,
    /// The CISA KEV JSON (default: CISA's).
    #[arg(long)]
    kev_url: Option<String>,
    /// The EPSS CSV, plain or gzipped (default: the current daily file).
    #[arg(long)]
    epss_url: Option<String>,
    /// The CWE catalogue, zipped or plain XML (default: MITRE's latest).
    #[arg(long)]
    cwe_url: Option<String>,
    /// The CAPEC catalogue XML (default: MITRE's latest).
    #[arg(long)]
    capec_url: Option<String>,
    /// The first year of NVD feed files a first sync downloads.
    #[arg(long, default_value_t = 2002)]
    first_year: i32,
}

impl FeedSources {
    /// The sync of `feeds` from these sources (NVD API key: env NVD_API_KEY).
    fn options(self, feeds: Vec<sync::Feed>, progress: bool) -> sync::SyncOptions {
        let d = sync::SyncOptions::default().with_nvd_api_key(std::env::var("NVD_API_KEY").ok());
        sync::SyncOptions {
            feeds,
            cache_dir: self.cache,
            nvd_feed_base: self.nvd_feed_base.unwrap_or(d.nvd_feed_base),
            nvd_api: self.nvd_api.unwrap_or(d.nvd_api),
            kev_url: self.kev_url.unwrap_or(d.kev_url),
            epss_url: self.epss_url.unwrap_or(d.epss_url),
            cwe_url: self.cwe_url.unwrap_or(d.cwe_url),
            capec_url: self.capec_url.unwrap_or(d.capec_url),
            first_year: self.first_year,
            progress,
            ..d
        }
    }
}

/// What a worker keeps of the feeds: `--sync-every` and where the scheduled sync fetches.
#[derive(Args, Clone, Debug)]
struct FeedSchedule {
    /// Run `rampart sync` for the NVD, KEV and EPSS feeds this often (90s, 30m, 24h, 7d;
    /// `off`: never here). Whatever the feeds change is matched against the companies'
    /// detected software and re-rated without a rescan, in any case.
    #[arg(long, env = "RAMPART_SYNC_EVERY", default_value = "24h", value_parser = status::parse_rescan_every)]
    sync_every: status::RescanEvery,
    #[command(flatten)]
    sources: FeedSources,
}

impl FeedSchedule {
    fn config(self, name: &str) -> worker::feeds::FeedsConfig {
        let feeds = vec![sync::Feed::Nvd, sync::Feed::Kev, sync::Feed::Epss];
        worker::feeds::FeedsConfig::new(self.sync_every.0, self.sources.options(feeds, false), name)
    }
}

#[derive(Subcommand)]
enum Command {
    /// Serve the API.
    Serve {
        #[command(flatten)]
        db: DbArg,
        /// Address to listen on.
        #[arg(long, env = "RAMPART_LISTEN", default_value = "127.0.0.1:8080")]
        listen: SocketAddr,
        /// Seconds an answer about a company is kept at most (0: never). A write of the
        /// data it was read from ends it sooner (see --version-poll-ms).
        #[arg(long, env = "RAMPART_READ_CACHE_SECS", default_value_t = 60)]
        read_cache_secs: u64,
        /// Seconds a CVE search answer is kept at most (0: never); a feed import ends it
        /// sooner.
        #[arg(long, env = "RAMPART_CVE_CACHE_SECS", default_value_t = 300)]
        cve_cache_secs: u64,
        /// Milliseconds between reads of the data versions: the longest a write by
        /// another process (a worker, an import, another API process) goes unseen by
        /// this one's caches.
        #[arg(long, env = "RAMPART_VERSION_POLL_MS", default_value_t = 250, value_parser = clap::value_parser!(u64).range(10..=60_000))]
        version_poll_ms: u64,
        /// MiB of CVE records kept in memory for the CVE searches (0: none).
        #[arg(long, env = "RAMPART_SERVED_CACHE_MIB", default_value_t = 64)]
        served_cache_mib: usize,
        /// Failed authentications a client address may make per minute before its
        /// requests are refused (429) without a key lookup (0: no limit).
        #[arg(long, env = "RAMPART_AUTH_FAILURES_PER_MINUTE", default_value_t = api::FAILURES_PER_MINUTE)]
        auth_failures_per_minute: u32,
        /// Scan jobs run in this process at once (0: none; run `rampart worker` apart).
        #[arg(long, env = "RAMPART_WORKERS", default_value_t = 0)]
        workers: usize,
        /// Serve /metrics (Prometheus text format) on an address of its own instead of on
        /// the API's.
        #[arg(long, env = "RAMPART_METRICS_LISTEN")]
        metrics_listen: Option<SocketAddr>,
        /// Rescan every company whose rating is older than this (90s, 30m, 24h, 7d; a
        /// company's own cadence: `rampart companies set-cadence`), spread over the period;
        /// `off`: this process schedules nothing (with --workers 0 it never does). Several processes may schedule: one at a
        /// time does.
        #[arg(long, env = "RAMPART_RESCAN_EVERY", default_value = "24h", value_parser = status::parse_rescan_every)]
        rescan_every: status::RescanEvery,
        #[command(flatten)]
        feeds: FeedSchedule,
        /// Balancers (IP addresses, comma-separated) whose X-Forwarded-For names the
        /// client: the failed-authentication limit then counts per real client.
        #[arg(long, env = "RAMPART_TRUSTED_PROXIES", value_delimiter = ',')]
        trusted_proxies: Vec<std::net::IpAddr>,
        #[command(flatten)]
        limits: LimitsArg,
        #[command(flatten)]
        net: scan::NetOpts,
    },
    /// Run scan jobs from the store's queue until Ctrl-C.
    Worker {
        #[command(flatten)]
        db: DbArg,
        /// Jobs run at once.
        #[arg(long, default_value_t = 4)]
        concurrency: usize,
        /// Seconds a job's lease lasts (renewed every third of it while the job runs);
        /// a worker that dies loses its jobs to another after at most this long.
        #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=86_400))]
        lease_secs: u64,
        /// Attempts of a job before it is dead.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(i64).range(1..=100))]
        max_attempts: i64,
        /// Serve /metrics (Prometheus text format) on an address of its own (none when absent).
        #[arg(long, env = "RAMPART_METRICS_LISTEN")]
        metrics_listen: Option<SocketAddr>,
        /// Rescan every company whose rating is older than this (90s, 30m, 24h, 7d; a
        /// company's own cadence: `rampart companies set-cadence`), spread over the period;
        /// `off`: this process schedules nothing. Several processes may schedule: one at a
        /// time does.
        #[arg(long, env = "RAMPART_RESCAN_EVERY", default_value = "24h", value_parser = status::parse_rescan_every)]
        rescan_every: status::RescanEvery,
        #[command(flatten)]
        feeds: FeedSchedule,
        #[command(flatten)]
        net: scan::NetOpts,
    },
    /// The job queue: list jobs, retry a dead one, cancel one.
    Jobs {
        #[command(subcommand)]
        action: JobsAction,
    },
    /// Disputes of findings and removals of assets that companies asked for: list them,
    /// accept or reject them (the company is re-rated with the reason).
    Disputes {
        #[command(subcommand)]
        action: DisputesAction,
    },
    /// Subsidiary links that keys asked for and an operator must approve.
    Subsidiaries {
        #[command(subcommand)]
        action: SubsidiariesAction,
    },
    /// Footprint additions that keys asked for (another company's on evidence) and an
    /// operator must approve.
    Footprint {
        #[command(subcommand)]
        action: SubsidiariesAction,
    },
    /// Webhooks: where a company's events (and its subsidiaries') are delivered, signed.
    Webhooks {
        #[command(subcommand)]
        action: WebhooksAction,
    },
    /// What a company's own data says, beside the import file: its DKIM selectors and
    /// its rescan cadence.
    Companies {
        #[command(subcommand)]
        action: CompaniesAction,
    },
    /// How current the ratings are: the queue by kind, rating ages, the next scheduled
    /// rescans, dead jobs, feed ages.
    Status {
        #[command(flatten)]
        db: DbArg,
    },
    /// Manage API keys.
    Keys {
        #[command(subcommand)]
        action: KeysAction,
    },
    /// Import data files.
    Import {
        #[command(subcommand)]
        what: ImportWhat,
    },
    /// Serve every path with sample responses; any non-empty apikey is accepted.
    Mock {
        #[arg(long, env = "RAMPART_LISTEN", default_value = "127.0.0.1:8081")]
        listen: SocketAddr,
    },
    /// Print the OpenAPI document.
    Openapi,
    /// Scan one domain without a database: discovery and every probe so far.
    Scan {
        domain: String,
        /// The company's website host, for the IPv6, security.txt and HTTPS checks.
        #[arg(long)]
        website: Option<String>,
        #[command(flatten)]
        opts: scan::ScanOpts,
    },
    /// Run one group of the scanner's probes on one target, without a database.
    Probe {
        #[command(subcommand)]
        what: ProbeWhat,
    },
    /// The lab: a simulated internet on 127.0.0.0/8.
    Lab {
        #[command(subcommand)]
        action: LabAction,
    },
    /// Download the vulnerability feeds and import them (NVD API key: env NVD_API_KEY).
    Sync {
        #[command(flatten)]
        db: DbArg,
        /// Comma-separated: nvd, kev, epss, cwe, capec.
        #[arg(long, value_delimiter = ',', default_value = "nvd,kev,epss,cwe,capec")]
        feeds: Vec<sync::Feed>,
        #[command(flatten)]
        sources: FeedSources,
    },
    /// Why a company's score is what it is: every component, every penalty, every cap,
    /// with the findings behind them.
    Explain {
        #[command(flatten)]
        db: DbArg,
        /// The company's social_id or one of its domains.
        company: String,
        #[arg(long, value_enum, default_value = "text")]
        format: explain::ExplainFormat,
    },
    /// Recompute the history of computed ratings under a methodology version this build
    /// implements (each rating keeps its time and the assets its scan assessed).
    Rescore {
        #[command(flatten)]
        db: DbArg,
        #[arg(long, default_value = rating::METHODOLOGY_VERSION)]
        methodology: String,
        /// Only this company (default: every scanned company).
        #[arg(long)]
        company: Option<String>,
    },
    /// Bring a database's schema up to date (--to alone: what a deployment runs before
    /// starting new processes), or copy everything in a SQLite database into an empty
    /// PostgreSQL one (companies, assets, findings with first_seen, rating history, keys
    /// and usage, CVEs, incidents, jobs), in one transaction.
    Migrate {
        /// The SQLite database to copy: sqlite://PATH or a file path.
        #[arg(long)]
        from: Option<String>,
        /// The database: postgres://USER@HOST:PORT/DB, or a SQLite one when migrating
        /// its schema alone (migrated on open).
        #[arg(long)]
        to: String,
    },
    /// Export a company's SBOM (the components its scans detected).
    Sbom {
        #[command(flatten)]
        db: DbArg,
        social_id: String,
        #[arg(long, value_enum, default_value = "cyclonedx")]
        format: sbom::SbomFormat,
    },
    /// A company's scorecard as one document to send: HTML, or PDF (printed by headless
    /// Chromium). Read from the database directly; no key needed.
    Report {
        social_id: String,
        #[command(flatten)]
        db: DbArg,
        #[arg(long, value_enum, default_value = "html")]
        format: report::ReportFormat,
        /// Where to write it (default: rampart-report-SOCIAL_ID.html or .pdf here).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The whole pipeline on this machine: bring the lab up, register its fictional
    /// companies, scan and rate them with in-process workers, print working keys and curl
    /// commands, and serve the API (workers keep running for rescans). Started again on
    /// its database, it serves at once: the companies rated before are queued for the
    /// workers, and only those never rated are scanned before it serves.
    Demo {
        #[arg(long, env = "RAMPART_LISTEN", default_value = "127.0.0.1:8080")]
        listen: SocketAddr,
        /// The demo's own database (never `RAMPART_DB`, which `serve` reads).
        #[arg(long, env = "RAMPART_DEMO_DB", default_value = "rampart-demo.db")]
        db: String,
        /// The second octet of the lab's addresses (127.N.*.*), to run beside another lab.
        #[arg(long, default_value_t = 78)]
        lab_octet: u8,
    },
}

#[derive(Subcommand)]
enum CompaniesAction {
    /// Set a company's DKIM selectors (`--dkim-selectors ''` clears them); shows them
    /// when none is given.
    Set {
        #[command(flatten)]
        db: DbArg,
        social_id: String,
        /// The selectors the company signs with, comma-separated: its scans try them
        /// first, and no key at them is `dkim.missing`.
        #[arg(long, value_delimiter = ',')]
        dkim_selectors: Option<Vec<String>>,
    },
    /// Set how often a company is rescanned (90s, 30m, 24h, 7d), or `default` for the
    /// scheduler's --rescan-every; shows it when none is given.
    SetCadence {
        #[command(flatten)]
        db: DbArg,
        social_id: String,
        every: Option<String>,
    },
}

#[derive(Subcommand)]
enum WebhooksAction {
    /// Add a webhook for a company's events and its subsidiaries'; prints its signing
    /// secret, shown this once.
    Add {
        #[command(flatten)]
        db: DbArg,
        /// The company whose events are delivered.
        #[arg(long)]
        company: String,
        /// Where deliveries are POSTed: an http(s) URL.
        #[arg(long)]
        url: String,
        /// The event types delivered, comma-separated (rating_changed, finding_opened,
        /// finding_closed, asset_attributed, scan_failed, scan_truncated, rating_stale); all when absent.
        #[arg(long, value_parser = parse_event_kinds)]
        events: Option<EventKinds>,
        /// Lab mode: admit a loopback or private address as the URL's host (the workers'
        /// guard decides again at each delivery).
        #[arg(long)]
        allow_private: bool,
    },
    /// List the webhooks with their latest delivery.
    List {
        #[command(flatten)]
        db: DbArg,
    },
    /// Remove a webhook (its queued deliveries end without sending).
    Remove {
        #[command(flatten)]
        db: DbArg,
        id: i64,
    },
    /// A webhook's latest delivery attempts, newest first.
    Deliveries {
        #[command(flatten)]
        db: DbArg,
        id: i64,
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=1000))]
        limit: u32,
    },
}

/// The event types of `webhooks add --events` (one value: clap reads a `Vec` as many).
#[derive(Debug, Clone, PartialEq)]
struct EventKinds(Vec<model::EventKind>);

fn parse_event_kinds(text: &str) -> Result<EventKinds, String> {
    let kinds = model::EventKind::parse_list(text)?;
    if kinds.is_empty() {
        return Err("no event type given".into());
    }
    Ok(EventKinds(kinds))
}

async fn webhooks(action: WebhooksAction) -> Result<()> {
    match action {
        WebhooksAction::Add { db, company, url, events, allow_private } => {
            let id = SocialId::parse(&company).with_context(|| format!("{company:?} is not a social_id"))?;
            worker::webhooks::check_url(&url, allow_private).map_err(|e| anyhow::anyhow!("the webhook URL: {e}"))?;
            let store = open(&db.db).await?;
            let company = store.company_by_social_id(&id).await?.with_context(|| format!("no company {id}"))?;
            let secret =
                worker::webhooks::new_secret().map_err(|e| anyhow::anyhow!("no randomness for the secret: {e}"))?;
            let hook = store
                .add_webhook(&model::NewWebhook {
                    company: company.id,
                    url: url.trim().to_owned(),
                    secret,
                    kinds: events.map(|e| e.0).unwrap_or_default(),
                })
                .await?;
            say!("webhook {} added: {} events of {id} and its subsidiaries → {}", hook.id, kinds_text(&hook), hook.url);
            say!("signing secret (shown once; verify each delivery's Rampart-Signature with it):");
            say!("{}", hook.secret);
            Ok(())
        }
        WebhooksAction::List { db } => {
            let store = open(&db.db).await?;
            let hooks = store.webhooks().await?;
            if hooks.is_empty() {
                say!("no webhooks");
            }
            for hook in hooks {
                let last = store.deliveries(hook.id, 1).await?.into_iter().next();
                let last = match last {
                    None => "no delivery yet".to_owned(),
                    Some(d) => format!(
                        "last delivery {} event {} attempt {}: {}{}",
                        model::timefmt::rfc3339(d.at),
                        d.event,
                        d.attempt,
                        d.outcome,
                        d.status.map(|s| format!(" (HTTP {s})")).unwrap_or_default()
                    ),
                };
                say!(
                    "{:>4}  {}  {}  {}  added {}  {}",
                    hook.id,
                    hook.social_id,
                    hook.url,
                    kinds_text(&hook),
                    model::timefmt::rfc3339(hook.created_at),
                    last
                );
            }
            Ok(())
        }
        WebhooksAction::Remove { db, id } => {
            let store = open(&db.db).await?;
            if !store.remove_webhook(id).await? {
                anyhow::bail!("no webhook {id}");
            }
            say!("webhook {id} removed");
            Ok(())
        }
        WebhooksAction::Deliveries { db, id, limit } => {
            let store = open(&db.db).await?;
            store.webhook(id).await?.with_context(|| format!("no webhook {id}"))?;
            let log = store.deliveries(id, limit).await?;
            if log.is_empty() {
                say!("no deliveries to webhook {id} yet");
            }
            for d in log {
                say!(
                    "{}  event {:>6}  attempt {:>2}  {:<9}  {:>4}  {:>6} ms  {}",
                    model::timefmt::rfc3339(d.at),
                    d.event,
                    d.attempt,
                    d.outcome,
                    d.status.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
                    d.millis,
                    d.error.as_deref().unwrap_or("")
                );
            }
            Ok(())
        }
    }
}

/// A webhook's event types as shown.
fn kinds_text(hook: &model::Webhook) -> String {
    if hook.kinds.is_empty() {
        "all".to_owned()
    } else {
        hook.kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(",")
    }
}

async fn companies(action: CompaniesAction) -> Result<()> {
    match action {
        CompaniesAction::Set { db, social_id, dkim_selectors } => {
            let store = open(&db.db).await?;
            let id = SocialId::parse(&social_id).with_context(|| format!("{social_id:?} is not a social_id"))?;
            let company = store.company_by_social_id(&id).await?.with_context(|| format!("no company {id}"))?;
            if let Some(given) = dkim_selectors {
                let given: Vec<String> = given.into_iter().filter(|s| !s.is_empty()).collect();
                let selectors = model::dkim_selectors(&given).map_err(|e| anyhow::anyhow!("{e}"))?;
                store.set_dkim_selectors(company.id, &selectors).await?;
            }
            let now = store.dkim_selectors(company.id).await?;
            say!(
                "{id}: DKIM selectors {}",
                if now.is_empty() { "none (the curated selectors only)".to_owned() } else { now.join(", ") }
            );
            Ok(())
        }
        CompaniesAction::SetCadence { db, social_id, every } => {
            let store = open(&db.db).await?;
            let id = SocialId::parse(&social_id).with_context(|| format!("{social_id:?} is not a social_id"))?;
            let company = store.company_by_social_id(&id).await?.with_context(|| format!("no company {id}"))?;
            match every.as_deref() {
                None => {}
                Some("default") => store.set_cadence(company.id, None).await?,
                Some(raw) => {
                    let every = status::parse_every(raw).map_err(|e| anyhow::anyhow!("{e}"))?;
                    store.set_cadence(company.id, Some(every)).await?;
                }
            }
            match store.cadence(company.id).await? {
                Some(every) => say!("{id}: rescanned every {}", status::human(every)),
                None => say!("{id}: rescanned at the scheduler's cadence (--rescan-every)"),
            }
            Ok(())
        }
    }
}

#[derive(Subcommand)]
enum DisputesAction {
    /// Open disputes, newest first (with --all: every dispute, decided or not).
    List {
        #[command(flatten)]
        db: DbArg,
        #[arg(long)]
        all: bool,
        /// Only this company's.
        #[arg(long)]
        company: Option<String>,
    },
    /// Accept an open dispute: compensating_control gives the finding no weight,
    /// incorrect closes it as a false positive of its check, not_ours removes the asset
    /// from the company and its future scans, fixed closes the finding.
    Accept {
        #[command(flatten)]
        db: DbArg,
        id: i64,
        /// Why (kept with the dispute, shown to the company and in the score history).
        #[arg(long)]
        note: String,
        /// Who decides (kept with the dispute).
        #[arg(long, default_value = "operator")]
        by: String,
    },
    /// Reject an open dispute: the finding stays as it was.
    Reject {
        #[command(flatten)]
        db: DbArg,
        id: i64,
        #[arg(long)]
        note: String,
        #[arg(long, default_value = "operator")]
        by: String,
    },
}

async fn disputes(action: DisputesAction) -> Result<()> {
    match action {
        DisputesAction::List { db, all, company } => {
            let store = open(&db.db).await?;
            let ids = match &company {
                Some(sid) => {
                    let sid = SocialId::parse(sid).map_err(|e| anyhow::anyhow!("--company: {e}"))?;
                    let c =
                        store.company_by_social_id(&sid).await?.with_context(|| format!("company {sid}: not found"))?;
                    Some(vec![c.id])
                }
                None => None,
            };
            let state = if all { None } else { Some(model::DisputeState::Open) };
            let mut shown = 0u64;
            say!(
                "{:<6} {:<9} {:<21} {:<24} {:<32} {:<20} EXPLANATION / NOTE",
                "ID",
                "STATE",
                "REASON",
                "COMPANY",
                "FINDING",
                "OPENED"
            );
            for n in 1..=1000u64 {
                let page = model::Page::parse(Some(&n.to_string())).map_err(|e| anyhow::anyhow!("{e}"))?;
                let got = store.disputes(ids.as_deref(), state, page).await?;
                for d in &got.items {
                    let finding = match (&d.code, d.finding_id) {
                        (Some(code), Some(id)) => format!("#{id} {code} on {}", d.asset),
                        _ => format!("asset {}", d.asset),
                    };
                    let note = d.note.as_deref().map(|n| format!(" / {n}")).unwrap_or_default();
                    say!(
                        "{:<6} {:<9} {:<21} {:<24} {:<32} {:<20} {}{note}",
                        d.id,
                        d.state.as_str(),
                        d.reason.as_str(),
                        d.company.as_str(),
                        finding,
                        model::timefmt::rfc3339(d.opened_at.0),
                        d.explanation.replace('\n', " ")
                    );
                }
                shown += got.items.len() as u64;
                if got.items.is_empty() || shown >= got.total {
                    break;
                }
            }
            if shown == 0 {
                eprintln!("no disputes");
            }
            Ok(())
        }
        DisputesAction::Accept { db, id, note, by } => decide_dispute(&db.db, id, true, &note, &by).await,
        DisputesAction::Reject { db, id, note, by } => decide_dispute(&db.db, id, false, &note, &by).await,
    }
}

async fn decide_dispute(db: &str, id: i64, accept: bool, note: &str, by: &str) -> Result<()> {
    let note = model::dispute::explanation(note).map_err(|e| anyhow::anyhow!("--note: {e}"))?;
    let by = model::dispute::explanation(by).map_err(|e| anyhow::anyhow!("--by: {e}"))?;
    let store = open(db).await?;
    let now = time::OffsetDateTime::now_utc();
    // An asset that would take the company's own web domain with it is a correction of
    // the company's record, not a removal: refused here.
    if accept
        && let Some(d) = store.dispute(id).await?
        && d.reason == model::DisputeReason::NotOurs
        && d.state == model::DisputeState::Open
        && let Some(gone) = store::disputes::removed_asset(&d)
        && let Some(c) = store.company_by_social_id(&d.company).await?
        && let Some(domain) = c.domain.as_ref().filter(|dom| gone.covers(dom.as_str()))
    {
        bail!(
            "dispute {id}: removing {gone} would remove {domain}, the web domain of {}; reject the dispute, or correct \
             the company's record (rampart import companies)",
            d.company
        );
    }
    let decision = store::Decision { accept, note: &note, by: &by, at: now };
    let d = match store.decide_dispute(id, &decision).await {
        Ok(Some(d)) => d,
        Ok(None) => bail!("no dispute {id} (`rampart disputes list --all` lists them)"),
        Err(store::StoreError::Invalid(why)) => bail!("{why}"),
        Err(e) => return Err(e.into()),
    };
    say!("dispute {id} {} ({} of {} on {})", d.state.as_str(), d.reason.as_str(), d.company, d.asset);
    let company = store.company_by_social_id(&d.company).await?.with_context(|| format!("company {}", d.company))?;
    match worker::disputes::rerate_after(&*store, &company, &d, now).await? {
        Some(r) => say!("{} re-rated: {} ({})", d.company, r.score.as_f64(), r.grade.as_str()),
        None => say!("{} has no computed rating: nothing to re-rate", d.company),
    }
    if accept
        && d.reason == model::DisputeReason::NotOurs
        && let Some(gone) = store::disputes::removed_asset(&d)
    {
        say!("{gone} left the footprint of {}; its scans no longer include it", d.company);
    }
    Ok(())
}

#[derive(Subcommand)]
enum SubsidiariesAction {
    /// Requests waiting for a decision (with --all: every request, decided or not).
    Pending {
        #[command(flatten)]
        db: DbArg,
        #[arg(long)]
        all: bool,
    },
    /// Link the companies of a pending request.
    Approve {
        #[command(flatten)]
        db: DbArg,
        id: i64,
        /// Why (kept with the request).
        #[arg(long, default_value = "")]
        note: String,
    },
    /// Refuse a pending request: the companies stay apart.
    Reject {
        #[command(flatten)]
        db: DbArg,
        id: i64,
        #[arg(long, default_value = "")]
        note: String,
    },
}

async fn subsidiaries(action: SubsidiariesAction) -> Result<()> {
    match action {
        SubsidiariesAction::Pending { db, all } => {
            let store = open(&db.db).await?;
            let state = if all { None } else { Some(store::SubsidiaryState::Pending) };
            let requests = store.subsidiary_requests(state).await?;
            say!("{:<6} {:<9} {:<24} {:<24} {:<6} {:<20} NOTE", "ID", "STATE", "PARENT", "SUBSIDIARY", "KEY", "ASKED");
            for r in &requests {
                let key = r.key_id.map_or("-".to_owned(), |k| k.to_string());
                say!(
                    "{:<6} {:<9} {:<24} {:<24} {:<6} {:<20} {}",
                    r.id,
                    r.state.as_str(),
                    r.parent.as_str(),
                    r.child.as_str(),
                    key,
                    r.created_at,
                    r.note.as_deref().unwrap_or("")
                );
            }
            if requests.is_empty() {
                eprintln!("no requests");
            }
            Ok(())
        }
        SubsidiariesAction::Approve { db, id, note } => decide(&db.db, id, true, &note).await,
        SubsidiariesAction::Reject { db, id, note } => decide(&db.db, id, false, &note).await,
    }
}

/// `rampart footprint pending|approve|reject`: the assets keys asked to add that another
/// company holds on evidence (docs/API.md, "Domain ownership").
async fn footprint_requests(action: SubsidiariesAction) -> Result<()> {
    match action {
        SubsidiariesAction::Pending { db, all } => {
            let store = open(&db.db).await?;
            let requests = store.asset_requests(all).await?;
            say!("{:<6} {:<9} {:<24} {:<32} {:<10} {:<20} REASON", "ID", "STATE", "COMPANY", "ASSET", "BY", "ASKED");
            for r in &requests {
                say!(
                    "{:<6} {:<9} {:<24} {:<32} {:<10} {:<20} {}",
                    r.id,
                    r.state,
                    crate::clip(r.company.as_str(), 24),
                    crate::clip(&r.asset, 32),
                    crate::clip(&r.requested_by, 10),
                    crate::clip(&r.requested_at, 20),
                    crate::clip(&r.reason, 60)
                );
            }
            if requests.is_empty() {
                eprintln!("no requests");
            }
            Ok(())
        }
        SubsidiariesAction::Approve { db, id, note } => decide_asset(&db.db, id, true, &note).await,
        SubsidiariesAction::Reject { db, id, note } => decide_asset(&db.db, id, false, &note).await,
    }
}

async fn decide_asset(db: &str, id: i64, approve: bool, note: &str) -> Result<()> {
    if note.len() > 1000 {
        bail!("--note is {} bytes; at most 1000", note.len());
    }
    let store = open(db).await?;
    let Some(r) = store.decide_asset_request(id, approve, note, model::timefmt::now()).await? else {
        bail!("no pending request {id} (`rampart footprint pending --all` lists them)");
    };
    if approve {
        // Its scan, as an addition a key makes queues one.
        store.enqueue(&model::JobSpec::Scan { social_id: r.company.clone() }).await?;
    }
    say!("request {id} {}: {} for {}", r.state, r.asset, r.company);
    Ok(())
}

async fn decide(db: &str, id: i64, approve: bool, note: &str) -> Result<()> {
    if note.len() > 1000 {
        bail!("--note is {} bytes; at most 1000", note.len());
    }
    let store = open(db).await?;
    let Some(r) = store.decide_subsidiary_request(id, approve, note).await? else {
        bail!("no pending request {id} (`rampart subsidiaries pending --all` lists them)");
    };
    say!("request {id} {}: {} and {} ({})", r.state.as_str(), r.parent, r.child, r.child_name);
    Ok(())
}

#[derive(Subcommand)]
enum JobsAction {
    /// Jobs, newest first, with their state, priority, attempts, when they may run and last error.
    List {
        #[command(flatten)]
        db: DbArg,
        /// Only jobs in this state: queued, running, done, dead, cancelled.
        #[arg(long)]
        status: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// Queue full scans: of the companies named, or of every company (--all). Work of
    /// the same kind already waiting is not queued twice (it is brought forward when
    /// asked for sooner).
    Scan {
        #[command(flatten)]
        db: DbArg,
        /// Social ids of the companies to scan.
        social_ids: Vec<String>,
        /// Every company in the store.
        #[arg(long, conflicts_with = "social_ids")]
        all: bool,
        /// Higher runs first among ready jobs (a rescan asked through the API: 20, a scan:
        /// 10, background refreshes: 0).
        #[arg(long, default_value_t = 10)]
        priority: i16,
        /// Not before this many seconds from now.
        #[arg(long, default_value_t = 0)]
        delay_secs: u64,
    },
    /// Queue a dead or cancelled job again (its attempts start over).
    Retry {
        #[command(flatten)]
        db: DbArg,
        id: i64,
    },
    /// Cancel a queued or running job (a running job's worker stops it at its next
    /// lease renewal).
    Cancel {
        #[command(flatten)]
        db: DbArg,
        id: i64,
    },
}

async fn jobs(action: JobsAction) -> Result<()> {
    match action {
        JobsAction::List { db, status, limit } => {
            let status =
                match status.as_deref() {
                    None => None,
                    Some(s) => Some(model::JobStatus::parse(&s.to_ascii_lowercase()).with_context(|| {
                        format!("{s:?} is not a job state (queued, running, done, dead, cancelled)")
                    })?),
                };
            let store = open(&db.db).await?;
            let jobs = store.jobs(status, limit).await?;
            say!(
                "{:<8} {:<8} {:<10} {:<5} {:<8} {:<20} {:<20} {:<24} {:<28} LAST ERROR",
                "ID",
                "KIND",
                "STATE",
                "PRIO",
                "ATTEMPTS",
                "RUN AFTER",
                "UPDATED",
                "WORKER",
                "TARGET"
            );
            for j in &jobs {
                let target = match &j.spec {
                    model::JobSpec::Scan { social_id } => social_id.to_string(),
                    model::JobSpec::Rescan { social_id, subdomain, risk_vector } => {
                        format!("{social_id} {subdomain} {risk_vector}")
                    }
                    model::JobSpec::Deliver { social_id, webhook, event } => {
                        format!("{social_id} event {event} → webhook {webhook}")
                    }
                    model::JobSpec::Verify { social_id, domain } => format!("{social_id} {domain}"),
                };
                let payload = crate::clip(&target, 28);
                let error: String = j.last_error.as_deref().unwrap_or("").chars().take(200).collect();
                let updated: String = j.updated_at.chars().take(19).collect();
                let run_after: String = j.run_after.chars().take(19).collect();
                say!(
                    "{:<8} {:<8} {:<10} {:<5} {:<8} {:<20} {:<20} {:<24} {:<28} {error}",
                    j.id,
                    j.spec.kind(),
                    j.status.as_str(),
                    j.priority,
                    j.attempts,
                    run_after,
                    updated,
                    j.worker.as_deref().unwrap_or("-"),
                    payload
                );
            }
            if jobs.is_empty() {
                eprintln!("no jobs");
            }
            Ok(())
        }
        JobsAction::Scan { db, social_ids, all, priority, delay_secs } => {
            if social_ids.is_empty() && !all {
                bail!("name the companies to scan, or --all");
            }
            let ids: Vec<SocialId> = social_ids.iter().map(|s| SocialId::parse(s)).collect::<Result<_, _>>()?;
            let store = open(&db.db).await?;
            let run_at = time::OffsetDateTime::now_utc() + std::time::Duration::from_secs(delay_secs);
            let (mut queued, mut waiting) = (0u64, 0u64);
            let mut enqueue = async |id: SocialId| -> Result<()> {
                if store.enqueue_with(&model::JobSpec::Scan { social_id: id }, priority, run_at).await? {
                    queued += 1;
                } else {
                    waiting += 1;
                }
                Ok(())
            };
            if all {
                let mut after = 0;
                loop {
                    let page = store.company_ids(after, 1000).await?;
                    let Some((last, _)) = page.last() else { break };
                    after = *last;
                    for (_, id) in page {
                        enqueue(id).await?;
                    }
                }
            } else {
                for id in &ids {
                    if store.company_by_social_id(id).await?.is_none() {
                        bail!("no company {id}: nothing queued");
                    }
                }
                for id in ids {
                    enqueue(id).await?;
                }
            }
            eprintln!("{queued} scans queued; {waiting} already waiting or running");
            Ok(())
        }
        JobsAction::Retry { db, id } => {
            let store = open(&db.db).await?;
            if !store.retry_job(id).await? {
                bail!("job {id} is not dead or cancelled (or another job of the same target is waiting)");
            }
            say!("job {id} queued again");
            Ok(())
        }
        JobsAction::Cancel { db, id } => {
            let store = open(&db.db).await?;
            if !store.cancel_job(id).await? {
                bail!("job {id} is not queued or running");
            }
            say!("job {id} cancelled");
            Ok(())
        }
    }
}

#[derive(Subcommand)]
enum KeysAction {
    /// Create a key and print it (alone, on stdout). It is shown only this once.
    Create {
        #[command(flatten)]
        db: DbArg,
        #[arg(long)]
        name: String,
        /// Comma-separated: general, vulnerability, underwriter, monitor.
        /// Default: general,vulnerability,underwriter (plus monitor with --company).
        #[arg(long)]
        scopes: Option<String>,
        /// The company a monitor key reports on.
        #[arg(long)]
        company: Option<String>,
        /// Requests per minute (0: unlimited).
        #[arg(long, default_value_t = 600)]
        per_minute: u32,
        /// Requests per calendar month (0: unlimited).
        #[arg(long, default_value_t = 100_000)]
        monthly: u64,
    },
    /// List keys (never the secrets).
    List {
        #[command(flatten)]
        db: DbArg,
    },
    /// Deactivate a key, by id or prefix.
    Deactivate {
        #[command(flatten)]
        db: DbArg,
        key: String,
    },
    /// Reactivate a key, by id or prefix.
    Activate {
        #[command(flatten)]
        db: DbArg,
        key: String,
    },
}

#[derive(Subcommand)]
enum ProbeWhat {
    /// The DNS and mail checks of one domain: spf, dkim, dmarc, it_standardization.
    Mail {
        domain: String,
        /// The company's website host, for the IPv6, security.txt and HTTPS checks.
        #[arg(long)]
        website: Option<String>,
        #[command(flatten)]
        opts: scan::ScanOpts,
    },
    /// The web_headers checks of one origin (http:// or https://), scored the way the
    /// Mozilla HTTP Observatory scores.
    Http {
        url: String,
        /// A CA certificate (PEM) the HTTPS certificate is checked against (reported
        /// only: the headers are judged either way).
        #[arg(long)]
        ca: Option<PathBuf>,
        #[command(flatten)]
        opts: scan::ScanOpts,
    },
    /// The port scan of one host: open ports, identified services, open_ports findings.
    Ports {
        host: String,
        /// Comma-separated ports, or `default` (the curated list), `top100`/`top1000`
        /// (nmap's most frequent ports, read from its nmap-services file).
        #[arg(long, default_value = "default")]
        ports: String,
        #[command(flatten)]
        opts: scan::ScanOpts,
    },
    /// TLS of one endpoint: versions, cipher suites, groups, features, the certificate
    /// chain, and the certificate_info/conf/cve findings.
    Tls {
        /// HOST:PORT (the port defaults to 443).
        target: String,
        /// The name sent in SNI and checked against the certificate (default: HOST).
        #[arg(long)]
        sni: Option<String>,
        /// A CA certificate (PEM) to trust instead of the Mozilla root store.
        #[arg(long)]
        ca: Option<PathBuf>,
        /// STARTTLS before the handshake (default: by port — 25/587 smtp, 143 imap,
        /// 110 pop3, 21 ftp).
        #[arg(long, value_parser = ["smtp", "imap", "pop3", "ftp"])]
        starttls: Option<String>,
        #[command(flatten)]
        opts: scan::ScanOpts,
    },
}

#[derive(Subcommand)]
enum LabAction {
    /// Bring the lab up (the built-in one unless --file), print the resolver address and
    /// the hosts, serve until Ctrl-C.
    Up {
        /// A lab file (docs/LAB.md); the built-in lab when absent.
        #[arg(long)]
        file: Option<PathBuf>,
        /// Where to write the lab CA root (lab-ca.pem) and the DNSSEC trust anchor
        /// (trust-anchor.txt) a scanner in lab mode loads.
        #[arg(long, default_value = "target/lab")]
        out: PathBuf,
    },
}

#[derive(Subcommand)]
enum ImportWhat {
    /// Companies in JSON Lines (docs/IMPORT.md).
    Companies {
        #[command(flatten)]
        db: DbArg,
        file: PathBuf,
    },
    /// Vulnerability records in cve-search JSON Lines.
    Cves {
        #[command(flatten)]
        db: DbArg,
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// NVD CVE feeds: JSON 2.0 (feed files or API pages) or legacy 1.1, plain or gzipped.
    Nvd {
        #[command(flatten)]
        db: DbArg,
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// VERIS incidents (the VERIS Community Database's JSON; files or directories),
    /// linked to companies by exact normalised name or their own domain (docs/INCIDENTS.md).
    Veris {
        #[command(flatten)]
        db: DbArg,
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// The CISA Known Exploited Vulnerabilities catalogue (JSON); replaces the stored one.
    Kev {
        #[command(flatten)]
        db: DbArg,
        file: PathBuf,
    },
    /// FIRST EPSS scores (CSV, plain or gzipped).
    Epss {
        #[command(flatten)]
        db: DbArg,
        file: PathBuf,
    },
    /// The MITRE CWE catalogue (XML).
    Cwe {
        #[command(flatten)]
        db: DbArg,
        file: PathBuf,
    },
    /// MITRE CAPEC attack patterns: CAPEC XML or STIX 2.1 JSON bundles.
    Capec {
        #[command(flatten)]
        db: DbArg,
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Technology fingerprints in the Wappalyzer format: a folder with categories.json
    /// and technologies/*.json. Workers add them to the built-in rules at start.
    Fingerprints {
        #[command(flatten)]
        db: DbArg,
        dir: PathBuf,
    },
    /// endoflife.date lifecycle data: the all-products JSON, product JSON files, or API
    /// answers (v1 product, legacy cycle list named by its file).
    Eol {
        #[command(flatten)]
        db: DbArg,
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

/// What is logged unless `RAMPART_LOG` says otherwise: Rampart's own crates at info
/// (the access log, a line per request, is `api::access`), third-party crates errors
/// only (hickory's per-query warnings flooded the demo).
const DEFAULT_LOG: &str = "error,rampart=info,api=info,worker=info,store=info,scanner=info,egress=info,lab=info,\
    labtls=info,intel=info,vulndb=info,rating=info,sync=info,model=info";

/// mimalloc, not the C library's allocator: under load the API's requests allocate from
/// both runtime threads at once, and glibc's arenas spent a tenth of the process's time
/// in locking and consolidation (docs/PERFORMANCE.md). What SQLite allocates still goes
/// through the C library, tuned by `store::tune_allocator`.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> Result<()> {
    store::tune_allocator();
    let cli = Cli::parse();
    // Lines go to stderr from a thread of their own: a request never waits on the
    // terminal (under a flood, lines are dropped rather than requests slowed).
    let (writer, _flushed_at_exit) = tracing_appender::non_blocking(std::io::stderr());
    // The demo's terminal is its progress, keys and URLs: the events its scans keep (one
    // line each at info) are not repeated there.
    let default = match cli.command {
        Command::Demo { .. } => format!("{DEFAULT_LOG},worker::events=warn"),
        _ => DEFAULT_LOG.to_owned(),
    };
    let filter =
        || tracing_subscriber::EnvFilter::try_from_env("RAMPART_LOG").unwrap_or_else(|_| default.as_str().into());
    let log = tracing_subscriber::fmt().with_env_filter(filter()).with_writer(writer);
    match cli.log_format {
        LogFormat::Text => log.with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())).init(),
        LogFormat::Json => log.json().flatten_event(true).with_current_span(false).init(),
    }
    match cli.command {
        Command::Serve {
            db,
            listen,
            read_cache_secs,
            cve_cache_secs,
            version_poll_ms,
            served_cache_mib,
            auth_failures_per_minute,
            workers,
            metrics_listen,
            rescan_every,
            feeds,
            trusted_proxies,
            limits,
            net,
        } => {
            let options = store::Options { served_cache_bytes: served_cache_mib.saturating_mul(1 << 20) };
            let store = store::open_with(&db.db, &options)
                .await
                .with_context(|| format!("opening database {}", store::redact_url(&db.db)))?;
            let mut registry = prometheus_client::registry::Registry::default();
            if workers > 0 {
                worker::metrics::register(&mut registry);
            }
            let metrics = Arc::new(api::metrics::Metrics::new(registry));
            if let Some(addr) = metrics_listen {
                spawn_metrics(addr, metrics.clone(), store.clone()).await?;
            }
            let config = api::Config {
                metrics: Some(metrics),
                metrics_on_api: metrics_listen.is_none(),
                read_cache_ttl: std::time::Duration::from_secs(read_cache_secs),
                cve_cache_ttl: std::time::Duration::from_secs(cve_cache_secs),
                version_poll: std::time::Duration::from_millis(version_poll_ms),
                auth_failures_per_minute,
                trusted_proxies,
                lab_addresses: net.lab_mode(),
                default_cadence: rescan_every.0.unwrap_or(api::DEFAULT_CADENCE),
                ..Default::default()
            };
            let mut running = None;
            if workers > 0 {
                // The worker reads the store's reference data for each job.
                let ctx = Arc::new(net.context()?);
                let config =
                    worker::Config { concurrency: workers, rescan_every: rescan_every.0, ..Default::default() };
                let config = worker::Config { feeds: Some(feeds.config(&config.name)), ..config };
                running = Some(tokio::spawn(worker::run(store.clone(), ctx, config, shutdown_signal())));
            }
            let limiter = limits.limiter(&store)?;
            let served = serve(store, limiter, listen, config).await;
            // The workers saw the same signal: their jobs in flight finish within the
            // drain, or are released back to the queue, before the process ends.
            if let Some(workers) = running {
                let _ = workers.await;
            }
            served
        }
        Command::Jobs { action } => jobs(action).await,
        Command::Subsidiaries { action } => subsidiaries(action).await,
        Command::Footprint { action } => footprint_requests(action).await,
        Command::Disputes { action } => disputes(action).await,
        Command::Companies { action } => companies(action).await,
        Command::Webhooks { action } => webhooks(action).await,
        Command::Status { db } => {
            let store = open(&db.db).await?;
            let report = status::report(&*store, time::OffsetDateTime::now_utc()).await?;
            say!("{}", report.trim_end());
            Ok(())
        }
        Command::Worker { db, concurrency, lease_secs, max_attempts, metrics_listen, rescan_every, feeds, net } => {
            let store = open(&db.db).await?;
            if let Some(addr) = metrics_listen {
                let mut registry = prometheus_client::registry::Registry::default();
                worker::metrics::register(&mut registry);
                let metrics = Arc::new(api::metrics::Metrics::new(registry));
                spawn_metrics(addr, metrics, store.clone()).await?;
            }
            // The worker reads the store's reference data for each job.
            let ctx = Arc::new(net.context()?);
            let config = worker::Config {
                concurrency,
                lease: std::time::Duration::from_secs(lease_secs),
                max_attempts,
                rescan_every: rescan_every.0,
                ..Default::default()
            };
            let config = worker::Config { feeds: Some(feeds.config(&config.name)), ..config };
            tracing::info!(concurrency, rescan_every_secs = rescan_every.0.map(|d| d.as_secs()), "worker running");
            worker::run(store, ctx, config, shutdown_signal()).await;
            Ok(())
        }
        Command::Keys { action } => keys(action).await,
        Command::Import { what: ImportWhat::Fingerprints { db, dir } } => import_fingerprints(&db.db, &dir).await,
        Command::Import { what: ImportWhat::Eol { db, files } } => import_eol(&db.db, &files).await,
        Command::Import { what: ImportWhat::Veris { db, paths } } => {
            let store = open(&db.db).await?;
            let paths: Vec<&std::path::Path> = paths.iter().map(PathBuf::as_path).collect();
            let r = intel::link::import_veris(&*store, &paths).await?;
            for e in &r.errors {
                eprintln!("skipped: {e}");
            }
            for (id, companies) in &r.ambiguous {
                eprintln!("not linked: {id} matches several companies ({})", companies.join(", "));
            }
            eprintln!(
                "veris: {} file(s) read, {} incident(s) stored, {} linked by name, {} by domain",
                r.files_read, r.stored, r.linked_by_name, r.linked_by_domain
            );
            Ok(())
        }
        Command::Import { what } => import(what).await,
        Command::Explain { db, company, format } => {
            let store = open(&db.db).await?;
            explain::explain(&*store, &company, format).await
        }
        Command::Rescore { db, methodology, company } => {
            let store = open(&db.db).await?;
            rescore::rescore(&*store, &methodology, company.as_deref()).await
        }
        Command::Sbom { db, social_id, format } => sbom::export(&db.db, &social_id, format).await,
        Command::Report { social_id, db, format, out } => {
            report::report(&db.db, &social_id, format, out.as_deref()).await
        }
        Command::Migrate { from: Some(from), to } => migrate(&from, &to).await,
        Command::Migrate { from: None, to } => {
            // Opening applies the embedded migrations (under an advisory lock on PostgreSQL).
            open(&to).await.with_context(|| format!("migrating {}", store::redact_url(&to)))?;
            say!("the schema of {} is up to date", store::redact_url(&to));
            Ok(())
        }
        Command::Mock { listen } => {
            let store = open("sqlite::memory:").await?;
            intel::sample::load(&*store).await?;
            vulndb::import::sample(&*store).await?;
            let mock = api::MockData {
                company: SocialId::parse(intel::sample::MOCK_COMPANY)?,
                cve: model::CveId::parse(vulndb::import::SAMPLE_CVE)?,
                incident: intel::sample::MOCK_INCIDENT.to_owned(),
            };
            let limiter = Arc::new(api::MemoryLimiter::new(store.clone()));
            serve(store, limiter, listen, api::Config { mock: Some(mock), ..Default::default() }).await
        }
        Command::Openapi => {
            say!("{}", api::openapi::document().to_pretty_json()?);
            Ok(())
        }
        Command::Demo { listen, db, lab_octet } => demo(listen, &db, lab_octet).await,
        Command::Lab { action: LabAction::Up { file, out } } => lab_up(file.as_deref(), &out).await,
        Command::Scan { domain, website, opts } => scan::scan(&domain, website.as_deref(), &opts).await,
        Command::Probe { what: ProbeWhat::Mail { domain, website, opts } } => {
            scan::probe_mail(&domain, website.as_deref(), &opts).await
        }
        Command::Probe { what: ProbeWhat::Ports { host, ports, opts } } => {
            scan::probe_ports(&host, &ports, &opts).await
        }
        Command::Probe { what: ProbeWhat::Http { url, ca, opts } } => {
            scan::probe_http(&url, ca.as_deref(), &opts).await
        }
        Command::Probe { what: ProbeWhat::Tls { target, sni, ca, starttls, opts } } => {
            scan::probe_tls(&target, sni, ca.as_deref(), starttls.as_deref(), &opts).await
        }
        Command::Sync { db, feeds, sources } => {
            let opts = sources.options(feeds, true);
            sync_feeds(&db.db, &opts).await
        }
    }
}

async fn open(url: &str) -> Result<Arc<dyn store::Store>> {
    store::open(url).await.with_context(|| format!("opening database {}", store::redact_url(url)))
}

/// Serves /metrics on `addr` until the process ends.
async fn spawn_metrics(
    addr: SocketAddr,
    metrics: Arc<api::metrics::Metrics>,
    store: Arc<dyn store::Store>,
) -> Result<()> {
    let listener = TcpListener::bind(addr).await.with_context(|| format!("metrics: listening on {addr}"))?;
    tracing::info!(address = %listener.local_addr()?, "serving /metrics");
    tokio::spawn(async move {
        if let Err(e) = api::metrics::serve_metrics(listener, metrics, store, shutdown_signal()).await {
            tracing::error!(error = %e, "serving /metrics failed");
        }
    });
    Ok(())
}

async fn serve(
    store: Arc<dyn store::Store>,
    limiter: Arc<dyn api::RateLimiter>,
    listen: SocketAddr,
    config: api::Config,
) -> Result<()> {
    let listener = TcpListener::bind(listen).await.with_context(|| format!("listening on {listen}"))?;
    tracing::info!(address = %listener.local_addr()?, "serving");
    let state = api::AppState::new(store, limiter, config);
    api::serve_app(listener, state.clone(), with_web_app(&state), shutdown_signal()).await?;
    Ok(())
}

/// The API's router with the web app merged in (the app calls the API in-process).
fn with_web_app(state: &api::AppState) -> axum::Router {
    let api = api::router(state.clone());
    api.clone().merge(web::router(api))
}

async fn lab_up(file: Option<&std::path::Path>, out: &std::path::Path) -> Result<()> {
    let lab_file = match file {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            lab::LabFile::parse(&text).with_context(|| format!("lab file {}", path.display()))?
        }
        None => lab::LabFile::builtin()?,
    };
    let started = std::time::Instant::now();
    let running = lab::Lab::up(&lab_file).await?;
    let took = started.elapsed();
    running.write_scanner_files(&lab_file, out).with_context(|| format!("writing to {}", out.display()))?;
    say!(
        "lab up in {} ms: {} companies, {} hosts, {} services, {} zones",
        took.as_millis(),
        lab_file.companies.len(),
        lab_file.hosts.len(),
        running.endpoints.len(),
        lab_file.zones.len()
    );
    if let Some(resolver) = running.resolver {
        say!("resolver        {resolver} (UDP and TCP)");
    }
    for a in &running.trust_anchors {
        say!("DNSSEC anchor   {}", a.ds);
    }
    if running.ca_root_pem.is_some() {
        say!("lab CA root     {}", out.join("lab-ca.pem").display());
    }
    say!("scanner files   {} (rampart probe … --lab {})", out.display(), out.display());
    for (host, port, addr) in &running.endpoints {
        say!("{host:<40} port {port:<5} listening on {addr}");
    }
    shutdown_signal().await;
    running.down().await;
    Ok(())
}

/// Completes at Ctrl-C or SIGTERM. The listeners are registered when this is called,
/// not when the future is first polled: a signal that arrives before the caller awaits
/// it (the demo prints its keys first) is not lost.
fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let (interrupt, term) = {
        use tokio::signal::unix::{SignalKind, signal};
        (signal(SignalKind::interrupt()).ok(), signal(SignalKind::terminate()).ok())
    };
    async move {
        #[cfg(unix)]
        {
            let wait = |s: Option<tokio::signal::unix::Signal>| async move {
                match s {
                    Some(mut s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! { _ = wait(interrupt) => {}, _ = wait(term) => {} }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        tracing::info!("shutting down");
    }
}

async fn create_key(
    store: &dyn store::Store,
    name: &str,
    scopes: Vec<Scope>,
    company: Option<SocialId>,
    per_minute: u32,
    monthly: u64,
) -> Result<String> {
    if let Some(c) = &company
        && store.company_by_social_id(c).await?.is_none()
    {
        bail!("company {c} is not in the database: import it first");
    }
    let key = api::generate_key(name, scopes, company, per_minute, monthly)?;
    store.create_key(&key.record).await?;
    Ok(key.secret)
}

async fn keys(action: KeysAction) -> Result<()> {
    match action {
        KeysAction::Create { db, name, scopes, company, per_minute, monthly } => {
            let store = open(&db.db).await?;
            let company = company.as_deref().map(SocialId::parse).transpose().context("--company")?;
            let scopes = match scopes {
                Some(list) => Scope::parse_list(&list).map_err(anyhow::Error::msg)?,
                None if company.is_some() => Scope::ALL.to_vec(),
                None => vec![Scope::General, Scope::Vulnerability, Scope::Underwriter],
            };
            let secret = create_key(&*store, &name, scopes, company, per_minute, monthly).await?;
            say!("{secret}");
        }
        KeysAction::List { db } => {
            let store = open(&db.db).await?;
            say!(
                "{:<5} {:<12} {:<8} {:<40} {:<24} {:>10} {:>10}  name",
                "id",
                "prefix",
                "active",
                "scopes",
                "company",
                "per_min",
                "monthly"
            );
            for k in store.keys().await? {
                let scopes: Vec<&str> = k.scopes.iter().map(|s| s.as_str()).collect();
                say!(
                    "{:<5} {:<12} {:<8} {:<40} {:<24} {:>10} {:>10}  {}",
                    k.id,
                    k.prefix,
                    if k.active { "yes" } else { "no" },
                    scopes.join(","),
                    k.company.as_ref().map(SocialId::as_str).unwrap_or("-"),
                    k.per_minute,
                    k.monthly,
                    k.name
                );
            }
        }
        KeysAction::Deactivate { db, key } => {
            let store = open(&db.db).await?;
            if !store.set_key_active(&key, false).await? {
                bail!("no key with id or prefix {key:?}");
            }
            eprintln!("key {key} deactivated");
        }
        KeysAction::Activate { db, key } => {
            let store = open(&db.db).await?;
            if !store.set_key_active(&key, true).await? {
                bail!("no key with id or prefix {key:?}");
            }
            eprintln!("key {key} activated");
        }
    }
    Ok(())
}

async fn import(what: ImportWhat) -> Result<()> {
    use vulndb::import as vi;
    let (db, kind, files) = match what {
        ImportWhat::Companies { db, file } => (db, "companies", vec![file]),
        ImportWhat::Cves { db, files } => (db, "cves", files),
        ImportWhat::Nvd { db, files } => (db, "nvd", files),
        ImportWhat::Kev { db, file } => (db, "kev", vec![file]),
        ImportWhat::Epss { db, file } => (db, "epss", vec![file]),
        ImportWhat::Cwe { db, file } => (db, "cwe", vec![file]),
        ImportWhat::Capec { db, files } => (db, "capec", files),
        ImportWhat::Fingerprints { .. } | ImportWhat::Eol { .. } | ImportWhat::Veris { .. } => bail!("handled apart"),
    };
    let store = open(&db.db).await?;
    let started = std::time::Instant::now();
    let (mut read, mut written) = (0usize, 0usize);
    if kind == "nvd" {
        // One reader for all the files keeps the writer busy across file boundaries.
        let done = vi::nvd_files(&*store, &files).await?;
        (read, written) = (done.read, done.written);
    }
    for file in files.iter().filter(|_| kind != "nvd") {
        let (r, w) = if kind == "companies" {
            let reader = std::io::BufReader::new(
                std::fs::File::open(file).with_context(|| format!("opening {}", file.display()))?,
            );
            let report = intel::import_companies(&*store, reader).await?;
            (report.lines, report.companies)
        } else {
            let done = match kind {
                "cves" => vi::cve_search_file(&*store, file).await?,
                "kev" => vi::kev_file(&*store, file).await?,
                "epss" => vi::epss_file(&*store, file).await?,
                "cwe" => vi::cwe_file(&*store, file).await?,
                _ => vi::capec_file(&*store, file).await?,
            };
            (done.read, done.written)
        };
        read += r;
        written += w;
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "{kind}: {} file(s), {read} records read, {written} written in {secs:.1} s ({:.0} records/s)",
        files.len(),
        read as f64 / secs.max(1e-9)
    );
    Ok(())
}

async fn import_fingerprints(db: &str, dir: &std::path::Path) -> Result<()> {
    let (rows, report) = scanner::fingerprint::wappalyzer_rows(dir)?;
    let store = open(db).await?;
    let written = store.save_fingerprints(&format!("wappalyzer:{}", dir.display()), &rows).await?;
    let unsupported: Vec<String> = report.unsupported.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
    eprintln!(
        "fingerprints: {} technologies, {} patterns ({} skipped: they do not compile as Rust regular expressions), {written} stored; keys not evaluated: {}",
        report.technologies,
        report.patterns,
        report.skipped.len(),
        if unsupported.is_empty() { "none".to_owned() } else { unsupported.join(", ") }
    );
    Ok(())
}

async fn import_eol(db: &str, files: &[PathBuf]) -> Result<()> {
    let store = open(db).await?;
    let mut total = 0;
    for file in files {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("product");
        let rows = scanner::software::Eol::rows(&text, stem).with_context(|| file.display().to_string())?;
        total += store.save_eol_products(&rows).await?;
    }
    eprintln!("eol: {} file(s), {total} products stored", files.len());
    Ok(())
}

async fn sync_feeds(db: &str, opts: &sync::SyncOptions) -> Result<()> {
    let store = open(db).await?;
    let started = std::time::Instant::now();
    match sync::sync(&*store, opts).await {
        Ok(report) => {
            eprintln!("{report}\nsync finished in {:.1} s", started.elapsed().as_secs_f64());
            Ok(())
        }
        Err(sync::SyncError::Incomplete(failed)) => {
            eprintln!("{}", failed.report);
            bail!("sync incomplete: {failed}")
        }
        Err(e) => Err(e.into()),
    }
}

async fn demo(listen: SocketAddr, db: &str, lab_octet: u8) -> Result<()> {
    let started = std::time::Instant::now();
    let store = open(db).await?;
    let listener = match TcpListener::bind(listen).await {
        Ok(listener) => listener,
        // One line: who has the address (most often a demo already running).
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => anyhow::bail!(
            "the demo's address {listen} is taken by {}: stop it, or start this demo with --listen and --lab-octet",
            lab::holder_text(listen)
        ),
        Err(e) => return Err(e).with_context(|| format!("listening on {listen}")),
    };
    // Nothing hand-written (the sample companies and CVEs are `rampart mock`'s): the
    // lab's companies, scanned, and the real NVD records of the lab's software (a fresh
    // machine has no NVD feeds).
    vulndb::import::nvd_bytes(&*store, "the lab's NVD records", lab::NVD_RECORDS).await?;
    let eol = scanner::software::Eol::rows(lab::EOL_PRODUCTS, "lab").context("the lab's end-of-life data")?;
    store.save_eol_products(&eol).await?;

    // The lab: a simulated internet of fictional companies on 127.0.0.0/8.
    let file = if lab_octet == 78 { lab::LabFile::builtin()? } else { lab::LabFile::builtin_at(lab_octet)? };
    let running = lab::Lab::up(&file).await?;
    let resolver = running.resolver.context("the lab has no DNS server")?;
    let ctx = scanner::probes::Context::lab(
        resolver,
        file.effective_port_map(),
        running.ca_root_der.clone(),
        &running.trust_anchor_text(),
    )?;
    let ctx = Arc::new(worker::with_store_data(ctx, &*store).await?);
    // Parents before their subsidiaries (the importer links a subsidiary to a known parent).
    let mut ordered: Vec<&lab::LabCompany> = file.companies.iter().collect();
    ordered.sort_by_key(|c| c.company.get("parent_social_id").is_some_and(|p| !p.is_null()));
    let lines: String = ordered.iter().map(|c| format!("{}\n", c.company)).collect();
    intel::import_companies(&*store, std::io::Cursor::new(lines)).await?;
    // The lab companies' incident history (fictional, VERIS), linked by name.
    let incidents = intel::link::import_veris_texts(&*store, lab::INCIDENTS).await?;
    if !incidents.errors.is_empty() || incidents.linked_by_name != lab::INCIDENTS.len() {
        anyhow::bail!("the lab's incidents did not import whole: {incidents:?}");
    }
    // Serving never waits for scans of companies rated before (a restart on the same
    // database): their full scans are queued for the workers that run beside the server,
    // at background priority. Only companies never rated are scanned first, so a fresh
    // demo prints its keys with every lab company rated.
    let total = file.companies.len();
    let mut rated_before = Vec::new();
    let mut never_rated = Vec::new();
    for company in &file.companies {
        let id = SocialId::parse(company.social_id())?;
        let latest = match store.company_by_social_id(&id).await? {
            Some(c) => store.latest_score(c.id).await?,
            None => None,
        };
        match latest {
            Some(r) => rated_before.push((id, r)),
            None => never_rated.push(id),
        }
    }
    let doing = match (rated_before.len(), never_rated.len()) {
        (0, _) => "scanning:".to_owned(),
        (_, 0) => "every company was rated before: their scans are queued for the workers".to_owned(),
        (q, n) => format!("{q} companies rated before are queued for the workers, {n} never rated are scanned now:"),
    };
    say!(
        "Rampart demo — database {db}; the lab is up ({} companies, {} hosts, DNS {resolver}); {doing}",
        file.companies.len(),
        file.hosts.len()
    );
    let mut done = 0;
    let now = time::OffsetDateTime::now_utc();
    for (id, r) in &rated_before {
        done += 1;
        let queued = store
            .enqueue_with(&model::JobSpec::Scan { social_id: id.clone() }, model::JobSpec::BACKGROUND, now)
            .await?;
        say!(
            "  [{done:>2}/{total}] {:<24} {} (rated {:.1} ({}) at {})",
            id.as_str(),
            if queued { "scan queued" } else { "scan already queued" },
            r.score.as_f64(),
            r.grade.as_str(),
            model::timefmt::rfc3339(r.scanned_at.0)
        );
    }

    // Scan and rate every company never rated, a few at a time, and say how each came out.
    let mut scans = tokio::task::JoinSet::new();
    let limit = Arc::new(tokio::sync::Semaphore::new(4));
    for id in never_rated {
        let (store, ctx, limit) = (store.clone(), ctx.clone(), limit.clone());
        scans.spawn(async move {
            let _permit = limit.acquire_owned().await;
            let t = std::time::Instant::now();
            let outcome = worker::process(&*store, &ctx, &model::JobSpec::Scan { social_id: id.clone() }).await;
            (id, outcome, t.elapsed())
        });
    }
    while let Some(joined) = scans.join_next().await {
        let (id, outcome, took) = joined?;
        let social_id = id.as_str();
        done += 1;
        let rated = match store.company_by_social_id(&id).await? {
            Some(c) => store.latest_score(c.id).await?,
            None => None,
        };
        match (outcome, rated) {
            (Ok(o), Some(r)) => say!(
                "  [{done:>2}/{total}] {social_id:<24} score {:>5.1} ({})  {} findings  {:.1} s",
                r.score.as_f64(),
                r.grade.as_str(),
                o.opened + o.seen_again,
                took.as_secs_f64()
            ),
            (Ok(_), None) => say!("  [{done:>2}/{total}] {social_id:<24} nothing to rate"),
            (Err(e), _) => say!("  [{done:>2}/{total}] {social_id:<24} scan failed: {e}"),
        }
    }
    if rated_before.is_empty() {
        say!("Scanned and rated in {:.1} s.\n", started.elapsed().as_secs_f64());
    } else {
        say!(
            "Ready in {:.1} s; the {} queued scans run beside the server.\n",
            started.elapsed().as_secs_f64(),
            rated_before.len()
        );
    }

    // Ctrl-C and SIGTERM are listened for before the keys are printed: a stop asked
    // from then on stops the workers and the server alike (until now a signal ends the
    // process as it would any other).
    let (stop_workers, stop_serving) = (shutdown_signal(), shutdown_signal());
    let stamp = model::timefmt::rfc3339(model::timefmt::now());
    let underwriter = create_key(
        &*store,
        &format!("demo underwriter {stamp}"),
        vec![Scope::General, Scope::Vulnerability, Scope::Underwriter],
        None,
        600,
        100_000,
    )
    .await?;
    let company = SocialId::parse(lab::DEMO_MONITOR_COMPANY)?;
    let monitor = create_key(
        &*store,
        &format!("demo monitor {stamp}"),
        vec![Scope::Monitor],
        Some(company.clone()),
        600,
        100_000,
    )
    .await?;
    let rated = file.companies.first().map(|c| c.social_id().to_owned()).unwrap_or_else(|| company.to_string());
    // The Monitor company's domain, as the lab file gave it.
    let domain = store
        .company_by_social_id(&company)
        .await?
        .and_then(|c| c.domain)
        .with_context(|| format!("the lab has no company {company} with a domain"))?;
    let base = format!("http://{}", listener.local_addr()?);
    say!("{:<54} {underwriter}", "Underwriter key (general, vulnerability, underwriter):");
    say!("{:<54} {monitor}\n", format!("Monitor key for {company}:"));
    say!("Try:");
    say!("  curl -s -H 'apikey: {underwriter}' '{base}/underwriter-getcompanyscores?social_id={rated}'");
    say!("  curl -s -H 'apikey: {underwriter}' '{base}/general-getsocialid-by-domain?domain={domain}'");
    say!(
        "  curl -s -H 'apikey: {monitor}' '{base}/monitor-get-subdomain-findings?subdomain={domain}&risk_vector_type=DMARC'"
    );
    say!("\nWeb app (sign in with a key above): {base}/");
    say!("API documentation: {base}/docs   (Ctrl-C stops the server and the lab)");
    // Workers keep running beside the API: rescans and new companies are scanned in the lab.
    let config = worker::Config { concurrency: 2, ..Default::default() };
    let workers = tokio::spawn(worker::run(store.clone(), ctx, config, stop_workers));
    // The lab's companies live on 127.0.0.0/8: their own addresses may be added.
    let state = api::AppState::with_store(store, api::Config { lab_addresses: true, ..Default::default() });
    api::serve_app(listener, state.clone(), with_web_app(&state), stop_serving).await?;
    let _ = workers.await;
    running.down().await;
    Ok(())
}

/// `rampart migrate --from sqlite://… --to postgres://…`.
async fn migrate(from: &str, to: &str) -> anyhow::Result<()> {
    anyhow::ensure!(!store::is_postgres(from), "--from must be a SQLite database (sqlite://PATH or a path)");
    anyhow::ensure!(store::is_postgres(to), "--to must be a PostgreSQL database (postgres://…)");
    let path = from.strip_prefix("sqlite://").or_else(|| from.strip_prefix("sqlite:")).unwrap_or(from);
    anyhow::ensure!(std::path::Path::new(path).is_file(), "{from}: no such database file");
    let source = store::SqliteStore::open(from).await.with_context(|| format!("opening {from}"))?;
    let target = store::PgStore::open(to).await.context("opening the PostgreSQL database")?;
    let started = std::time::Instant::now();
    let copied = store::copy::sqlite_to_postgres(&source, &target).await?;
    let rows: u64 = copied.iter().map(|(_, n)| n).sum();
    say!("{:<22} {:>10}", "TABLE", "ROWS");
    for (table, n) in &copied {
        say!("{table:<22} {n:>10}");
    }
    say!("copied {rows} rows in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// Where per-minute limits are counted.
#[derive(clap::Args, Debug)]
struct LimitsArg {
    /// `memory` (this process counts alone: one API process) or `redis://host:port[/db]`
    /// (every API process shares the counts: several processes behind a balancer).
    #[arg(long = "limits", env = "RAMPART_LIMITS", default_value = "memory")]
    url: String,
    /// While the limits' Redis cannot be reached: `open` (each process limits by its own
    /// count) or `closed` (limited requests are refused with 503).
    #[arg(long = "limits-fail", env = "RAMPART_LIMITS_FAIL", default_value = "open")]
    fail: api::FailPolicy,
    /// Prefix of the Redis keys (several deployments on one Redis).
    #[arg(long = "limits-prefix", env = "RAMPART_LIMITS_PREFIX", default_value = "rampart")]
    prefix: String,
}

impl LimitsArg {
    fn limiter(&self, store: &Arc<dyn store::Store>) -> Result<Arc<dyn api::RateLimiter>> {
        if self.url == "memory" {
            return Ok(Arc::new(api::MemoryLimiter::new(store.clone())));
        }
        if !(self.url.starts_with("redis://") || self.url.starts_with("rediss://")) {
            anyhow::bail!("--limits takes memory or a redis:// URL, not {:?}", store::redact_url(&self.url));
        }
        let limiter = api::RedisLimiter::new(&self.url, &self.prefix, store.clone(), self.fail)
            .with_context(|| format!("--limits {}", store::redact_url(&self.url)))?;
        tracing::info!(redis = %store::redact_url(&self.url), policy = ?self.fail, "rate limits shared through Redis");
        Ok(Arc::new(limiter))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory as _;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn rescan_every_is_read_by_worker_and_serve() {
        let hour = Some(std::time::Duration::from_secs(3_600));
        match Cli::try_parse_from(["rampart", "worker", "--rescan-every", "1h"]).unwrap().command {
            Command::Worker { rescan_every, .. } => assert_eq!(rescan_every.0, hour),
            _ => panic!("not the worker"),
        }
        match Cli::try_parse_from(["rampart", "serve", "--workers", "2", "--rescan-every", "off"]).unwrap().command {
            Command::Serve { rescan_every, .. } => assert_eq!(rescan_every.0, None),
            _ => panic!("not serve"),
        }
        match Cli::try_parse_from(["rampart", "worker"]).unwrap().command {
            Command::Worker { rescan_every, .. } => {
                assert_eq!(rescan_every.0, Some(std::time::Duration::from_secs(86_400)), "a day by default")
            }
            _ => panic!("not the worker"),
        }
        assert!(Cli::try_parse_from(["rampart", "worker", "--rescan-every", "10s"]).is_err());
    }

    #[test]
    fn webhooks_add_reads_its_event_types() {
        let parse = |args: &[&str]| match Cli::try_parse_from(args).map(|c| c.command) {
            Ok(Command::Webhooks { action: WebhooksAction::Add { events, .. } }) => Ok(events.map(|e| e.0)),
            Ok(_) => panic!("not webhooks add"),
            Err(e) => Err(e.to_string()),
        };
        let base = ["rampart", "webhooks", "add", "--company", "acme", "--url", "https://h.example/"];
        assert_eq!(parse(&base), Ok(None), "every type when none is named");
        let two = [&base[..], &["--events", "rating_changed,finding_opened"]].concat();
        assert_eq!(parse(&two), Ok(Some(vec![model::EventKind::RatingChanged, model::EventKind::FindingOpened])));
        let bad = [&base[..], &["--events", "bogus"]].concat();
        assert!(parse(&bad).unwrap_err().contains("unknown event type"));
        let none = [&base[..], &["--events", ","]].concat();
        assert!(parse(&none).is_err());
    }
}
