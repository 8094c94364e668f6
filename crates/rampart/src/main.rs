//! `rampart`: the one binary. Wiring only: parse the command line, set up logging, hand
//! over to the subcommand's module in `cmd/`, which checks its flags, opens the store
//! and calls the library crates.

#[macro_use]
mod common;
mod cmd;
mod flags;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "rampart", version, about = "Open, explainable cyber-risk ratings")]
struct Cli {
    /// How log lines are written to stderr: text, or one JSON object per line.
    #[arg(long, global = true, env = "RAMPART_LOG_FORMAT", value_enum, default_value = "text")]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the API.
    Serve(cmd::serve::Args),
    /// Run scan jobs from the store's queue until Ctrl-C.
    Worker(cmd::worker::Args),
    /// The job queue: list jobs, retry a dead one, cancel one.
    Jobs {
        #[command(subcommand)]
        action: cmd::jobs::Action,
    },
    /// Disputes of findings and removals of assets that companies asked for: list them,
    /// accept or reject them (the company is re-rated with the reason).
    Disputes {
        #[command(subcommand)]
        action: cmd::disputes::Action,
    },
    /// Subsidiary links that keys asked for and an operator must approve.
    Subsidiaries {
        #[command(subcommand)]
        action: cmd::subsidiaries::Action,
    },
    /// Footprint additions that keys asked for (another company's on evidence) and an
    /// operator must approve.
    Footprint {
        #[command(subcommand)]
        action: cmd::subsidiaries::Action,
    },
    /// Webhooks: where a company's events (and its subsidiaries') are delivered, signed.
    Webhooks {
        #[command(subcommand)]
        action: cmd::webhooks::Action,
    },
    /// What a company's own data says, beside the import file: its DKIM selectors and
    /// its rescan cadence.
    Companies {
        #[command(subcommand)]
        action: cmd::companies::Action,
    },
    /// How current the ratings are: the queue by kind, rating ages, the next scheduled
    /// rescans, dead jobs, feed ages.
    Status(cmd::status::Args),
    /// Manage API keys.
    Keys {
        #[command(subcommand)]
        action: cmd::keys::Action,
    },
    /// Organisations: they hold keys and portfolios.
    Orgs {
        #[command(subcommand)]
        action: cmd::orgs::Action,
    },
    /// Import data files.
    Import {
        #[command(subcommand)]
        action: cmd::import::Action,
    },
    /// Serve every path with sample responses; any non-empty apikey is accepted.
    Mock(cmd::mock::Args),
    /// Print the OpenAPI document.
    Openapi,
    /// Scan one domain without a database: discovery and every probe so far.
    Scan(cmd::scan::Args),
    /// Run one group of the scanner's probes on one target, without a database.
    Probe {
        #[command(subcommand)]
        action: cmd::probe::Action,
    },
    /// The lab: a simulated internet on 127.0.0.0/8.
    Lab {
        #[command(subcommand)]
        action: cmd::lab::Action,
    },
    /// Download the vulnerability feeds and import them (NVD API key: env NVD_API_KEY).
    Sync(cmd::sync::Args),
    /// Why a company's score is what it is: every component, every penalty, every cap,
    /// with the findings behind them.
    Explain(cmd::explain::Args),
    /// Recompute the history of computed ratings under a methodology version this build
    /// implements (each rating keeps its time and the assets its scan assessed).
    Rescore(cmd::rescore::Args),
    /// Bring a database's schema up to date (--to alone: what a deployment runs before
    /// starting new processes), or copy everything in a SQLite database into an empty
    /// PostgreSQL one (companies, assets, findings with first_seen, rating history, keys
    /// and usage, CVEs, incidents, jobs), in one transaction.
    Migrate(cmd::migrate::Args),
    /// Export a company's SBOM (the components its scans detected).
    Sbom(cmd::sbom::Args),
    /// A company's scorecard as one document to send: HTML, or PDF (printed by headless
    /// Chromium). Read from the database directly; no key needed.
    Report(cmd::report::Args),
    /// The whole pipeline on this machine: bring the lab up, register its fictional
    /// companies, scan and rate them with in-process workers, print working keys and curl
    /// commands, and serve the API (workers keep running for rescans). Started again on
    /// its database, it serves at once: the companies rated before are queued for the
    /// workers, and only those never rated are scanned before it serves.
    Demo(cmd::demo::Args),
}

