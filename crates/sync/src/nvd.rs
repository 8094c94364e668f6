//! NVD: the yearly JSON 2.0 feed files on the first sync, then the CVE API 2.0 in
//! windows of last-modified dates.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::macros::format_description;

use crate::download::{Get, Outcome};
use crate::{Ctx, Feed, FeedReport, SyncError, stamp};

/// The longest date range the NVD API accepts in one query.
pub(crate) const MAX_WINDOW: time::Duration = time::Duration::days(120);
/// Records per API page (the API's maximum).
pub(crate) const PAGE_SIZE: u32 = 2000;
/// How far the yearly feed files may lag behind the API: the incremental sync after
/// them starts this long before the first run began.
pub(crate) const FEED_LAG: time::Duration = time::Duration::days(2);

/// The `nvd` feed state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub(crate) enum NvdState {
    /// The first sync, by yearly feed files: every year up to `done_through` is in.
    Years { done_through: i32, started_at: String, synced_at: String },
    /// Everything modified before `last_modified` (API form) is in.
    Incremental {
        last_modified: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        synced_at: Option<String>,
    },
}

/// The NVD API's date form: `2026-11-01T00:00:00.000Z`.
pub(crate) fn api_time(t: OffsetDateTime) -> String {
    t.to_offset(time::UtcOffset::UTC)
        .format(format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"))
        .unwrap_or_default()
}

/// `[from, until)` cut into windows of at most [`MAX_WINDOW`].
pub(crate) fn windows(from: OffsetDateTime, until: OffsetDateTime) -> Vec<(OffsetDateTime, OffsetDateTime)> {
    let mut out = Vec::new();
    let mut start = from;
    while start < until {
        let end = (start + MAX_WINDOW).min(until);
        out.push((start, end));
        start = end;
    }
    out
}

fn bad_state(value: &str, message: impl Into<String>) -> SyncError {
    SyncError::State { feed: Feed::Nvd, value: value.to_owned(), message: message.into() }
}

fn parse_time(raw: &str, value: &str) -> Result<OffsetDateTime, SyncError> {
    model::timefmt::parse_datetime(raw).ok_or_else(|| bad_state(value, format!("{raw:?} is not a date-time")))
}

pub(crate) async fn sync(ctx: &Ctx<'_>, report: &mut FeedReport) -> Result<(), SyncError> {
    let now = OffsetDateTime::now_utc();
    let state = match ctx.state(Feed::Nvd).await? {
        None => None,
        Some(raw) => Some((serde_json::from_str::<NvdState>(&raw).map_err(|e| bad_state(&raw, e.to_string()))?, raw)),
    };
    match state {
        None => years(ctx, report, ctx.opts.first_year, now).await,
        Some((NvdState::Years { done_through, started_at, .. }, raw)) => {
            let started = parse_time(&started_at, &raw)?;
            years(ctx, report, (done_through + 1).max(ctx.opts.first_year), started).await
        }
        Some((NvdState::Incremental { last_modified, .. }, raw)) => {
            let from = parse_time(&last_modified, &raw)?;
            incremental(ctx, report, from, now).await
        }
    }
}

async fn save(ctx: &Ctx<'_>, state: &NvdState) -> Result<(), SyncError> {
    ctx.set_state(Feed::Nvd, state).await
}

async fn import(ctx: &Ctx<'_>, url: &str, path: &Path, report: &mut FeedReport) -> Result<(), SyncError> {
    let done = vulndb::import::nvd_file(ctx.store, path).await.map_err(|source| SyncError::Import {
        url: url.to_owned(),
        path: path.to_owned(),
        source,
    })?;
    report.read += done.read;
    report.written += done.written;
    tracing::info!(url, read = done.read, written = done.written, "imported");
    Ok(())
}

/// The first sync: the yearly feed files from `from` to the current year, recording
/// each year when it is in; then the switch to incremental.
async fn years(ctx: &Ctx<'_>, report: &mut FeedReport, from: i32, started: OffsetDateTime) -> Result<(), SyncError> {
    let base = ctx.opts.nvd_feed_base.trim_end_matches('/');
    let current = OffsetDateTime::now_utc().year();
    let started_at = stamp(started);
    for year in from..=current {
        let url = format!("{base}/nvdcve-2.0-{year}.json.gz");
        let get = Get { not_found_ok: true, ..Get::new(&url, format!("nvd-nvdcve-2.0-{year}.json.gz")) };
        match ctx.dl.get(&get).await? {
            Outcome::NotFound => {
                tracing::warn!(url, "no feed file for this year: skipped");
                report.skipped.push(url.clone());
            }
            Outcome::Fetched(f) => {
                report.files_fetched += usize::from(!f.reused);
                import(ctx, &url, &f.path, report).await?;
                ctx.dl.discard(&f).await;
            }
            Outcome::NotModified => {
                return Err(SyncError::BadResponse { url, message: "304 to an unconditional request".into() });
            }
        }
        let synced_at = stamp(OffsetDateTime::now_utc());
        save(ctx, &NvdState::Years { done_through: year, started_at: started_at.clone(), synced_at }).await?;
    }
    let synced_at = Some(stamp(OffsetDateTime::now_utc()));
    save(ctx, &NvdState::Incremental { last_modified: api_time(started - FEED_LAG), synced_at }).await?;
    tracing::info!("NVD feed files are in: later syncs use the API");
    Ok(())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PageHeader {
    total_results: u64,
}

async fn page_header(url: &str, path: &Path) -> Result<PageHeader, SyncError> {
    let p = path.to_owned();
    let read = tokio::task::spawn_blocking(move || -> Result<PageHeader, String> {
        let file = std::fs::File::open(&p).map_err(|e| e.to_string())?;
        serde_json::from_reader(std::io::BufReader::with_capacity(1 << 16, file)).map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| e.to_string())
    .and_then(|r| r);
    read.map_err(|message| SyncError::BadResponse {
        url: url.to_owned(),
        message: format!("not an API page: {message}"),
    })
}

/// Spaces NVD API requests by the configured pause.
struct Pacer {
    pause: Duration,
    last: Option<Instant>,
}

impl Pacer {
    async fn wait(&mut self) {
        if let Some(last) = self.last {
            let due = last + self.pause;
            if due > Instant::now() {
                tokio::time::sleep_until(due.into()).await;
            }
        }
        self.last = Some(Instant::now());
    }
}

/// Later syncs: what changed in `[from, until]`, window by window, page by page.
async fn incremental(
    ctx: &Ctx<'_>,
    report: &mut FeedReport,
    from: OffsetDateTime,
    until: OffsetDateTime,
) -> Result<(), SyncError> {
    let api = reqwest::Url::parse(&ctx.opts.nvd_api)
        .map_err(|e| SyncError::BadUrl { url: ctx.opts.nvd_api.clone(), message: e.to_string() })?;
    let mut pacer = Pacer { pause: ctx.opts.nvd_pause, last: None };
    let headers: Vec<(&'static str, String)> = ctx.opts.nvd_api_key.iter().map(|k| ("apiKey", k.clone())).collect();
    for (start, end) in windows(from, until) {
        let (start_text, end_text) = (api_time(start), api_time(end));
        let tag: String = start_text.chars().filter(|c| c.is_ascii_digit()).take(14).collect();
        let mut index = 0u64;
        loop {
            let mut url = api.clone();
            url.query_pairs_mut()
                .append_pair("lastModStartDate", &start_text)
                .append_pair("lastModEndDate", &end_text)
                .append_pair("startIndex", &index.to_string())
                .append_pair("resultsPerPage", &PAGE_SIZE.to_string());
            let url = url.to_string();
            pacer.wait().await;
            let get = Get { headers: headers.clone(), ..Get::new(&url, format!("nvd-api-{tag}-{index}.json")) };
            let Outcome::Fetched(f) = ctx.dl.get(&get).await? else {
                return Err(SyncError::BadResponse { url, message: "no page".into() });
            };
            report.files_fetched += usize::from(!f.reused);
            let total = page_header(&url, &f.path).await?.total_results;
            let read_before = report.read;
            import(ctx, &url, &f.path, report).await?;
            ctx.dl.discard(&f).await;
            let on_page = (report.read - read_before) as u64;
            index += on_page;
            if index >= total {
                break;
            }
            if on_page == 0 {
                return Err(SyncError::BadResponse {
                    url,
                    message: format!("an empty page at startIndex {index} of {total} results"),
                });
            }
        }
        save(
            ctx,
            &NvdState::Incremental { last_modified: end_text, synced_at: Some(stamp(OffsetDateTime::now_utc())) },
        )
        .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    #[test]
    fn api_dates() {
        assert_eq!(api_time(datetime!(2026-11-01 00:00:00.123456 UTC)), "2026-11-01T00:00:00.123Z");
        assert_eq!(api_time(datetime!(2026-11-01 02:00 +02:00)), "2026-11-01T00:00:00.000Z");
    }

    #[test]
    fn windows_are_at_most_120_days_and_contiguous() {
        let from = datetime!(2025-01-01 00:00 UTC);
        let until = datetime!(2026-11-22 12:00 UTC);
        let w = windows(from, until);
        assert_eq!(w.first().map(|w| w.0), Some(from));
        assert_eq!(w.last().map(|w| w.1), Some(until));
        assert!(w.iter().all(|(s, e)| s < e && *e - *s <= MAX_WINDOW));
        assert!(w.windows(2).all(|p| p[0].1 == p[1].0));
        assert_eq!(w.len(), 6);
        assert!(windows(until, until).is_empty());
        assert!(windows(until, from).is_empty());
    }

    #[test]
    fn state_round_trips() {
        let s: NvdState = serde_json::from_str(
            r#"{"mode":"years","done_through":2014,"started_at":"2026-11-22T00:00:00Z","synced_at":"x"}"#,
        )
        .unwrap();
        assert!(matches!(s, NvdState::Years { done_through: 2014, .. }));
        let s = NvdState::Incremental { last_modified: "2026-11-01T00:00:00.000Z".into(), synced_at: None };
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"mode":"incremental","last_modified":"2026-11-01T00:00:00.000Z"}"#
        );
    }
}
