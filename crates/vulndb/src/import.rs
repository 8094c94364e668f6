//! Importing feed files into the store, in batches of one transaction each: a file
//! that fails part-way leaves the batches before the failure committed and nothing of
//! the failed batch.

use std::io::BufRead;
use std::path::Path;

use model::CveRecord;
use store::cve::{CapecRow, CweRow, EpssRow, KevRow, StoredCve};
use store::{Store, StoreError};

use crate::FeedError;
use crate::nvd::read_nvd;
use crate::store_rows::{from_cve_search, into_stored};

/// Records per transaction.
pub const BATCH: usize = 1000;
/// Batches written in one transaction by a bulk NVD import. Each commit writes every page
/// its batches changed; the indexes' pages are spread over the whole file, so one commit
/// a batch wrote most of them again and again: the synthetic 300k import wrote 13.9 GB
/// and took 70.6 s at one batch a commit, 4.9 GB and 39.9–43.3 s at 16 (8: 43.1–44.5 s,
/// 64: 40.0 s), with the same peak RSS (docs/PERFORMANCE.md).
pub const BATCHES_PER_COMMIT: usize = 16;

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Feed(#[from] FeedError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("import task failed: {0}")]
    Task(String),
}

/// What an import did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Imported {
    pub read: usize,
    pub written: usize,
}

fn open(path: &Path) -> Result<crate::FeedReader, FeedError> {
    let what = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|source| FeedError::Io { what: what.clone(), source })?;
    crate::maybe_gzip(std::io::BufReader::with_capacity(1 << 16, file)).map_err(|source| FeedError::Io { what, source })
}

/// Imports an NVD file (2.0 or 1.1, plain or gzipped), streaming: a reader thread
/// parses while this task writes batches.
pub async fn nvd_file(store: &dyn Store, path: &Path) -> Result<Imported, ImportError> {
    nvd_files(store, &[path.to_path_buf()]).await
}

/// Imports NVD files in order. One reader thread parses them one after the other while
/// this task writes ([`BATCHES_PER_COMMIT`] batches to a transaction), so the writer
/// does not wait at each file's start, nor the reader at its end. A batch never spans
/// two files: when a file fails, the files before it are committed whole, and none of
/// the failed batch is.
pub async fn nvd_files(store: &dyn Store, paths: &[std::path::PathBuf]) -> Result<Imported, ImportError> {
    nvd_sources(store, paths.iter().cloned().map(Source::File).collect()).await
}

/// Imports NVD records held in memory (2.0 or 1.1, plain or gzipped; `what` names them
/// in errors): a file of real records built into the binary.
pub async fn nvd_bytes(store: &dyn Store, what: &'static str, bytes: &'static [u8]) -> Result<Imported, ImportError> {
    nvd_sources(store, vec![Source::Bytes { what, bytes }]).await
}

/// Imports NVD files held in memory, in order, as [`nvd_files`] imports files (each
/// `(what, bytes)`: 2.0 or 1.1, plain or gzipped): the lab's own files of real records
/// (`lab::NVD_RECORDS`), built into the binary.
pub async fn nvd_bytes_all(
    store: &dyn Store,
    files: &[(&'static str, &'static [u8])],
) -> Result<Imported, ImportError> {
    nvd_sources(store, files.iter().map(|&(what, bytes)| Source::Bytes { what, bytes }).collect()).await
}

/// Where NVD records are read from.
enum Source {
    File(std::path::PathBuf),
    Bytes { what: &'static str, bytes: &'static [u8] },
}

impl Source {
    fn what(&self) -> String {
        match self {
            Source::File(path) => path.display().to_string(),
            Source::Bytes { what, .. } => (*what).to_owned(),
        }
    }

    fn open(&self) -> Result<crate::FeedReader, FeedError> {
        match self {
            Source::File(path) => open(path),
            Source::Bytes { what, bytes } => crate::maybe_gzip(std::io::Cursor::new(*bytes))
                .map_err(|source| FeedError::Io { what: (*what).to_owned(), source }),
        }
    }
}

