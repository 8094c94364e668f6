//! Where the vulnerability feeds are fetched from (`rampart sync`, and the scheduled sync
//! of `rampart worker` and `serve --workers`).

use std::path::PathBuf;

use crate::flags::cadence::{RescanEvery, parse_rescan_every};

#[derive(clap::Args, Clone, Debug)]
pub(crate) struct FeedSources {
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
    /// The vendors' and distributions' advisories, comma-separated: advisory files or zip
    /// archives of them (default: nginx's, Apache httpd's and OpenSSL's own).
    #[arg(long, value_delimiter = ',')]
    advisory_urls: Option<Vec<String>>,
    /// The first year of NVD feed files a first sync downloads.
    #[arg(long, default_value_t = 2002)]
    first_year: i32,
}

impl FeedSources {
    /// The sync of `feeds` from these sources (NVD API key: env NVD_API_KEY).
    pub(crate) fn options(self, feeds: Vec<sync::Feed>, progress: bool) -> sync::SyncOptions {
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
            advisory_urls: self.advisory_urls.unwrap_or(d.advisory_urls),
            first_year: self.first_year,
            progress,
            ..d
        }
    }
}

/// What a worker keeps of the feeds: `--sync-every` and where the scheduled sync fetches.
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct FeedSchedule {
    /// Run `rampart sync` for the NVD, KEV, EPSS and advisories feeds this often (90s, 30m, 24h, 7d;
    /// `off`: never here). Whatever the feeds change is matched against the companies'
    /// detected software and re-rated without a rescan, in any case.
    #[arg(long, env = "RAMPART_SYNC_EVERY", default_value = "24h", value_parser = parse_rescan_every)]
    sync_every: RescanEvery,
    #[command(flatten)]
    sources: FeedSources,
}

impl FeedSchedule {
    /// The feeds' part of the settings of the worker named `name`.
    pub(crate) fn config(self, name: &str) -> worker::feeds::FeedsConfig {
        let feeds = vec![sync::Feed::Nvd, sync::Feed::Kev, sync::Feed::Epss, sync::Feed::Advisories];
        worker::feeds::FeedsConfig::new(self.sync_every.0, self.sources.options(feeds, false), name)
    }
}
