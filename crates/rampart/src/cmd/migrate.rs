//! `rampart migrate`: a database's schema brought up to date (`--to` alone), or a SQLite
//! database copied whole into an empty PostgreSQL one.

use anyhow::{Context as _, Result};

use crate::common::open;

#[derive(clap::Args)]
pub(crate) struct Args {
    /// The SQLite database to copy: sqlite://PATH or a file path.
    #[arg(long)]
    from: Option<String>,
    /// The database: postgres://USER@HOST:PORT/DB, or a SQLite one when migrating
    /// its schema alone (migrated on open).
    #[arg(long)]
    to: String,
}

/// What `migrate` does: the schema of one database, or a copy between two, checked.
enum Settings {
    Schema { to: String },
    Copy { from: String, to: String },
}

impl Args {
    fn settings(self) -> Result<Settings> {
        let Some(from) = self.from else { return Ok(Settings::Schema { to: self.to }) };
        let to = self.to;
        anyhow::ensure!(!store::is_postgres(&from), "--from must be a SQLite database (sqlite://PATH or a path)");
        anyhow::ensure!(store::is_postgres(&to), "--to must be a PostgreSQL database (postgres://…)");
        let path = from.strip_prefix("sqlite://").or_else(|| from.strip_prefix("sqlite:")).unwrap_or(&from);
        anyhow::ensure!(std::path::Path::new(path).is_file(), "{from}: no such database file");
        Ok(Settings::Copy { from, to })
    }
}

pub(crate) async fn run(args: Args) -> Result<()> {
    match args.settings()? {
        Settings::Copy { from, to } => copy(&from, &to).await,
        Settings::Schema { to } => {
            // Opening applies the embedded migrations (under an advisory lock on PostgreSQL).
            open(&to).await.with_context(|| format!("migrating {}", store::redact_url(&to)))?;
            say!("the schema of {} is up to date", store::redact_url(&to));
            Ok(())
        }
    }
}

/// `rampart migrate --from sqlite://… --to postgres://…`.
async fn copy(from: &str, to: &str) -> Result<()> {
    let source = store::SqliteStore::open(from).await.with_context(|| format!("opening {from}"))?;
    let target = store::PgStore::open(to).await.context("opening the PostgreSQL database")?;
    let started = std::time::Instant::now();
    let copied = store::copy::sqlite_to_postgres(&source, &target).await?;
    let rows: u64 = copied.iter().map(|(_, n)| n).sum();
    say!("{:<22} {:>10}", "TABLE", "ROWS");
    for (table, n) in &copied {
        say!("{table:<22} {n:>10}");
    }
    say!("copied {rows} rows in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}
