//! Bounded, resumable, conditional downloads into the cache directory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use reqwest::StatusCode;
use reqwest::header::{
    CONTENT_RANGE, ETAG, HeaderMap, IF_MODIFIED_SINCE, IF_NONE_MATCH, IF_RANGE, LAST_MODIFIED, RANGE,
};
use serde::{Deserialize, Serialize};
use tokio::io::AsyncWriteExt;

use crate::{SyncError, SyncOptions};

/// The User-Agent of every request.
pub(crate) const USER_AGENT: &str = concat!("Rampart/", env!("CARGO_PKG_VERSION"), " (vulnerability feed sync)");

/// The longest a connection may take to be set up (within the total timeout).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// What identifies a version of a resource: sent back to ask whether it changed, or
/// whether a partial download can be continued.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Validators {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

impl Validators {
    fn from_headers(headers: &HeaderMap) -> Self {
        let text =
            |name| headers.get(name).and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok()).map(str::to_owned);
        Validators { etag: text(ETAG), last_modified: text(LAST_MODIFIED) }
    }

    fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }
}

/// The sidecar of a `.part` file: which URL and version the bytes belong to.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct PartMeta {
    url: String,
    #[serde(flatten)]
    validators: Validators,
}

/// One download.
pub(crate) struct Get<'a> {
    pub url: &'a str,
    /// The file name in the cache directory.
    pub name: String,
    /// Validators of the version already imported: ask whether it changed.
    pub if_changed_since: Option<&'a Validators>,
    /// Extra request headers.
    pub headers: Vec<(&'static str, String)>,
    /// Answer [`Outcome::NotFound`] to a 404 instead of failing.
    pub not_found_ok: bool,
}

impl<'a> Get<'a> {
    pub fn new(url: &'a str, name: String) -> Self {
        Get { url, name, if_changed_since: None, headers: Vec::new(), not_found_ok: false }
    }
}

/// A complete download.
#[derive(Debug, Clone)]
pub(crate) struct Fetched {
    pub path: PathBuf,
    pub validators: Validators,
    /// Whether the file was downloaded earlier in this run (and not again now).
    pub reused: bool,
}

pub(crate) enum Outcome {
    Fetched(Fetched),
    /// 304: the version already imported is current.
    NotModified,
    /// 404, when allowed.
    NotFound,
}

pub(crate) struct Downloader {
    client: reqwest::Client,
    cache_dir: PathBuf,
    max_bytes: u64,
    progress: bool,
    retries: u32,
    retry_pause: Duration,
    /// Downloads completed in this run, by URL.
    completed: Mutex<HashMap<String, Fetched>>,
}

fn io(path: &Path, what: &'static str) -> impl FnOnce(std::io::Error) -> SyncError {
    let path = path.to_owned();
    move |source| SyncError::Io { path, what, source }
}

async fn remove_quietly(path: &Path) {
    if let Err(e) = tokio::fs::remove_file(path).await
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(path = %path.display(), error = %e, "cannot remove a cache file");
    }
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// A cache file name for `url`: `FEED-` and the URL's last path segment, reduced to
/// `[A-Za-z0-9._-]`.
pub(crate) fn cache_name(prefix: &str, url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or_default();
    let last = path.trim_end_matches('/').rsplit('/').next().unwrap_or_default();
    let clean: String =
        last.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect();
    let clean = clean.trim_start_matches('.');
    if clean.is_empty() { format!("{prefix}-download") } else { format!("{prefix}-{clean}") }
}

/// The error for an unexpected status, with the server's explanation when it gave one.
async fn status_error(url: &str, mut response: reqwest::Response) -> SyncError {
    let status = response.status();
    let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let plain = header("content-type").is_some_and(|t| t.starts_with("text/plain"));
    let mut detail = header("message").unwrap_or_default();
    if status.is_redirection() {
        // Redirects are not followed: a feed URL is configured, and a redirect could
        // point the download anywhere. Say where, so the operator can set that URL.
        let to: String = header("location").unwrap_or_default().chars().filter(|c| !c.is_control()).take(300).collect();
        detail = format!("a redirect to {to:?}, not followed; set the feed's URL to where it points if that is right");
    }
    if detail.is_empty()
        && plain
        && let Ok(Some(chunk)) = response.chunk().await
    {
        detail = String::from_utf8_lossy(&chunk[..chunk.len().min(300)]).into_owned();
    }
    let detail: String = detail.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(200).collect();
    SyncError::Status { url: url.to_owned(), status, detail }
}

