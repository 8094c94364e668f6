//! `rampart serve`: the API and the web app on one address, /metrics beside them or on
//! an address of its own, and scan workers in the same process when `--workers` asks.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};

use crate::common::{serve, shutdown_signal, spawn_metrics};
use crate::flags::cadence::{RescanEvery, parse_rescan_every};
use crate::flags::{DbArg, FeedSchedule, NetOpts};

#[derive(clap::Args)]
pub(crate) struct Args {
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
    #[arg(long, env = "RAMPART_RESCAN_EVERY", default_value = "24h", value_parser = parse_rescan_every)]
    rescan_every: RescanEvery,
    #[command(flatten)]
    feeds: FeedSchedule,
    /// Balancers (IP addresses, comma-separated) whose X-Forwarded-For names the
    /// client: the failed-authentication limit then counts per real client.
    #[arg(long, env = "RAMPART_TRUSTED_PROXIES", value_delimiter = ',')]
    trusted_proxies: Vec<IpAddr>,
    #[command(flatten)]
    limits: LimitsArg,
    #[command(flatten)]
    net: NetOpts,
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

/// What `serve` runs on: the store's, the API's and the in-process workers' settings.
/// What needs the store or the files the flags name (the rate limiter, the scanner's
/// context) is made from the flags kept here once the store is open.
struct Settings {
    db: String,
    store_options: store::Options,
    listen: SocketAddr,
    /// The API's settings but its metrics, which are made at start.
    api: api::Config,
    metrics_listen: Option<SocketAddr>,
    /// The in-process workers' settings, when `--workers` is above 0.
    workers: Option<worker::Config>,
    limits: LimitsArg,
    net: NetOpts,
}

impl Args {
    fn settings(self) -> Settings {
        let api = api::Config {
            metrics_on_api: self.metrics_listen.is_none(),
            read_cache_ttl: Duration::from_secs(self.read_cache_secs),
            cve_cache_ttl: Duration::from_secs(self.cve_cache_secs),
            version_poll: Duration::from_millis(self.version_poll_ms),
            auth_failures_per_minute: self.auth_failures_per_minute,
            trusted_proxies: self.trusted_proxies,
            lab_addresses: self.net.lab_mode(),
            default_cadence: self.rescan_every.0.unwrap_or(api::DEFAULT_CADENCE),
            ..Default::default()
        };
        let workers = (self.workers > 0).then(|| {
            let config =
                worker::Config { concurrency: self.workers, rescan_every: self.rescan_every.0, ..Default::default() };
            worker::Config { feeds: Some(self.feeds.config(&config.name)), ..config }
        });
        Settings {
            db: self.db.db,
            store_options: store::Options { served_cache_bytes: self.served_cache_mib.saturating_mul(1 << 20) },
            listen: self.listen,
            api,
            metrics_listen: self.metrics_listen,
            workers,
            limits: self.limits,
            net: self.net,
        }
    }
}

pub(crate) async fn run(args: Args) -> Result<()> {
    let Settings { db, store_options, listen, api, metrics_listen, workers, limits, net } = args.settings();
    let store = store::open_with(&db, &store_options)
        .await
        .with_context(|| format!("opening database {}", store::redact_url(&db)))?;
    let mut registry = prometheus_client::registry::Registry::default();
    if workers.is_some() {
        worker::metrics::register(&mut registry);
    }
    let metrics = Arc::new(api::metrics::Metrics::new(registry));
    if let Some(addr) = metrics_listen {
        spawn_metrics(addr, metrics.clone(), store.clone()).await?;
    }
    let config = api::Config { metrics: Some(metrics), ..api };
    let mut running = None;
    if let Some(config) = workers {
        // The worker reads the store's reference data for each job.
        let ctx = Arc::new(net.context()?);
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

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use crate::{Cli, Command};

    #[test]
    fn rescan_every_is_read_by_serve() {
        match Cli::try_parse_from(["rampart", "serve", "--workers", "2", "--rescan-every", "off"]).unwrap().command {
            Command::Serve(args) => assert_eq!(args.rescan_every.0, None),
            _ => panic!("not serve"),
        }
    }
}
