//! `rampart mock`: every path of the API answered with sample responses from an
//! in-memory store; any non-empty apikey is accepted.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Result;
use model::SocialId;

use crate::common::{open, serve};

#[derive(clap::Args)]
pub(crate) struct Args {
    #[arg(long, env = "RAMPART_LISTEN", default_value = "127.0.0.1:8081")]
    listen: SocketAddr,
}

pub(crate) async fn run(args: Args) -> Result<()> {
    let store = open("sqlite::memory:").await?;
    intel::sample::load(&*store).await?;
    vulndb::import::sample(&*store).await?;
    let mock = api::MockData {
        company: SocialId::parse(intel::sample::MOCK_COMPANY)?,
        cve: model::CveId::parse(vulndb::import::SAMPLE_CVE)?,
        incident: intel::sample::MOCK_INCIDENT.to_owned(),
    };
    let limiter = Arc::new(api::MemoryLimiter::new(store.clone()));
    serve(store, limiter, args.listen, api::Config { mock: Some(mock), ..Default::default() }).await
}
