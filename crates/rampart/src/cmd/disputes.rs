//! `rampart disputes list|accept|reject`: the disputes of findings and the removals of
//! assets that companies asked for, decided by an operator (the company is re-rated with
//! the reason).

use anyhow::{Context as _, Result, bail};
use clap::Subcommand;
use model::SocialId;

use crate::common::open;
use crate::flags::DbArg;

#[derive(Subcommand)]
pub(crate) enum Action {
    /// Open disputes, newest first (with --all: every dispute, decided or not).
    List {
        #[command(flatten)]
        db: DbArg,
        #[arg(long)]
        all: bool,
        /// Only this company's.
        #[arg(long)]
        company: Option<String>,
    },
    /// Accept an open dispute: compensating_control gives the finding no weight,
    /// incorrect closes it as a false positive of its check, not_ours removes the asset
    /// from the company and its future scans, fixed closes the finding.
    Accept {
        #[command(flatten)]
        db: DbArg,
        id: i64,
        /// Why (kept with the dispute, shown to the company and in the score history).
        #[arg(long)]
        note: String,
        /// Who decides (kept with the dispute).
        #[arg(long, default_value = "operator")]
        by: String,
    },
    /// Reject an open dispute: the finding stays as it was.
    Reject {
        #[command(flatten)]
        db: DbArg,
        id: i64,
        #[arg(long)]
        note: String,
        #[arg(long, default_value = "operator")]
        by: String,
    },
}

pub(crate) async fn run(action: Action) -> Result<()> {
    match action {
        Action::List { db, all, company } => {
            let store = open(&db.db).await?;
            let ids = match &company {
                Some(sid) => {
                    let sid = SocialId::parse(sid).map_err(|e| anyhow::anyhow!("--company: {e}"))?;
                    let c =
                        store.company_by_social_id(&sid).await?.with_context(|| format!("company {sid}: not found"))?;
                    Some(vec![c.id])
                }
                None => None,
            };
            let state = if all { None } else { Some(model::DisputeState::Open) };
            let mut shown = 0u64;
            say!(
                "{:<6} {:<9} {:<21} {:<24} {:<32} {:<20} EXPLANATION / NOTE",
                "ID",
                "STATE",
                "REASON",
                "COMPANY",
                "FINDING",
                "OPENED"
            );
            for n in 1..=1000u64 {
                let page = model::Page::parse(Some(&n.to_string())).map_err(|e| anyhow::anyhow!("{e}"))?;
                let got = store.disputes(ids.as_deref(), state, page).await?;
                for d in &got.items {
                    let finding = match (&d.code, d.finding_id) {
                        (Some(code), Some(id)) => format!("#{id} {code} on {}", d.asset),
                        _ => format!("asset {}", d.asset),
                    };
                    let note = d.note.as_deref().map(|n| format!(" / {n}")).unwrap_or_default();
                    say!(
                        "{:<6} {:<9} {:<21} {:<24} {:<32} {:<20} {}{note}",
                        d.id,
                        d.state.as_str(),
                        d.reason.as_str(),
                        d.company.as_str(),
                        finding,
                        model::timefmt::rfc3339(d.opened_at.0),
                        d.explanation.replace('\n', " ")
                    );
                }
                shown += got.items.len() as u64;
                if got.items.is_empty() || shown >= got.total {
                    break;
                }
            }
            if shown == 0 {
                eprintln!("no disputes");
            }
            Ok(())
        }
        Action::Accept { db, id, note, by } => decide_dispute(&db.db, Decision::read(id, true, &note, &by)?).await,
        Action::Reject { db, id, note, by } => decide_dispute(&db.db, Decision::read(id, false, &note, &by)?).await,
    }
}

/// An operator's decision of a dispute, its `--note` and `--by` checked.
struct Decision {
    id: i64,
    accept: bool,
    note: String,
    by: String,
}

impl Decision {
    fn read(id: i64, accept: bool, note: &str, by: &str) -> Result<Decision> {
        let note = model::dispute::explanation(note).map_err(|e| anyhow::anyhow!("--note: {e}"))?;
        let by = model::dispute::explanation(by).map_err(|e| anyhow::anyhow!("--by: {e}"))?;
        Ok(Decision { id, accept, note, by })
    }
}

async fn decide_dispute(db: &str, decision: Decision) -> Result<()> {
    let Decision { id, accept, note, by } = decision;
    let store = open(db).await?;
    let now = time::OffsetDateTime::now_utc();
    // An asset that would take the company's own web domain with it is a correction of
    // the company's record, not a removal: refused here.
    if accept
        && let Some(d) = store.dispute(id).await?
        && d.reason == model::DisputeReason::NotOurs
        && d.state == model::DisputeState::Open
        && let Some(gone) = store::disputes::removed_asset(&d)
        && let Some(c) = store.company_by_social_id(&d.company).await?
        && let Some(domain) = c.domain.as_ref().filter(|dom| gone.covers(dom.as_str()))
    {
        bail!(
            "dispute {id}: removing {gone} would remove {domain}, the web domain of {}; reject the dispute, or correct \
             the company's record (rampart import companies)",
            d.company
        );
    }
    let decision = store::Decision { accept, note: &note, by: &by, at: now };
    let d = match store.decide_dispute(id, &decision).await {
        Ok(Some(d)) => d,
        Ok(None) => bail!("no dispute {id} (`rampart disputes list --all` lists them)"),
        Err(store::StoreError::Invalid(why)) => bail!("{why}"),
        Err(e) => return Err(e.into()),
    };
    say!("dispute {id} {} ({} of {} on {})", d.state.as_str(), d.reason.as_str(), d.company, d.asset);
    let company = store.company_by_social_id(&d.company).await?.with_context(|| format!("company {}", d.company))?;
    match worker::disputes::rerate_after(&*store, &company, &d, now).await? {
        Some(r) => say!("{} re-rated: {} ({})", d.company, r.score.as_f64(), r.grade.as_str()),
        None => say!("{} has no computed rating: nothing to re-rate", d.company),
    }
    if accept
        && d.reason == model::DisputeReason::NotOurs
        && let Some(gone) = store::disputes::removed_asset(&d)
    {
        say!("{gone} left the footprint of {}; its scans no longer include it", d.company);
    }
    Ok(())
}
