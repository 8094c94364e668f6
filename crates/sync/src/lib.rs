//! Feed synchronisation, `rampart sync`: downloads the vulnerability feeds — NVD CVE
//! (the yearly JSON 2.0 feed files on the first run, then the CVE API 2.0 by
//! last-modified windows), CISA KEV, FIRST EPSS, MITRE CWE, MITRE CAPEC and the
//! software vendors' advisories (files, or archives of the publishers' repositories) — into a
//! cache directory and imports each file with the importers of `vulndb::import`. This is
//! the only crate of Rampart that downloads anything: every other crate reads files or
//! a store it is given.
//!
//! Downloads are bounded (connect and total timeouts, a size limit), resumable (a
//! `NAME.part` file left by an interrupted run is continued with an HTTP range request)
//! and conditional where the source allows it (`ETag`, `Last-Modified`). How far each
//! feed has got is kept in the store's feed state (see [`sync`] for the formats), so an
//! interrupted sync goes on where it stopped.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use store::{Store, StoreError};
use vulndb::import::ImportError;

mod download;
mod files;
mod nvd;

/// The pause between two NVD API requests without an API key (NVD asks for 6 s).
pub const NVD_PAUSE_WITHOUT_KEY: Duration = Duration::from_secs(6);
/// The pause between two NVD API requests with an API key.
pub const NVD_PAUSE_WITH_KEY: Duration = Duration::from_millis(600);

/// Where the vendors publish their advisories: nginx's security advisories, and the
/// repositories of Apache httpd's per-CVE JSON (its web site's `content/security/json/`)
/// and OpenSSL's CVE JSON 5 records (`secjson/`), as GitHub's zip archives of them.
/// Distributions' data (Ubuntu's OSV records, `…/Ubuntu/all.zip` at OSV's bucket, or
/// Debian's tracker) is added with `--advisory-urls`.
pub const DEFAULT_ADVISORIES: [&str; 3] = [
    "https://raw.githubusercontent.com/nginx/nginx.org/main/xml/en/security_advisories.xml",
    "https://github.com/apache/httpd-site/archive/refs/heads/main.zip",
    "https://github.com/openssl/release-metadata/archive/refs/heads/main.zip",
];

/// What to synchronise, from where, and within which bounds.
///
/// Cache files are named after the feed and the last segment of the URL
/// (`kev-known_exploited_vulnerabilities.json`, `nvd-nvdcve-2.0-2014.json.gz`, NVD API
/// pages `nvd-api-START-INDEX.json`); a download in progress is `NAME.part`, with
/// `NAME.part.meta` recording the URL and validators it belongs to. NVD files are
/// removed once imported; the last file of each other feed is kept.
#[derive(Debug, Clone)]
pub struct SyncOptions {
    /// The feeds to synchronise, in this order (duplicates are ignored).
    pub feeds: Vec<Feed>,
    /// Where the yearly NVD JSON 2.0 feed files `nvdcve-2.0-YYYY.json.gz` are.
    pub nvd_feed_base: String,
    /// The NVD CVE API 2.0 endpoint.
    pub nvd_api: String,
    /// Sent as the `apiKey` header to the NVD API when set.
    pub nvd_api_key: Option<String>,
    /// The pause between two NVD API requests ([`NVD_PAUSE_WITHOUT_KEY`] by default;
    /// [`SyncOptions::with_nvd_api_key`] sets [`NVD_PAUSE_WITH_KEY`] with a key).
    pub nvd_pause: Duration,
    /// The CISA KEV catalogue (JSON).
    pub kev_url: String,
    /// The FIRST EPSS scores (CSV, plain or gzipped).
    pub epss_url: String,
    /// The MITRE CWE catalogue: a zip holding one XML file, or the XML itself.
    pub cwe_url: String,
    /// The MITRE CAPEC catalogue (XML, or a STIX 2.1 JSON bundle).
    pub capec_url: String,
    /// The vendors' and distributions' advisories (`vulndb::advisory`): each an advisory
    /// file, or a zip archive whose `.json` and `.xml` entries are read, those that are
    /// not advisories left out ([`DEFAULT_ADVISORIES`] by default).
    pub advisory_urls: Vec<String>,
    /// Where downloads are kept (created when missing).
    pub cache_dir: PathBuf,
    /// The first year of NVD feed files a first sync downloads.
    pub first_year: i32,
    /// Show a progress bar per download on the terminal.
    pub progress: bool,
    /// The total time one request may take, body included; connecting may take at
    /// most 30 s of it.
    pub timeout: Duration,
    /// The largest body accepted (after any transfer decoding), and the largest file
    /// extracted from an archive.
    pub max_file_bytes: u64,
    /// How often a request is tried again after a busy answer (429, 502, 503, 504), a
    /// refused connection or a timeout.
    pub retries: u32,
    /// The first pause before trying again; it doubles each time. A `Retry-After` of
    /// the server (up to two minutes) takes its place.
    pub retry_pause: Duration,
}