impl Downloader {
    pub fn new(opts: &SyncOptions) -> Result<Self, SyncError> {
        let client = egress::service::ServiceClient {
            user_agent: USER_AGENT.to_owned(),
            timeout: opts.timeout,
            connect_timeout: CONNECT_TIMEOUT,
            env_proxy: true,
        }
        .build()
        .map_err(SyncError::Client)?;
        Ok(Downloader {
            client,
            cache_dir: opts.cache_dir.clone(),
            max_bytes: opts.max_file_bytes,
            progress: opts.progress,
            retries: opts.retries,
            retry_pause: opts.retry_pause,
            completed: Mutex::new(HashMap::new()),
        })
    }

    pub fn cache_dir(&self) -> &Path {
        &self.cache_dir
    }

    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// Removes a downloaded file that is no longer needed.
    pub async fn discard(&self, fetched: &Fetched) {
        if let Ok(mut done) = self.completed.lock() {
            done.retain(|_, f| f.path != fetched.path);
        }
        remove_quietly(&fetched.path).await;
    }

    fn completed(&self, url: &str) -> Option<Fetched> {
        let done = self.completed.lock().ok()?;
        done.get(url).filter(|f| f.path.is_file()).map(|f| Fetched { reused: true, ..f.clone() })
    }

    /// Where a `.part` file for `url` can be continued: its length and the validators
    /// of the version it holds. A part of another URL is removed.
    async fn resumable(&self, part: &Path, meta: &Path, url: &str) -> (u64, Option<Validators>) {
        let len = match tokio::fs::metadata(part).await {
            Ok(m) if m.is_file() => m.len(),
            _ => return (0, None),
        };
        let recorded = match tokio::fs::read(meta).await {
            Ok(bytes) => serde_json::from_slice::<PartMeta>(&bytes).ok(),
            Err(_) => None,
        };
        match recorded {
            Some(m) if m.url != url => {
                tracing::info!(part = %part.display(), "a partial download of another URL: starting over");
                remove_quietly(part).await;
                remove_quietly(meta).await;
                (0, None)
            }
            Some(m) => (len, Some(m.validators)),
            None => (len, None),
        }
    }

