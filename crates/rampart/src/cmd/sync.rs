//! `rampart sync`: the vulnerability feeds downloaded (resuming partial downloads) and
//! imported (NVD API key: env NVD_API_KEY).

use anyhow::{Result, bail};

use crate::common::open;
use crate::flags::{DbArg, FeedSources};

#[derive(clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    db: DbArg,
    /// Comma-separated: nvd, kev, epss, cwe, capec, advisories.
    #[arg(long, value_delimiter = ',', default_value = "nvd,kev,epss,cwe,capec,advisories")]
    feeds: Vec<sync::Feed>,
    #[command(flatten)]
    sources: FeedSources,
}

pub(crate) async fn run(args: Args) -> Result<()> {
    let opts = args.sources.options(args.feeds, true);
    sync_feeds(&args.db.db, &opts).await
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
