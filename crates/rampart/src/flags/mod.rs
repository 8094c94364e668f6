//! Flag groups that several subcommands flatten into their own (`--db`, the cadences,
//! the feed sources, how the scanner reaches its targets), each with what turns it into
//! the settings a command runs on. A subcommand's own flags are in its module, `cmd/`.

pub(crate) mod cadence;
pub(crate) mod feeds;
pub(crate) mod scanner;

pub(crate) use feeds::{FeedSchedule, FeedSources};
pub(crate) use scanner::{NetOpts, ScanOpts};

#[derive(clap::Args, Clone)]
pub(crate) struct DbArg {
    /// Database: postgres://USER@HOST:PORT/DB, sqlite://PATH, a file path, or sqlite::memory:
    #[arg(long, env = "RAMPART_DB", default_value = "rampart.db")]
    pub(crate) db: String,
}
