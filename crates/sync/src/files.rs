//! The single-file feeds: CISA KEV, FIRST EPSS, MITRE CWE (zipped XML) and CAPEC, and
//! the vendors' advisories (a file or a zip archive each), downloaded with conditional
//! requests.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use vulndb::import::{self, ImportError, Imported};

use crate::download::{Get, Outcome, Validators, cache_name};
use crate::{Ctx, Feed, FeedReport, SyncError, stamp};

/// The feed state of a single-file feed: the validators of the last imported download.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct FileState {
    pub url: String,
    #[serde(flatten)]
    pub validators: Validators,
    pub synced_at: String,
}

fn url_of<'a>(ctx: &Ctx<'a>, feed: Feed) -> &'a str {
    let o = ctx.opts;
    match feed {
        Feed::Kev => &o.kev_url,
        Feed::Epss => &o.epss_url,
        Feed::Cwe => &o.cwe_url,
        Feed::Capec => &o.capec_url,
        Feed::Nvd | Feed::Advisories => &o.nvd_feed_base,
    }
}

async fn import_file(ctx: &Ctx<'_>, feed: Feed, path: &Path) -> Result<Imported, ImportError> {
    let store = ctx.store;
    match feed {
        Feed::Kev => import::kev_file(store, path).await,
        Feed::Epss => import::epss_file(store, path).await,
        Feed::Cwe => import::cwe_file(store, path).await,
        Feed::Capec => import::capec_file(store, path).await,
        Feed::Nvd => import::nvd_file(store, path).await,
        Feed::Advisories => import::advisory_files(store, &[path.to_owned()]).await,
    }
}

pub(crate) async fn sync(ctx: &Ctx<'_>, feed: Feed, report: &mut FeedReport) -> Result<(), SyncError> {
    let url = url_of(ctx, feed);
    let previous = match ctx.state(feed).await? {
        None => None,
        Some(raw) => match serde_json::from_str::<FileState>(&raw) {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::warn!(%feed, state = raw, error = %e, "feed state not understood: downloading afresh");
                None
            }
        },
    };
    // Validators of another URL say nothing about this one.
    let validators = previous.filter(|p| p.url == url).map(|p| p.validators).filter(|v| *v != Validators::default());
    let get = Get { if_changed_since: validators.as_ref(), ..Get::new(url, cache_name(feed.as_str(), url)) };
    let fetched = match ctx.dl.get(&get).await? {
        Outcome::NotModified => {
            tracing::info!(%feed, url, "unchanged since the last sync");
            report.unchanged = true;
            return Ok(());
        }
        Outcome::NotFound => {
            let status = reqwest::StatusCode::NOT_FOUND;
            return Err(SyncError::Status { url: url.to_owned(), status, detail: String::new() });
        }
        Outcome::Fetched(f) => f,
    };
    report.files_fetched += usize::from(!fetched.reused);
    let file = if feed == Feed::Cwe { cwe_xml(ctx, url, &fetched.path).await? } else { fetched.path.clone() };
    let done = import_file(ctx, feed, &file).await.map_err(|source| SyncError::Import {
        url: url.to_owned(),
        path: file.clone(),
        source,
    })?;
    report.read += done.read;
    report.written += done.written;
    tracing::info!(%feed, url, read = done.read, written = done.written, "imported");
    let state = FileState {
        url: url.to_owned(),
        validators: fetched.validators.clone(),
        synced_at: stamp(OffsetDateTime::now_utc()),
    };
    ctx.set_state(feed, &state).await
}

/// The feed state of the advisories: one [`FileState`] per URL.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct AdvisoriesState {
    files: Vec<FileState>,
}

/// An archive entry: its name and content.
type Entry = (String, Vec<u8>);

/// The most entries read from one advisory archive.
const MAX_ARCHIVE_ENTRIES: usize = 200_000;