async fn nvd_sources(store: &dyn Store, sources: Vec<Source>) -> Result<Imported, ImportError> {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<StoredCve>>(2);
    let parser = tokio::task::spawn_blocking(move || {
        let mut read = 0;
        for source in &sources {
            let what = source.what();
            let mut batch = Vec::with_capacity(BATCH);
            read += read_nvd(source.open()?, &what, |cve| {
                batch.push(into_stored(cve));
                if batch.len() >= BATCH {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    tx.blocking_send(full).map_err(|_| FeedError::format(&what, "-", "the writer stopped"))?;
                }
                Ok(())
            })?;
            if !batch.is_empty() && tx.blocking_send(batch).is_err() {
                break;
            }
        }
        Ok::<usize, FeedError>(read)
    });
    let written = store.upsert_cve_batches(&mut rx, BATCHES_PER_COMMIT).await;
    drop(rx);
    let read = parser.await.map_err(|e| ImportError::Task(e.to_string()));
    let written = written?;
    let read = read??;
    store.settle().await?;
    Ok(Imported { read, written })
}

/// Imports cve-search JSON Lines records (one per line; `#` comments and blank lines
/// skipped).
pub async fn cve_search_jsonl<R: BufRead>(
    store: &dyn Store,
    mut reader: R,
    what: &str,
) -> Result<Imported, ImportError> {
    let mut batch = Vec::with_capacity(BATCH);
    let mut result = Imported::default();
    let mut line = String::new();
    let mut n = 0usize;
    loop {
        line.clear();
        let read = std::io::Read::take(&mut reader, 16 * 1024 * 1024 + 1)
            .read_line(&mut line)
            .map_err(|source| FeedError::Io { what: what.to_owned(), source })?;
        if read == 0 {
            break;
        }
        n += 1;
        let text = line.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let record: CveRecord =
            serde_json::from_str(text).map_err(|e| FeedError::format(what, format!("line {n}"), e.to_string()))?;
        batch.push(into_stored(from_cve_search(record)));
        result.read += 1;
        if batch.len() >= BATCH {
            result.written += store.upsert_cves(&std::mem::take(&mut batch)).await?;
        }
    }
    result.written += store.upsert_cves(&batch).await?;
    Ok(result)
}

/// Imports a cve-search JSON Lines file.
pub async fn cve_search_file(store: &dyn Store, path: &Path) -> Result<Imported, ImportError> {
    let reader = open(path)?;
    cve_search_jsonl(store, reader, &path.display().to_string()).await
}

/// Replaces the KEV catalogue with a CISA KEV JSON file (plain or gzipped).
pub async fn kev_file(store: &dyn Store, path: &Path) -> Result<Imported, ImportError> {
    kev_reader(store, open(path)?).await
}

/// Replaces the KEV catalogue with a CISA KEV JSON document held in memory (plain or
/// gzipped; `what` names it in errors): the lab's copy (`lab::KEV_CATALOG`).
pub async fn kev_bytes(store: &dyn Store, what: &str, bytes: &'static [u8]) -> Result<Imported, ImportError> {
    let reader = crate::maybe_gzip(std::io::Cursor::new(bytes))
        .map_err(|source| FeedError::Io { what: what.to_owned(), source })?;
    kev_reader(store, reader).await
}

async fn kev_reader(store: &dyn Store, reader: crate::FeedReader) -> Result<Imported, ImportError> {
    let catalog = crate::kev::parse_kev(reader)?;
    let rows: Vec<KevRow> = catalog
        .entries
        .iter()
        .map(|e| KevRow { cve_id: e.cve_id.clone(), date_added: e.date_added.clone(), entry: e.to_json() })
        .collect();
    let written = store.save_kev(&rows).await?;
    Ok(Imported { read: rows.len(), written })
}

/// Upserts EPSS scores from a FIRST CSV file (plain or gzipped), in batches.
pub async fn epss_file(store: &dyn Store, path: &Path) -> Result<Imported, ImportError> {
    epss_reader(store, open(path)?).await
}

/// Upserts EPSS scores from a FIRST CSV file held in memory (plain or gzipped): the
/// lab's sample (`lab::EPSS_SAMPLE`).
pub async fn epss_bytes(store: &dyn Store, bytes: &'static [u8]) -> Result<Imported, ImportError> {
    epss_reader(store, std::io::Cursor::new(bytes)).await
}

