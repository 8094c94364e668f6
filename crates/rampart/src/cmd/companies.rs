//! `rampart companies set|set-cadence`: what a company's own data says beside the
//! import file — the DKIM selectors its scans try first, its rescan cadence.

use anyhow::{Context as _, Result};
use clap::Subcommand;
use model::SocialId;

use crate::common::open;
use crate::flags::DbArg;
use crate::flags::cadence::{human, parse_every};

#[derive(Subcommand)]
pub(crate) enum Action {
    /// Set a company's DKIM selectors (`--dkim-selectors ''` clears them); shows them
    /// when none is given.
    Set {
        #[command(flatten)]
        db: DbArg,
        social_id: String,
        /// The selectors the company signs with, comma-separated: its scans try them
        /// first, and no key at them is `dkim.missing`.
        #[arg(long, value_delimiter = ',')]
        dkim_selectors: Option<Vec<String>>,
    },
    /// Set how often a company is rescanned (90s, 30m, 24h, 7d), or `default` for the
    /// scheduler's --rescan-every; shows it when none is given.
    SetCadence {
        #[command(flatten)]
        db: DbArg,
        social_id: String,
        every: Option<String>,
    },
}

pub(crate) async fn run(action: Action) -> Result<()> {
    match action {
        Action::Set { db, social_id, dkim_selectors } => {
            let store = open(&db.db).await?;
            let id = SocialId::parse(&social_id).with_context(|| format!("{social_id:?} is not a social_id"))?;
            let company = store.company_by_social_id(&id).await?.with_context(|| format!("no company {id}"))?;
            if let Some(given) = dkim_selectors {
                let given: Vec<String> = given.into_iter().filter(|s| !s.is_empty()).collect();
                let selectors = model::dkim_selectors(&given).map_err(|e| anyhow::anyhow!("{e}"))?;
                store.set_dkim_selectors(company.id, &selectors).await?;
            }
            let now = store.dkim_selectors(company.id).await?;
            say!(
                "{id}: DKIM selectors {}",
                if now.is_empty() { "none (the curated selectors only)".to_owned() } else { now.join(", ") }
            );
            Ok(())
        }
        Action::SetCadence { db, social_id, every } => {
            let store = open(&db.db).await?;
            let id = SocialId::parse(&social_id).with_context(|| format!("{social_id:?} is not a social_id"))?;
            let company = store.company_by_social_id(&id).await?.with_context(|| format!("no company {id}"))?;
            match every.as_deref() {
                None => {}
                Some("default") => store.set_cadence(company.id, None).await?,
                Some(raw) => {
                    let every = parse_every(raw).map_err(|e| anyhow::anyhow!("{e}"))?;
                    store.set_cadence(company.id, Some(every)).await?;
                }
            }
            match store.cadence(company.id).await? {
                Some(every) => say!("{id}: rescanned every {}", human(every)),
                None => say!("{id}: rescanned at the scheduler's cadence (--rescan-every)"),
            }
            Ok(())
        }
    }
}