impl Default for SyncOptions {
    /// The official sources, all feeds, `./rampart-cache`.
    fn default() -> Self {
        SyncOptions {
            feeds: Feed::ALL.to_vec(),
            nvd_feed_base: "https://nvd.nist.gov/feeds/json/cve/2.0".into(),
            nvd_api: "https://services.nvd.nist.gov/rest/json/cves/2.0".into(),
            nvd_api_key: None,
            nvd_pause: NVD_PAUSE_WITHOUT_KEY,
            kev_url: "https://www.cisa.gov/sites/default/files/feeds/known_exploited_vulnerabilities.json".into(),
            epss_url: "https://epss.empiricalsecurity.com/epss_scores-current.csv.gz".into(),
            cwe_url: "https://cwe.mitre.org/data/xml/cwec_latest.xml.zip".into(),
            capec_url: "https://capec.mitre.org/data/xml/capec_latest.xml".into(),
            advisory_urls: DEFAULT_ADVISORIES.iter().map(|u| (*u).to_owned()).collect(),
            cache_dir: PathBuf::from("rampart-cache"),
            first_year: 2002,
            progress: false,
            timeout: Duration::from_secs(600),
            retries: 4,
            retry_pause: Duration::from_secs(5),
            max_file_bytes: 1 << 30,
        }
    }
}

impl SyncOptions {
    /// Sets the NVD API key and the pause NVD asks for with (or without) one.
    pub fn with_nvd_api_key(mut self, key: Option<String>) -> Self {
        let key = key.filter(|k| !k.trim().is_empty());
        self.nvd_pause = if key.is_some() { NVD_PAUSE_WITH_KEY } else { NVD_PAUSE_WITHOUT_KEY };
        self.nvd_api_key = key;
        self
    }
}

/// A feed `rampart sync` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Feed {
    /// NVD CVE records.
    Nvd,
    /// CISA Known Exploited Vulnerabilities.
    Kev,
    /// FIRST Exploit Prediction Scoring System scores.
    Epss,
    /// MITRE Common Weakness Enumeration.
    Cwe,
    /// MITRE Common Attack Pattern Enumeration and Classification.
    Capec,
    /// The software vendors' and distributions' advisories.
    Advisories,
}

impl Feed {
    /// Every feed, in the order a full sync runs them.
    pub const ALL: [Feed; 6] = [Feed::Nvd, Feed::Kev, Feed::Epss, Feed::Cwe, Feed::Capec, Feed::Advisories];

    /// The feed's name: `nvd`, `kev`, `epss`, `cwe`, `capec`, `advisories` (also its
    /// feed-state key).
    pub fn as_str(self) -> &'static str {
        match self {
            Feed::Nvd => "nvd",
            Feed::Kev => "kev",
            Feed::Epss => "epss",
            Feed::Cwe => "cwe",
            Feed::Capec => "capec",
            Feed::Advisories => "advisories",
        }
    }

    /// Parses a comma-separated list (`nvd,kev`); `all` stands for every feed.
    pub fn parse_list(list: &str) -> Result<Vec<Feed>, UnknownFeed> {
        let mut feeds = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let more: Vec<Feed> =
                if name.eq_ignore_ascii_case("all") { Feed::ALL.to_vec() } else { vec![name.parse()?] };
            for f in more {
                if !feeds.contains(&f) {
                    feeds.push(f);
                }
            }
        }
        Ok(feeds)
    }
}

impl fmt::Display for Feed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A feed name that is none of `nvd`, `kev`, `epss`, `cwe`, `capec`, `advisories`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown feed {0:?}: expected nvd, kev, epss, cwe, capec or advisories")]
pub struct UnknownFeed(pub String);

impl FromStr for Feed {
    type Err = UnknownFeed;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Feed::ALL.into_iter().find(|f| f.as_str().eq_ignore_ascii_case(s.trim())).ok_or_else(|| UnknownFeed(s.into()))
    }
}

/// What a sync did, per feed, in the order the feeds ran.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SyncReport {
    pub feeds: Vec<FeedReport>,
}

impl SyncReport {
    /// The report of one feed, when it ran.
    pub fn feed(&self, feed: Feed) -> Option<&FeedReport> {
        self.feeds.iter().find(|r| r.feed == feed)
    }
}