async fn epss_reader<R: BufRead + Send + 'static>(store: &dyn Store, reader: R) -> Result<Imported, ImportError> {
    let reader = crate::epss::read_epss(reader)?;
    let date = reader.score_date.clone().unwrap_or_default();
    let mut result = Imported::default();
    let mut batch = Vec::with_capacity(BATCH * 10);
    for score in reader {
        let s = score?;
        batch.push(EpssRow { cve_id: s.cve_id, epss: s.epss, percentile: s.percentile });
        result.read += 1;
        if batch.len() >= BATCH * 10 {
            result.written += store.save_epss(&std::mem::take(&mut batch), &date).await?;
        }
    }
    result.written += store.save_epss(&batch, &date).await?;
    Ok(result)
}

/// Imports the CWE catalogue (XML): weaknesses and their related attack patterns.
pub async fn cwe_file(store: &dyn Store, path: &Path) -> Result<Imported, ImportError> {
    let weaknesses = crate::cwe::parse_cwe(open(path)?)?;
    let rows: Vec<CweRow> =
        weaknesses.iter().map(|w| CweRow { id: w.id, name: w.name.clone(), capec_ids: w.capec_ids.clone() }).collect();
    let written = store.save_cwe(&rows).await?;
    Ok(Imported { read: rows.len(), written })
}

/// Imports CAPEC attack patterns from CAPEC XML or STIX 2.1 JSON bundles (by content).
pub async fn capec_file(store: &dyn Store, path: &Path) -> Result<Imported, ImportError> {
    let mut reader = open(path)?;
    let starts_with_xml = reader
        .fill_buf()
        .map_err(|source| FeedError::Io { what: path.display().to_string(), source })?
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        == Some(&b'<');
    let patterns =
        if starts_with_xml { crate::capec::parse_capec_xml(reader)? } else { crate::capec::parse_capec_stix(reader)? };
    let rows: Vec<CapecRow> = patterns
        .iter()
        .map(|p| CapecRow {
            id: p.id,
            record: crate::capec::cve_search_json(p),
            related_weaknesses: p.related_weaknesses.clone(),
        })
        .collect();
    let written = store.save_capec(&rows).await?;
    Ok(Imported { read: rows.len(), written })
}

/// The largest advisory file read, decompressed (the Debian tracker's whole export is
/// some tens of MiB).
pub const MAX_ADVISORY_FILE: u64 = 256 << 20;
/// The most files one advisory import reads.
pub const MAX_ADVISORY_FILES: usize = 200_000;
/// How deep an advisory import descends into a directory.
const ADVISORY_DEPTH: usize = 4;

/// Imports vendors' and distributions' advisories (`crate::advisory`, every format it
/// reads, recognised by content): each path is a file (plain or gzipped) or a directory
/// whose `.json`, `.xml` and `.gz` files are read in name order, four levels deep. A
/// statement replaces the one with its CVE and key (`advisory::Statement::key`). `read`
/// counts the statements read, `written` those given to the store. A file that does not
/// read fails the import, naming the file, before anything is written.
pub async fn advisory_files(store: &dyn Store, paths: &[std::path::PathBuf]) -> Result<Imported, ImportError> {
    let paths = paths.to_vec();
    let rows = tokio::task::spawn_blocking(move || read_advisories(&paths))
        .await
        .map_err(|e| ImportError::Task(e.to_string()))??;
    let mut written = 0;
    for batch in rows.chunks(BATCH) {
        written += store.save_advisories(batch).await?;
    }
    Ok(Imported { read: rows.len(), written })
}

/// Imports advisories held in memory (`what` names them in errors): one file's content.
pub async fn advisory_bytes(store: &dyn Store, what: &str, bytes: &[u8]) -> Result<Imported, ImportError> {
    let rows = advisory_rows(what, bytes)?;
    let written = store.save_advisories(&rows).await?;
    Ok(Imported { read: rows.len(), written })
}

/// Imports advisory files held in memory, `(name, content)`; with `skip_unreadable` a
/// file that is not an advisory (an archive of a publisher's whole site holds others)
/// is left out and named in the answer, else it fails the import before anything is
/// written.
pub async fn advisory_texts(
    store: &dyn Store,
    files: &[(String, Vec<u8>)],
    skip_unreadable: bool,
) -> Result<(Imported, Vec<String>), ImportError> {
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for (name, content) in files {
        match advisory_rows(name, content) {
            Ok(more) => rows.extend(more),
            Err(e) if skip_unreadable => {
                tracing::debug!(file = name, error = %e, "not an advisory: skipped");
                skipped.push(name.clone());
            }
            Err(e) => return Err(e.into()),
        }
    }
    let mut written = 0;
    for batch in rows.chunks(BATCH) {
        written += store.save_advisories(batch).await?;
    }
    Ok((Imported { read: rows.len(), written }, skipped))
}

