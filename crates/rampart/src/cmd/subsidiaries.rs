//! `rampart subsidiaries pending|approve|reject`: the subsidiary links that keys asked
//! for, decided by an operator.

use anyhow::{Result, bail};
use clap::Subcommand;

use crate::common::open;
use crate::flags::DbArg;

/// The requests an operator decides: `rampart subsidiaries` and `rampart footprint` alike.
#[derive(Subcommand)]
pub(crate) enum Action {
    /// Requests waiting for a decision (with --all: every request, decided or not).
    Pending {
        #[command(flatten)]
        db: DbArg,
        #[arg(long)]
        all: bool,
    },
    /// Link the companies of a pending request.
    Approve {
        #[command(flatten)]
        db: DbArg,
        id: i64,
        /// Why (kept with the request).
        #[arg(long, default_value = "")]
        note: String,
    },
    /// Refuse a pending request: the companies stay apart.
    Reject {
        #[command(flatten)]
        db: DbArg,
        id: i64,
        #[arg(long, default_value = "")]
        note: String,
    },
}

pub(crate) async fn run(action: Action) -> Result<()> {
    match action {
        Action::Pending { db, all } => {
            let store = open(&db.db).await?;
            let state = if all { None } else { Some(store::SubsidiaryState::Pending) };
            let requests = store.subsidiary_requests(state).await?;
            say!("{:<6} {:<9} {:<24} {:<24} {:<6} {:<20} NOTE", "ID", "STATE", "PARENT", "SUBSIDIARY", "KEY", "ASKED");
            for r in &requests {
                let key = r.key_id.map_or("-".to_owned(), |k| k.to_string());
                say!(
                    "{:<6} {:<9} {:<24} {:<24} {:<6} {:<20} {}",
                    r.id,
                    r.state.as_str(),
                    r.parent.as_str(),
                    r.child.as_str(),
                    key,
                    r.created_at,
                    r.note.as_deref().unwrap_or("")
                );
            }
            if requests.is_empty() {
                eprintln!("no requests");
            }
            Ok(())
        }
        Action::Approve { db, id, note } => decide(&db.db, id, true, checked_note(&note)?).await,
        Action::Reject { db, id, note } => decide(&db.db, id, false, checked_note(&note)?).await,
    }
}

/// `--note` of a decision, at most 1000 bytes.
pub(super) fn checked_note(note: &str) -> Result<&str> {
    if note.len() > 1000 {
        bail!("--note is {} bytes; at most 1000", note.len());
    }
    Ok(note)
}

async fn decide(db: &str, id: i64, approve: bool, note: &str) -> Result<()> {
    let store = open(db).await?;
    let Some(r) = store.decide_subsidiary_request(id, approve, note).await? else {
        bail!("no pending request {id} (`rampart subsidiaries pending --all` lists them)");
    };
    say!("request {id} {}: {} and {} ({})", r.state.as_str(), r.parent, r.child, r.child_name);
    Ok(())
}