/// What a sync did for one feed.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedReport {
    pub feed: Feed,
    /// Files downloaded (NVD: feed files and API pages).
    pub files_fetched: usize,
    /// Records read from the downloaded files.
    pub read: usize,
    /// Records written to the store.
    pub written: usize,
    /// The source answered 304 Not Modified: nothing was imported.
    pub unchanged: bool,
    /// URLs skipped because the source does not have them (NVD years answering 404).
    pub skipped: Vec<String>,
    /// Why the feed failed, when it did.
    pub error: Option<String>,
}

impl FeedReport {
    fn new(feed: Feed) -> Self {
        FeedReport { feed, files_fetched: 0, read: 0, written: 0, unchanged: false, skipped: Vec::new(), error: None }
    }
}

impl fmt::Display for FeedReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.feed)?;
        if self.unchanged {
            f.write_str("unchanged (304 Not Modified)")?;
        } else {
            write!(f, "{} file(s) fetched, {} records read, {} written", self.files_fetched, self.read, self.written)?;
        }
        if !self.skipped.is_empty() {
            write!(f, ", {} skipped (not published)", self.skipped.len())?;
        }
        if let Some(e) = &self.error {
            write!(f, "; FAILED: {e}")?;
        }
        Ok(())
    }
}

impl fmt::Display for SyncReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.feeds.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

/// Why a sync, or a feed within it, failed. Network errors name the URL.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The HTTP client could not be built.
    #[error("building the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    #[error("{url}: not a usable URL: {message}")]
    BadUrl { url: String, message: String },
    /// Connecting, sending or waiting for the response failed (or timed out).
    #[error("GET {url}: request failed: {}", causes(source))]
    Request {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    /// An unexpected status; `detail` is the server's explanation, when it gave one
    /// (NVD's `message` header, or the start of a plain-text body).
    #[error("GET {url}: the server answered {status}{}", if detail.is_empty() { String::new() } else { format!(": {detail}") })]
    Status { url: String, status: reqwest::StatusCode, detail: String },
    /// The body (after transfer decoding) is larger than `max_file_bytes`.
    #[error("GET {url}: the body is larger than the limit of {limit} bytes")]
    TooLarge { url: String, limit: u64 },
    /// Reading the body failed (or timed out); what arrived is kept for resuming.
    #[error("GET {url}: reading the body failed after {received} bytes: {}", causes(source))]
    Body {
        url: String,
        received: u64,
        #[source]
        source: reqwest::Error,
    },
    /// The response is not what the protocol promises.
    #[error("GET {url}: {message}")]
    BadResponse { url: String, message: String },
    #[error("{path}: {what}: {source}")]
    Io {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// The CWE archive cannot be read or holds no usable XML.
    #[error("{url}: archive: {message}")]
    Archive { url: String, message: String },
    /// Importing a downloaded file failed.
    #[error("importing {url} (cached as {path}): {source}")]
    Import {
        url: String,
        path: PathBuf,
        #[source]
        source: ImportError,
    },
    #[error("{feed}: feed state: {source}")]
    Store {
        feed: Feed,
        #[source]
        source: StoreError,
    },
    /// The stored feed state is not one this crate writes.
    #[error("{feed}: the stored feed state {value:?} is not understood: {message}")]
    State { feed: Feed, value: String, message: String },
    /// One or more feeds failed; the others ran. Holds the full report.
    #[error("{0}")]
    Incomplete(Box<Incomplete>),
}

/// An error and its causes on one line (an HTTP client error alone says little:
/// "error sending request").
fn causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        cause = c.source();
    }
    text
}

/// The outcome of a sync in which some feeds failed.
#[derive(Debug)]
pub struct Incomplete {
    /// What every feed did (failed feeds carry their error).
    pub report: SyncReport,
    /// The failed feeds and why.
    pub failures: Vec<(Feed, SyncError)>,
}

impl fmt::Display for Incomplete {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} feed(s) failed", self.failures.len())?;
        for (feed, e) in &self.failures {
            write!(f, "; {feed}: {e}")?;
        }
        Ok(())
    }
}

/// Everything a feed's sync works with.
pub(crate) struct Ctx<'a> {
    pub store: &'a dyn Store,
    pub opts: &'a SyncOptions,
    pub dl: download::Downloader,
}

impl Ctx<'_> {
    pub async fn state(&self, feed: Feed) -> Result<Option<String>, SyncError> {
        self.store.feed_state(feed.as_str()).await.map_err(|source| SyncError::Store { feed, source })
    }

    pub async fn set_state<T: serde::Serialize>(&self, feed: Feed, value: &T) -> Result<(), SyncError> {
        let text = serde_json::to_string(value).map_err(|e| SyncError::State {
            feed,
            value: String::new(),
            message: format!("cannot be written: {e}"),
        })?;
        self.store.set_feed_state(feed.as_str(), &text).await.map_err(|source| SyncError::Store { feed, source })
    }
}