/// What is logged unless `RAMPART_LOG` says otherwise: Rampart's own crates at info
/// (the access log, a line per request, is `api::access`), third-party crates errors
/// only (hickory's per-query warnings flooded the demo).
const DEFAULT_LOG: &str = "error,rampart=info,api=info,worker=info,store=info,scanner=info,egress=info,lab=info,\
    labtls=info,intel=info,vulndb=info,rating=info,sync=info,model=info";

/// mimalloc, not the C library's allocator: under load the API's requests allocate from
/// both runtime threads at once, and glibc's arenas spent a tenth of the process's time
/// in locking and consolidation (docs/PERFORMANCE.md). What SQLite allocates still goes
/// through the C library, tuned by `store::tune_allocator`.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> Result<()> {
    store::tune_allocator();
    let cli = Cli::parse();
    // Lines go to stderr from a thread of their own: a request never waits on the
    // terminal (under a flood, lines are dropped rather than requests slowed).
    let (writer, _flushed_at_exit) = tracing_appender::non_blocking(std::io::stderr());
    // The demo's terminal is its progress, keys and URLs: the events its scans keep (one
    // line each at info) are not repeated there.
    let default = match cli.command {
        Command::Demo(_) => format!("{DEFAULT_LOG},worker::events=warn"),
        _ => DEFAULT_LOG.to_owned(),
    };
    let filter =
        || tracing_subscriber::EnvFilter::try_from_env("RAMPART_LOG").unwrap_or_else(|_| default.as_str().into());
    let log = tracing_subscriber::fmt().with_env_filter(filter()).with_writer(writer);
    match cli.log_format {
        LogFormat::Text => log.with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())).init(),
        LogFormat::Json => log.json().flatten_event(true).with_current_span(false).init(),
    }
    match cli.command {
        Command::Serve(args) => cmd::serve::run(args).await,
        Command::Worker(args) => cmd::worker::run(args).await,
        Command::Jobs { action } => cmd::jobs::run(action).await,
        Command::Disputes { action } => cmd::disputes::run(action).await,
        Command::Subsidiaries { action } => cmd::subsidiaries::run(action).await,
        Command::Footprint { action } => cmd::footprint::run(action).await,
        Command::Webhooks { action } => cmd::webhooks::run(action).await,
        Command::Companies { action } => cmd::companies::run(action).await,
        Command::Status(args) => cmd::status::run(args).await,
        Command::Keys { action } => cmd::keys::run(action).await,
        Command::Orgs { action } => cmd::orgs::run(action).await,
        Command::Import { action } => cmd::import::run(action).await,
        Command::Mock(args) => cmd::mock::run(args).await,
        Command::Openapi => cmd::openapi::run(),
        Command::Scan(args) => cmd::scan::run(args).await,
        Command::Probe { action } => cmd::probe::run(action).await,
        Command::Lab { action } => cmd::lab::run(action).await,
        Command::Sync(args) => cmd::sync::run(args).await,
        Command::Explain(args) => cmd::explain::run(args).await,
        Command::Rescore(args) => cmd::rescore::run(args).await,
        Command::Migrate(args) => cmd::migrate::run(args).await,
        Command::Sbom(args) => cmd::sbom::run(args).await,
        Command::Report(args) => cmd::report::run(args).await,
        Command::Demo(args) => cmd::demo::run(args).await,
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    #[test]
    fn the_command_line_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
