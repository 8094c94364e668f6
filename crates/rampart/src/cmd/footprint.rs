//! `rampart footprint pending|approve|reject`: the assets keys asked to add that another
//! company holds on evidence (docs/API.md, "Domain ownership"), decided by an operator.
//! The same three verbs as `rampart subsidiaries`.

use anyhow::{Result, bail};

use super::subsidiaries::{Action, checked_note};
use crate::common::{clip, open};

pub(crate) async fn run(action: Action) -> Result<()> {
    match action {
        Action::Pending { db, all } => {
            let store = open(&db.db).await?;
            let requests = store.asset_requests(all).await?;
            say!("{:<6} {:<9} {:<24} {:<32} {:<10} {:<20} REASON", "ID", "STATE", "COMPANY", "ASSET", "BY", "ASKED");
            for r in &requests {
                say!(
                    "{:<6} {:<9} {:<24} {:<32} {:<10} {:<20} {}",
                    r.id,
                    r.state,
                    clip(r.company.as_str(), 24),
                    clip(&r.asset, 32),
                    clip(&r.requested_by, 10),
                    clip(&r.requested_at, 20),
                    clip(&r.reason, 60)
                );
            }
            if requests.is_empty() {
                eprintln!("no requests");
            }
            Ok(())
        }
        Action::Approve { db, id, note } => decide_asset(&db.db, id, true, checked_note(&note)?).await,
        Action::Reject { db, id, note } => decide_asset(&db.db, id, false, checked_note(&note)?).await,
    }
}

async fn decide_asset(db: &str, id: i64, approve: bool, note: &str) -> Result<()> {
    let store = open(db).await?;
    let Some(r) = store.decide_asset_request(id, approve, note, model::timefmt::now()).await? else {
        bail!("no pending request {id} (`rampart footprint pending --all` lists them)");
    };
    if approve {
        // Its scan, as an addition a key makes queues one.
        store.enqueue(&model::JobSpec::Scan { social_id: r.company.clone() }).await?;
    }
    say!("request {id} {}: {} for {}", r.state, r.asset, r.company);
    Ok(())
}
