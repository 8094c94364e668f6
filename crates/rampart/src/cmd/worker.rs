//! `rampart worker`: runs scan jobs from the store's queue until Ctrl-C or SIGTERM, with
//! the rescan scheduler and the feeds' sync when asked.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;

use crate::common::{open, shutdown_signal, spawn_metrics};
use crate::flags::cadence::{RescanEvery, parse_rescan_every};
use crate::flags::{DbArg, FeedSchedule, NetOpts};

#[derive(clap::Args)]
pub(crate) struct Args {
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
    #[arg(long, env = "RAMPART_RESCAN_EVERY", default_value = "24h", value_parser = parse_rescan_every)]
    rescan_every: RescanEvery,
    #[command(flatten)]
    feeds: FeedSchedule,
    #[command(flatten)]
    net: NetOpts,
}

/// What the worker runs on; the scanner's context is made from `net` once the store is
/// open.
struct Settings {
    db: String,
    metrics_listen: Option<SocketAddr>,
    worker: worker::Config,
    net: NetOpts,
}

impl Args {
    fn settings(self) -> Settings {
        let config = worker::Config {
            concurrency: self.concurrency,
            lease: Duration::from_secs(self.lease_secs),
            max_attempts: self.max_attempts,
            rescan_every: self.rescan_every.0,
            ..Default::default()
        };
        let worker = worker::Config { feeds: Some(self.feeds.config(&config.name)), ..config };
        Settings { db: self.db.db, metrics_listen: self.metrics_listen, worker, net: self.net }
    }
}

pub(crate) async fn run(args: Args) -> Result<()> {
    let Settings { db, metrics_listen, worker: config, net } = args.settings();
    let store = open(&db).await?;
    if let Some(addr) = metrics_listen {
        let mut registry = prometheus_client::registry::Registry::default();
        worker::metrics::register(&mut registry);
        let metrics = Arc::new(api::metrics::Metrics::new(registry));
        spawn_metrics(addr, metrics, store.clone()).await?;
    }
    // The worker reads the store's reference data for each job.
    let ctx = Arc::new(net.context()?);
    let (concurrency, rescan_every) = (config.concurrency, config.rescan_every);
    tracing::info!(concurrency, rescan_every_secs = rescan_every.map(|d| d.as_secs()), "worker running");
    worker::run(store, ctx, config, shutdown_signal()).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use crate::{Cli, Command};

    #[test]
    fn rescan_every_is_read_by_the_worker() {
        let hour = Some(std::time::Duration::from_secs(3_600));
        match Cli::try_parse_from(["rampart", "worker", "--rescan-every", "1h"]).unwrap().command {
            Command::Worker(args) => assert_eq!(args.rescan_every.0, hour),
            _ => panic!("not the worker"),
        }
        match Cli::try_parse_from(["rampart", "worker"]).unwrap().command {
            Command::Worker(args) => {
                assert_eq!(args.rescan_every.0, Some(std::time::Duration::from_secs(86_400)), "a day by default")
            }
            _ => panic!("not the worker"),
        }
        assert!(Cli::try_parse_from(["rampart", "worker", "--rescan-every", "10s"]).is_err());
    }
}