    /// Downloads `get.url` to the cache (continuing a `.part` file when there is one)
    /// and returns the complete file.
    pub async fn get(&self, get: &Get<'_>) -> Result<Outcome, SyncError> {
        let url = get.url;
        if let Some(done) = self.completed(url) {
            tracing::debug!(url, "downloaded earlier in this run");
            return Ok(Outcome::Fetched(done));
        }
        tokio::fs::create_dir_all(&self.cache_dir)
            .await
            .map_err(io(&self.cache_dir, "creating the cache directory"))?;
        let path = self.cache_dir.join(&get.name);
        let part = with_suffix(&path, ".part");
        let meta = with_suffix(&path, ".part.meta");
        let (mut offset, mut partial) = self.resumable(&part, &meta, url).await;
        let mut restarted = false;
        let mut attempt = 0u32;
        loop {
            let mut request = self.client.get(url);
            for (name, value) in &get.headers {
                request = request.header(*name, value);
            }
            if let Some(v) = get.if_changed_since {
                if let Some(etag) = &v.etag {
                    request = request.header(IF_NONE_MATCH, etag);
                }
                if let Some(lm) = &v.last_modified {
                    request = request.header(IF_MODIFIED_SINCE, lm);
                }
            }
            if offset > 0 {
                request = request.header(RANGE, format!("bytes={offset}-"));
                // Only a strong validator may make a range conditional.
                let if_range = partial
                    .as_ref()
                    .and_then(|p| p.etag.clone().filter(|e| !e.starts_with("W/")).or_else(|| p.last_modified.clone()));
                if let Some(v) = if_range {
                    request = request.header(IF_RANGE, v);
                }
                tracing::info!(url, offset, "resuming a partial download");
            } else {
                tracing::info!(url, "downloading");
            }
            let response = match request.send().await {
                Ok(r) => r,
                Err(e) if (e.is_connect() || e.is_timeout()) && attempt < self.retries => {
                    attempt += 1;
                    self.pause(url, attempt, None, &e.to_string()).await;
                    continue;
                }
                Err(e) => return Err(SyncError::Request { url: url.to_owned(), source: e.without_url() }),
            };
            let status = response.status();
            if matches!(status.as_u16(), 429 | 502 | 503 | 504) && attempt < self.retries {
                attempt += 1;
                let retry_after = response
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(|s| Duration::from_secs(s.min(120)));
                self.pause(url, attempt, retry_after, status.as_str()).await;
                continue;
            }
            match status {
                StatusCode::NOT_MODIFIED if get.if_changed_since.is_some() => {
                    // What was imported last is current: a partial newer copy is moot.
                    remove_quietly(&part).await;
                    remove_quietly(&meta).await;
                    return Ok(Outcome::NotModified);
                }
                StatusCode::NOT_FOUND if get.not_found_ok => return Ok(Outcome::NotFound),
                StatusCode::PARTIAL_CONTENT if offset > 0 => {
                    let range = response.headers().get(CONTENT_RANGE).and_then(|v| v.to_str().ok()).unwrap_or("");
                    if !range.starts_with(&format!("bytes {offset}-")) {
                        if restarted {
                            return Err(SyncError::BadResponse {
                                url: url.to_owned(),
                                message: format!("206 with Content-Range {range:?} for a request from byte {offset}"),
                            });
                        }
                        tracing::warn!(url, range, "unexpected Content-Range: starting over");
                        (offset, partial, restarted) = (0, None, true);
                        remove_quietly(&part).await;
                        continue;
                    }
                }
                StatusCode::RANGE_NOT_SATISFIABLE if offset > 0 && !restarted => {
                    tracing::warn!(url, offset, "the partial download does not fit the file: starting over");
                    (offset, partial, restarted) = (0, None, true);
                    remove_quietly(&part).await;
                    continue;
                }
                StatusCode::OK => {
                    if offset > 0 {
                        tracing::info!(url, "the server sent the whole file: starting over");
                    }
                    offset = 0;
                }
                _ => return Err(status_error(url, response).await),
            }
            let fetched = self.receive(response, url, &path, &part, &meta, offset, partial).await?;
            if let Ok(mut done) = self.completed.lock() {
                done.insert(url.to_owned(), fetched.clone());
            }
            return Ok(Outcome::Fetched(fetched));
        }
    }

    /// Waits before trying `url` again: the server's `Retry-After`, else the pause
    /// doubled for each try.
    async fn pause(&self, url: &str, attempt: u32, retry_after: Option<Duration>, why: &str) {
        let wait = retry_after.unwrap_or_else(|| self.retry_pause.saturating_mul(1 << (attempt - 1).min(10)));
        tracing::warn!(url, attempt, why, wait_ms = wait.as_millis() as u64, "trying again");
        tokio::time::sleep(wait).await;
    }