/// Each advisory URL, downloaded when it changed and imported: a zip archive's `.json`
/// and `.xml` entries that are advisories (the rest of a repository is left out), or the
/// file itself, which must be one. One URL failing fails the feed after the others ran.
pub(crate) async fn sync_advisories(ctx: &Ctx<'_>, report: &mut FeedReport) -> Result<(), SyncError> {
    let feed = Feed::Advisories;
    let mut state: AdvisoriesState = match ctx.state(feed).await? {
        None => AdvisoriesState::default(),
        Some(raw) => serde_json::from_str(&raw).unwrap_or_else(|e| {
            tracing::warn!(%feed, state = raw, error = %e, "feed state not understood: downloading afresh");
            AdvisoriesState::default()
        }),
    };
    let mut first_error = None;
    let mut not_modified = 0;
    for (i, url) in ctx.opts.advisory_urls.iter().enumerate() {
        let validators = state
            .files
            .iter()
            .find(|f| f.url == *url)
            .map(|f| f.validators.clone())
            .filter(|v| *v != Validators::default());
        let get =
            Get { if_changed_since: validators.as_ref(), ..Get::new(url, cache_name(&format!("advisories-{i}"), url)) };
        let done = match ctx.dl.get(&get).await {
            Ok(Outcome::NotModified) => {
                tracing::info!(%feed, url, "unchanged since the last sync");
                not_modified += 1;
                continue;
            }
            Ok(Outcome::NotFound) => {
                let status = reqwest::StatusCode::NOT_FOUND;
                Err(SyncError::Status { url: url.to_owned(), status, detail: String::new() })
            }
            Ok(Outcome::Fetched(fetched)) => {
                report.files_fetched += usize::from(!fetched.reused);
                import_advisories(ctx, url, &fetched.path).await.map(|(imported, skipped)| (imported, skipped, fetched))
            }
            Err(e) => Err(e),
        };
        match done {
            Ok((imported, skipped, fetched)) => {
                report.read += imported.read;
                report.written += imported.written;
                tracing::info!(%feed, url, read = imported.read, skipped, "imported");
                state.files.retain(|f| f.url != *url);
                state.files.push(FileState {
                    url: url.to_owned(),
                    validators: fetched.validators.clone(),
                    synced_at: stamp(OffsetDateTime::now_utc()),
                });
                ctx.set_state(feed, &state).await?;
            }
            Err(e) => {
                tracing::error!(%feed, url, error = %e, "advisories failed");
                first_error.get_or_insert(e);
            }
        }
    }
    // Every source answered 304: the report says so, as a single-file feed's does.
    report.unchanged = not_modified > 0 && not_modified == ctx.opts.advisory_urls.len();
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Imports one advisory download: the advisories of a zip archive, or the file. Returns
/// what was imported and how many archive entries were not advisories.
async fn import_advisories(ctx: &Ctx<'_>, url: &str, path: &Path) -> Result<(Imported, usize), SyncError> {
    let import_error = |source| SyncError::Import { url: url.to_owned(), path: path.to_owned(), source };
    let (u, p, limit) = (url.to_owned(), path.to_owned(), ctx.dl.max_bytes());
    let entries = tokio::task::spawn_blocking(move || archive_entries(&u, &p, limit))
        .await
        .map_err(|e| SyncError::Archive { url: url.to_owned(), message: format!("extraction task failed: {e}") })??;
    match entries {
        Some(files) => {
            let (imported, skipped) = import::advisory_texts(ctx.store, &files, true).await.map_err(import_error)?;
            Ok((imported, skipped.len()))
        }
        None => Ok((import::advisory_files(ctx.store, &[path.to_owned()]).await.map_err(import_error)?, 0)),
    }
}

/// The `.json` and `.xml` entries of a zip archive at `path` (their names and contents,
/// at most `limit` bytes in all and [`MAX_ARCHIVE_ENTRIES`] of them), or `None` when the
/// file is not a zip archive.
fn archive_entries(url: &str, path: &Path, limit: u64) -> Result<Option<Vec<Entry>>, SyncError> {
    let archive_error = |message: String| SyncError::Archive { url: url.to_owned(), message };
    let mut file =
        std::fs::File::open(path).map_err(|source| SyncError::Io { path: path.to_owned(), what: "opening", source })?;
    let mut magic = [0u8; 4];
    let n = file.read(&mut magic).map_err(|source| SyncError::Io { path: path.to_owned(), what: "reading", source })?;
    if n < 4 || magic != *b"PK\x03\x04" {
        return Ok(None);
    }
    let mut zip = zip::ZipArchive::new(file).map_err(|e| archive_error(e.to_string()))?;
    let (mut out, mut total) = (Vec::new(), 0u64);
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| archive_error(e.to_string()))?;
        let name = entry.name().to_owned();
        let lower = name.to_ascii_lowercase();
        if entry.is_dir() || !(lower.ends_with(".json") || lower.ends_with(".xml")) {
            continue;
        }
        if out.len() >= MAX_ARCHIVE_ENTRIES {
            return Err(archive_error(format!("more than {MAX_ARCHIVE_ENTRIES} advisory files")));
        }
        let mut content = Vec::new();
        (&mut entry)
            .take(limit.saturating_sub(total).saturating_add(1))
            .read_to_end(&mut content)
            .map_err(|e| archive_error(format!("extracting {name}: {e}")))?;
        total += content.len() as u64;
        if total > limit {
            return Err(archive_error(format!("the advisory files are larger than the limit of {limit} bytes")));
        }
        out.push((name, content));
    }
    Ok(Some(out))
}