/// Imports a bundle of advisory files: a JSON object (plain or gzipped) of file name →
/// the file's text, each read as [`advisory_files`] reads a file (`what` names the bundle).
pub async fn advisory_bundle(store: &dyn Store, what: &str, bytes: &'static [u8]) -> Result<Imported, ImportError> {
    let mut text = Vec::new();
    let reader = crate::maybe_gzip(std::io::BufReader::new(bytes))
        .map_err(|source| FeedError::Io { what: what.to_owned(), source })?;
    std::io::Read::read_to_end(&mut std::io::Read::take(reader, MAX_ADVISORY_FILE * 4), &mut text)
        .map_err(|source| FeedError::Io { what: what.to_owned(), source })?;
    let files: std::collections::BTreeMap<String, String> = serde_json::from_slice(&text)
        .map_err(|e| FeedError::format(what, "bundle", format!("not a JSON object of file texts: {e}")))?;
    let files: Vec<(String, Vec<u8>)> = files.into_iter().map(|(name, text)| (name, text.into_bytes())).collect();
    Ok(advisory_texts(store, &files, false).await?.0)
}

fn advisory_rows(what: &str, bytes: &[u8]) -> Result<Vec<store::cve::AdvisoryRow>, FeedError> {
    crate::advisory::parse_any(what, bytes)?
        .iter()
        .map(|s| s.row().map_err(|e| FeedError::format(what, "statement", e.to_string())))
        .collect()
}

fn read_advisories(paths: &[std::path::PathBuf]) -> Result<Vec<store::cve::AdvisoryRow>, FeedError> {
    let mut files = Vec::new();
    for path in paths {
        advisory_files_in(path, 0, &mut files)?;
    }
    let mut rows = Vec::new();
    for file in files {
        let what = file.display().to_string();
        let io = |source| FeedError::Io { what: what.clone(), source };
        let mut bytes = Vec::new();
        let reader = open(&file)?;
        std::io::Read::read_to_end(&mut std::io::Read::take(reader, MAX_ADVISORY_FILE + 1), &mut bytes).map_err(io)?;
        if bytes.len() as u64 > MAX_ADVISORY_FILE {
            return Err(FeedError::format(what, "size", format!("larger than {MAX_ADVISORY_FILE} bytes")));
        }
        rows.extend(advisory_rows(&what, &bytes)?);
    }
    Ok(rows)
}

/// The advisory files at `path`: itself, or a directory's files by name, descending.
fn advisory_files_in(path: &Path, depth: usize, out: &mut Vec<std::path::PathBuf>) -> Result<(), FeedError> {
    let io = |source| FeedError::Io { what: path.display().to_string(), source };
    if !std::fs::metadata(path).map_err(io)?.is_dir() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    if depth >= ADVISORY_DEPTH {
        return Ok(());
    }
    let mut entries: Vec<std::path::PathBuf> =
        std::fs::read_dir(path).map_err(io)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>().map_err(io)?;
    entries.sort();
    for entry in entries {
        let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.starts_with('.') {
            continue;
        }
        if entry.is_dir() {
            advisory_files_in(&entry, depth + 1, out)?;
        } else if [".json", ".xml", ".gz"].iter().any(|ext| name.ends_with(ext)) {
            if out.len() >= MAX_ADVISORY_FILES {
                return Err(FeedError::format(
                    path.display().to_string(),
                    "files",
                    format!("more than {MAX_ADVISORY_FILES} advisory files"),
                ));
            }
            out.push(entry);
        }
    }
    Ok(())
}

/// The built-in sample records for the demo and mock mode.
pub const SAMPLE: &str = include_str!("../sample/cves.jsonl");
/// The CVE mock mode falls back to.
pub const SAMPLE_CVE: &str = "CVE-2021-44228";

/// Loads the built-in sample.
pub async fn sample(store: &dyn Store) -> Result<Imported, ImportError> {
    cve_search_jsonl(store, SAMPLE.as_bytes(), "built-in sample").await
}