/// Synchronises `opts.feeds` into `store`, one feed after the other. A feed that fails
/// does not stop the others: the result is then [`SyncError::Incomplete`], carrying the
/// report.
///
/// Feed state written (`Store::set_feed_state`, JSON):
/// - `nvd`, while the first sync downloads the yearly files:
///   `{"mode":"years","done_through":2014,"started_at":"2026-11-22T00:47:51Z","synced_at":"…"}`
///   — the next run continues with `done_through + 1`;
/// - `nvd`, afterwards: `{"mode":"incremental","last_modified":"2026-11-20T00:47:51.000Z","synced_at":"…"}`
///   — the API is asked for what changed since `last_modified`. After the yearly files
///   this is the start of the first run less two days (the yearly files are regenerated
///   about daily, so they may lag behind); after each API window, the window's end.
/// - `kev`, `epss`, `cwe`, `capec`: `{"url":"…","etag":"…","last_modified":"…","synced_at":"…"}`
///   — the validators of the last imported download, sent back as `If-None-Match` and
///   `If-Modified-Since` when the URL is the same;
/// - `advisories`: `{"files":[{"url":…,"etag":…,…}, …]}`, one such state per URL.
pub async fn sync(store: &dyn Store, opts: &SyncOptions) -> Result<SyncReport, SyncError> {
    let ctx = Ctx { store, opts, dl: download::Downloader::new(opts)? };
    let mut report = SyncReport::default();
    let mut failures = Vec::new();
    let mut feeds: Vec<Feed> = Vec::new();
    for f in &opts.feeds {
        if !feeds.contains(f) {
            feeds.push(*f);
        }
    }
    for feed in feeds {
        let mut r = FeedReport::new(feed);
        let result = match feed {
            Feed::Nvd => nvd::sync(&ctx, &mut r).await,
            Feed::Advisories => files::sync_advisories(&ctx, &mut r).await,
            _ => files::sync(&ctx, feed, &mut r).await,
        };
        match result {
            Ok(()) => tracing::info!(%feed, report = %r, "feed synchronised"),
            Err(e) => {
                tracing::error!(%feed, error = %e, "feed failed");
                r.error = Some(e.to_string());
                failures.push((feed, e));
            }
        }
        report.feeds.push(r);
    }
    if failures.is_empty() { Ok(report) } else { Err(SyncError::Incomplete(Box::new(Incomplete { report, failures }))) }
}

/// `t` in UTC as RFC 3339 with whole seconds.
pub(crate) fn stamp(t: time::OffsetDateTime) -> String {
    model::timefmt::rfc3339(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feed_names_parse() {
        assert_eq!("nvd".parse::<Feed>(), Ok(Feed::Nvd));
        assert_eq!(" CAPEC ".parse::<Feed>(), Ok(Feed::Capec));
        assert!("cpe".parse::<Feed>().is_err());
        assert_eq!(Feed::parse_list("kev, nvd,kev"), Ok(vec![Feed::Kev, Feed::Nvd]));
        assert_eq!(Feed::parse_list("all"), Ok(Feed::ALL.to_vec()));
        assert_eq!(Feed::parse_list("nvd,bogus").unwrap_err().0, "bogus");
        for f in Feed::ALL {
            assert_eq!(f.as_str().parse::<Feed>(), Ok(f));
        }
    }

    #[test]
    fn api_key_sets_the_pause() {
        let o = SyncOptions::default().with_nvd_api_key(Some("k".into()));
        assert_eq!((o.nvd_pause, o.nvd_api_key.as_deref()), (NVD_PAUSE_WITH_KEY, Some("k")));
        let o = SyncOptions::default().with_nvd_api_key(Some(" ".into()));
        assert_eq!((o.nvd_pause, o.nvd_api_key), (NVD_PAUSE_WITHOUT_KEY, None));
    }

    #[test]
    fn report_reads() {
        let mut r = FeedReport::new(Feed::Kev);
        r.unchanged = true;
        assert_eq!(r.to_string(), "kev: unchanged (304 Not Modified)");
        let mut n = FeedReport::new(Feed::Nvd);
        n.files_fetched = 2;
        n.read = 10;
        n.written = 9;
        n.skipped = vec!["u".into()];
        assert_eq!(n.to_string(), "nvd: 2 file(s) fetched, 10 records read, 9 written, 1 skipped (not published)");
    }
}