/// The CWE XML to import from a download: the file itself unless it is a zip archive
/// (by its magic bytes), else its `.xml` entry extracted to the cache, bounded in size.
async fn cwe_xml(ctx: &Ctx<'_>, url: &str, download: &Path) -> Result<PathBuf, SyncError> {
    let (url, download) = (url.to_owned(), download.to_owned());
    let (cache, limit) = (ctx.dl.cache_dir().to_owned(), ctx.dl.max_bytes());
    let u = url.clone();
    tokio::task::spawn_blocking(move || extract_xml(&u, &download, &cache, limit))
        .await
        .map_err(|e| SyncError::Archive { url, message: format!("extraction task failed: {e}") })?
}

fn extract_xml(url: &str, download: &Path, cache: &Path, limit: u64) -> Result<PathBuf, SyncError> {
    let archive_error = |message: String| SyncError::Archive { url: url.to_owned(), message };
    let mut file = std::fs::File::open(download).map_err(|source| SyncError::Io {
        path: download.to_owned(),
        what: "opening",
        source,
    })?;
    let mut magic = [0u8; 4];
    let n =
        file.read(&mut magic).map_err(|source| SyncError::Io { path: download.to_owned(), what: "reading", source })?;
    if n < 4 || magic != *b"PK\x03\x04" {
        return Ok(download.to_owned());
    }
    let mut zip = zip::ZipArchive::new(file).map_err(|e| archive_error(e.to_string()))?;
    let index = (0..zip.len())
        .find(|&i| zip.name_for_index(i).is_some_and(|n| n.to_ascii_lowercase().ends_with(".xml")))
        .ok_or_else(|| archive_error("no .xml file in the archive".into()))?;
    let mut entry = zip.by_index(index).map_err(|e| archive_error(e.to_string()))?;
    let name = Path::new(entry.name()).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let out_path = cache.join(cache_name("cwe", &name));
    let mut out = std::fs::File::create(&out_path).map_err(|source| SyncError::Io {
        path: out_path.clone(),
        what: "creating",
        source,
    })?;
    let copied = std::io::copy(&mut (&mut entry).take(limit.saturating_add(1)), &mut out)
        .map_err(|e| archive_error(format!("extracting {name}: {e}")))?;
    if copied > limit {
        drop(out);
        let _ = std::fs::remove_file(&out_path);
        return Err(archive_error(format!("{name} is larger than the limit of {limit} bytes")));
    }
    out.flush().map_err(|source| SyncError::Io { path: out_path.clone(), what: "writing", source })?;
    tracing::info!(url, entry = name, path = %out_path.display(), bytes = copied, "extracted");
    Ok(out_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zip_of(name: &str, body: &[u8]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        w.start_file(name, zip::write::SimpleFileOptions::default()).unwrap();
        w.write_all(body).unwrap();
        w.finish().unwrap().into_inner()
    }

    #[test]
    fn extracts_the_xml_entry_within_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let zipped = dir.path().join("cwe-a.zip");
        std::fs::write(&zipped, zip_of("dir/cwec_v9.xml", b"<Weakness_Catalog/>")).unwrap();
        let out = extract_xml("u", &zipped, dir.path(), 100).unwrap();
        assert_eq!(out, dir.path().join("cwe-cwec_v9.xml"));
        assert_eq!(std::fs::read(&out).unwrap(), b"<Weakness_Catalog/>");

        let err = extract_xml("http://x/c.zip", &zipped, dir.path(), 5).unwrap_err().to_string();
        assert!(err.contains("http://x/c.zip") && err.contains("limit of 5 bytes"), "{err}");

        std::fs::write(&zipped, zip_of("readme.txt", b"x")).unwrap();
        assert!(extract_xml("u", &zipped, dir.path(), 100).unwrap_err().to_string().contains("no .xml"));

        let plain = dir.path().join("plain.xml");
        std::fs::write(&plain, b"<Weakness_Catalog/>").unwrap();
        assert_eq!(extract_xml("u", &plain, dir.path(), 100).unwrap(), plain);
    }
}
