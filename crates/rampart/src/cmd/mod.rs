//! One module per subcommand: its clap arguments, what they are checked into where
//! that means something (its settings), and its `run`.

pub(crate) mod companies;
pub(crate) mod demo;
pub(crate) mod disputes;
pub(crate) mod explain;
pub(crate) mod footprint;
pub(crate) mod import;
pub(crate) mod jobs;
pub(crate) mod keys;
pub(crate) mod lab;
pub(crate) mod migrate;
pub(crate) mod mock;
pub(crate) mod openapi;
pub(crate) mod orgs;
pub(crate) mod probe;
pub(crate) mod report;
pub(crate) mod rescore;
pub(crate) mod sbom;
pub(crate) mod scan;
pub(crate) mod serve;
pub(crate) mod status;
pub(crate) mod subsidiaries;
pub(crate) mod sync;
pub(crate) mod webhooks;
pub(crate) mod worker;
