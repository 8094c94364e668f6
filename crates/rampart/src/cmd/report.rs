//! `rampart report SOCIAL_ID`: the scorecard as one document to send — HTML (self
//! contained) or PDF (the same HTML printed by headless Chromium).
//!
//! The document is built from the API's own answers (`api::trusted_router`, in-process,
//! no key: the operator reads its own database), exactly as the web app's download is.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use clap::ValueEnum;
use model::SocialId;

use crate::flags::DbArg;

#[derive(clap::Args)]
pub(crate) struct Args {
    social_id: String,
    #[command(flatten)]
    db: DbArg,
    #[arg(long, value_enum, default_value = "html")]
    format: ReportFormat,
    /// Where to write it (default: rampart-report-SOCIAL_ID.html or .pdf here).
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
pub(crate) enum ReportFormat {
    Html,
    Pdf,
}

/// What `rampart report` runs on: the company, checked, and the file it writes.
struct Settings {
    db: String,
    social_id: SocialId,
    format: ReportFormat,
    path: PathBuf,
}

impl Args {
    fn settings(self) -> Result<Settings> {
        let social_id = SocialId::parse(&self.social_id).map_err(|e| anyhow::anyhow!("social_id: {e}"))?;
        let stem = web::report::file_stem(social_id.as_str());
        let extension = match self.format {
            ReportFormat::Html => "html",
            ReportFormat::Pdf => "pdf",
        };
        let path = self.out.unwrap_or_else(|| PathBuf::from(format!("rampart-report-{stem}.{extension}")));
        Ok(Settings { db: self.db.db, social_id, format: self.format, path })
    }
}

/// Time Chromium gets to print the document.
const PRINT_DEADLINE: Duration = Duration::from_secs(60);

pub(crate) async fn run(args: Args) -> Result<()> {
    let Settings { db, social_id, format, path } = args.settings()?;
    let store = crate::common::open(&db).await?;
    let state = api::AppState::with_store(store, api::Config::default());
    let api = web::Api::new(api::trusted_router(state), None, None);
    let html = web::report::document(&api, web::Audience::Underwriter, social_id.as_str())
        .await
        .map_err(|f| anyhow::anyhow!("company {social_id}: {}", f.message))?;
    match format {
        ReportFormat::Html => {
            std::fs::write(&path, html).with_context(|| format!("writing {}", path.display()))?;
            say!("{}", path.display());
        }
        ReportFormat::Pdf => {
            print_pdf(&html, &path).await?;
            say!("{}", path.display());
        }
    }
    Ok(())
}

/// The browser that prints: `RAMPART_CHROMIUM`, else the first of the usual names on
/// the PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("RAMPART_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

/// Prints `html` to `out` with headless Chromium, offline: the document loads nothing
/// (its style is inline, its chart SVG), and Chromium's own background traffic is off.
async fn print_pdf(html: &str, out: &Path) -> Result<()> {
    let Some(browser) = chromium() else {
        bail!(
            "--format pdf needs Chromium (Debian: apt-get install chromium; or set RAMPART_CHROMIUM); --format html needs nothing"
        );
    };
    let dir = tempfile::tempdir().context("a temporary folder for Chromium")?;
    let page = dir.path().join("report.html");
    std::fs::write(&page, html).context("writing the report for Chromium")?;
    let target = std::path::absolute(out).with_context(|| format!("{}", out.display()))?;
    let _ = std::fs::remove_file(&target);
    let mut command = tokio::process::Command::new(&browser);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--no-pdf-header-footer",
        ])
        .arg(format!("--user-data-dir={}", dir.path().join("profile").display()))
        .arg(format!("--print-to-pdf={}", target.display()))
        .arg(format!("file://{}", page.display()))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let child = command.spawn().with_context(|| format!("starting {}", browser.display()))?;
    let done = tokio::time::timeout(PRINT_DEADLINE, child.wait_with_output())
        .await
        .with_context(|| format!("{} did not print within {} s", browser.display(), PRINT_DEADLINE.as_secs()))??;
    let printed = std::fs::metadata(&target).map(|m| m.len()).unwrap_or(0);
    if !done.status.success() || printed == 0 {
        let said = String::from_utf8_lossy(&done.stderr);
        bail!(
            "{} did not print the report ({}): {}",
            browser.display(),
            done.status,
            crate::common::clip(said.trim(), 400)
        );
    }
    Ok(())
}
