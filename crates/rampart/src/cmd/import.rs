//! `rampart import …`: data files into the store — companies, vulnerability records and
//! their catalogues, incidents, fingerprints, lifecycle data.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::Subcommand;

use crate::common::open;
use crate::flags::DbArg;

#[derive(Subcommand)]
pub(crate) enum Action {
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
    /// The software vendors' and distributions' own advisories, which override NVD's
    /// matches for the versions they speak of (docs/METHODOLOGY.md): Apache httpd's
    /// per-CVE JSON, nginx's security_advisories.xml, CVE JSON 5 records (OpenSSL's), OSV
    /// records (GitHub, Ubuntu), the Debian security tracker's JSON; files or directories,
    /// plain or gzipped, each recognised by its content.
    Advisories {
        #[command(flatten)]
        db: DbArg,
        #[arg(required = true)]
        paths: Vec<PathBuf>,
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

pub(crate) async fn run(action: Action) -> Result<()> {
    match action {
        Action::Companies { db, file } => import(&db.db, "companies", vec![file]).await,
        Action::Cves { db, files } => import(&db.db, "cves", files).await,
        Action::Nvd { db, files } => import(&db.db, "nvd", files).await,
        Action::Kev { db, file } => import(&db.db, "kev", vec![file]).await,
        Action::Epss { db, file } => import(&db.db, "epss", vec![file]).await,
        Action::Cwe { db, file } => import(&db.db, "cwe", vec![file]).await,
        Action::Capec { db, files } => import(&db.db, "capec", files).await,
        Action::Advisories { db, paths } => import(&db.db, "advisories", paths).await,
        Action::Veris { db, paths } => import_veris(&db.db, &paths).await,
        Action::Fingerprints { db, dir } => import_fingerprints(&db.db, &dir).await,
        Action::Eol { db, files } => import_eol(&db.db, &files).await,
    }
}

/// The records of `files`, of the kind `kind` names (companies, cves, nvd, kev, epss,
/// cwe, capec), stored; what was read and written is said on stderr.
async fn import(db: &str, kind: &str, files: Vec<PathBuf>) -> Result<()> {
    use vulndb::import as vi;
    let store = open(db).await?;
    let started = std::time::Instant::now();
    let (mut read, mut written) = (0usize, 0usize);
    let whole = kind == "nvd" || kind == "advisories";
    if whole {
        // One reader for all the files keeps the writer busy across file boundaries.
        let done = if kind == "nvd" {
            vi::nvd_files(&*store, &files).await?
        } else {
            vi::advisory_files(&*store, &files).await?
        };
        (read, written) = (done.read, done.written);
    }
    for file in files.iter().filter(|_| !whole) {
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
        "{kind}: {} {}, {read} records read, {written} written in {secs:.1} s ({:.0} records/s)",
        files.len(),
        if kind == "advisories" { "path(s)" } else { "file(s)" },
        read as f64 / secs.max(1e-9)
    );
    Ok(())
}

/// VERIS incidents, linked to the companies they name.
async fn import_veris(db: &str, paths: &[PathBuf]) -> Result<()> {
    let store = open(db).await?;
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