    /// Writes the body to `part` (appending from `offset`), then renames it to `path`.
    #[allow(clippy::too_many_arguments)]
    async fn receive(
        &self,
        mut response: reqwest::Response,
        url: &str,
        path: &Path,
        part: &Path,
        meta: &Path,
        offset: u64,
        partial: Option<Validators>,
    ) -> Result<Fetched, SyncError> {
        let too_large = || SyncError::TooLarge { url: url.to_owned(), limit: self.max_bytes };
        let mut validators = Validators::from_headers(response.headers());
        if validators.is_empty() && offset > 0 {
            validators = partial.unwrap_or_default();
        }
        let remaining = response.content_length();
        if remaining.is_some_and(|n| offset.saturating_add(n) > self.max_bytes) {
            remove_quietly(part).await;
            remove_quietly(meta).await;
            return Err(too_large());
        }
        let mut file = if offset == 0 {
            let record = PartMeta { url: url.to_owned(), validators: validators.clone() };
            let json = serde_json::to_vec(&record).unwrap_or_default();
            tokio::fs::write(meta, json).await.map_err(io(meta, "writing"))?;
            tokio::fs::File::create(part).await.map_err(io(part, "creating"))?
        } else {
            tokio::fs::OpenOptions::new().append(true).open(part).await.map_err(io(part, "opening"))?
        };
        let bar = self.bar(path, remaining.map(|n| offset + n), offset);
        let mut received = offset;
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    received += chunk.len() as u64;
                    if received > self.max_bytes {
                        drop(file);
                        bar.abandon();
                        remove_quietly(part).await;
                        remove_quietly(meta).await;
                        return Err(too_large());
                    }
                    file.write_all(&chunk).await.map_err(io(part, "writing"))?;
                    bar.set_position(received);
                }
                Ok(None) => break,
                Err(e) => {
                    // Keep what arrived: the next run continues from there.
                    let _ = file.flush().await;
                    bar.abandon();
                    return Err(SyncError::Body { url: url.to_owned(), received, source: e.without_url() });
                }
            }
        }
        file.flush().await.map_err(io(part, "writing"))?;
        file.sync_all().await.map_err(io(part, "writing"))?;
        drop(file);
        bar.finish_and_clear();
        tokio::fs::rename(part, path).await.map_err(io(part, "renaming the complete download"))?;
        remove_quietly(meta).await;
        tracing::info!(url, path = %path.display(), bytes = received, "downloaded");
        Ok(Fetched { path: path.to_owned(), validators, reused: false })
    }

    fn bar(&self, path: &Path, total: Option<u64>, position: u64) -> ProgressBar {
        if !self.progress {
            return ProgressBar::hidden();
        }
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let bar = match total {
            Some(total) => ProgressBar::new(total).with_style(
                ProgressStyle::with_template(
                    "{msg:32!} [{bar:30}] {bytes:>10}/{total_bytes:10} {bytes_per_sec:>12} {eta:>4}",
                )
                .map(|s| s.progress_chars("=> "))
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            ),
            None => ProgressBar::no_length().with_style(
                ProgressStyle::with_template("{spinner} {msg:32!} {bytes:>10} {bytes_per_sec:>12}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            ),
        };
        bar.set_message(name);
        bar.set_position(position);
        bar
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn a_url_is_downloaded_once_per_run() {
        let hits = Arc::new(AtomicUsize::new(0));
        let counter = hits.clone();
        let app = axum::Router::new().route(
            "/f",
            axum::routing::get(move || {
                counter.fetch_add(1, Ordering::SeqCst);
                async { "body" }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/f", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let dir = tempfile::tempdir().unwrap();
        let dl = Downloader::new(&SyncOptions { cache_dir: dir.path().to_owned(), ..SyncOptions::default() }).unwrap();
        let fetch = || async {
            match dl.get(&Get::new(&url, "t-f".into())).await.unwrap() {
                Outcome::Fetched(f) => f,
                _ => panic!("not fetched"),
            }
        };
        let first = fetch().await;
        assert!(!first.reused);
        assert_eq!(std::fs::read(&first.path).unwrap(), b"body");
        let again = fetch().await;
        assert!(again.reused && again.path == first.path);
        assert_eq!(hits.load(Ordering::SeqCst), 1);
        dl.discard(&again).await;
        assert!(!first.path.exists());
        assert!(!fetch().await.reused, "a discarded file is downloaded again");
        assert_eq!(hits.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn cache_names() {
        assert_eq!(
            cache_name("kev", "https://www.cisa.gov/sites/default/files/feeds/known_exploited_vulnerabilities.json"),
            "kev-known_exploited_vulnerabilities.json"
        );
        assert_eq!(cache_name("cwe", "http://h/x/cwec_latest.xml.zip?token=a/b"), "cwe-cwec_latest.xml.zip");
        assert_eq!(cache_name("capec", "http://h/"), "capec-h");
        assert_eq!(cache_name("epss", "http://h/a/..%2F..%2Fetc"), "epss-_2F.._2Fetc");
        assert_eq!(cache_name("epss", ""), "epss-download");
    }
}
