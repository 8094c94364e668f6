//! `rampart webhooks add|list|remove|deliveries`: where a company's events (and its
//! subsidiaries') are delivered, signed.

use anyhow::{Context as _, Result};
use clap::Subcommand;
use model::SocialId;

use crate::common::open;
use crate::flags::DbArg;

#[derive(Subcommand)]
pub(crate) enum Action {
    /// Add a webhook for a company's events and its subsidiaries'; prints its signing
    /// secret, shown this once.
    Add {
        #[command(flatten)]
        db: DbArg,
        /// The company whose events are delivered.
        #[arg(long)]
        company: String,
        /// Where deliveries are POSTed: an http(s) URL.
        #[arg(long)]
        url: String,
        /// The event types delivered, comma-separated (rating_changed, finding_opened,
        /// finding_closed, asset_attributed, scan_failed, scan_truncated, rating_stale); all when absent.
        #[arg(long, value_parser = parse_event_kinds)]
        events: Option<EventKinds>,
        /// Lab mode: admit a loopback or private address as the URL's host (the workers'
        /// guard decides again at each delivery).
        #[arg(long)]
        allow_private: bool,
    },
    /// List the webhooks with their latest delivery.
    List {
        #[command(flatten)]
        db: DbArg,
    },
    /// Remove a webhook (its queued deliveries end without sending).
    Remove {
        #[command(flatten)]
        db: DbArg,
        id: i64,
    },
    /// A webhook's latest delivery attempts, newest first.
    Deliveries {
        #[command(flatten)]
        db: DbArg,
        id: i64,
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=1000))]
        limit: u32,
    },
}

/// The event types of `webhooks add --events` (one value: clap reads a `Vec` as many).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EventKinds(pub(crate) Vec<model::EventKind>);

fn parse_event_kinds(text: &str) -> Result<EventKinds, String> {
    let kinds = model::EventKind::parse_list(text)?;
    if kinds.is_empty() {
        return Err("no event type given".into());
    }
    Ok(EventKinds(kinds))
}

/// What `webhooks add` adds, checked: the company's social_id, the URL (trimmed) the
/// guard admits, the event types (all when none).
struct NewHook {
    id: SocialId,
    url: String,
    kinds: Vec<model::EventKind>,
}

impl NewHook {
    fn read(company: &str, url: &str, events: Option<EventKinds>, allow_private: bool) -> Result<NewHook> {
        let id = SocialId::parse(company).with_context(|| format!("{company:?} is not a social_id"))?;
        worker::webhooks::check_url(url, allow_private).map_err(|e| anyhow::anyhow!("the webhook URL: {e}"))?;
        Ok(NewHook { id, url: url.trim().to_owned(), kinds: events.map(|e| e.0).unwrap_or_default() })
    }
}

pub(crate) async fn run(action: Action) -> Result<()> {
    match action {
        Action::Add { db, company, url, events, allow_private } => {
            let NewHook { id, url, kinds } = NewHook::read(&company, &url, events, allow_private)?;
            let store = open(&db.db).await?;
            let company = store.company_by_social_id(&id).await?.with_context(|| format!("no company {id}"))?;
            let secret =
                worker::webhooks::new_secret().map_err(|e| anyhow::anyhow!("no randomness for the secret: {e}"))?;
            let hook = store.add_webhook(&model::NewWebhook { company: company.id, url, secret, kinds }).await?;
            say!("webhook {} added: {} events of {id} and its subsidiaries → {}", hook.id, kinds_text(&hook), hook.url);
            say!("signing secret (shown once; verify each delivery's Rampart-Signature with it):");
            say!("{}", hook.secret);
            Ok(())
        }
        Action::List { db } => {
            let store = open(&db.db).await?;
            let hooks = store.webhooks().await?;
            if hooks.is_empty() {
                say!("no webhooks");
            }
            for hook in hooks {
                let last = store.deliveries(hook.id, 1).await?.into_iter().next();
                let last = match last {
                    None => "no delivery yet".to_owned(),
                    Some(d) => format!(
                        "last delivery {} event {} attempt {}: {}{}",
                        model::timefmt::rfc3339(d.at),
                        d.event,
                        d.attempt,
                        d.outcome,
                        d.status.map(|s| format!(" (HTTP {s})")).unwrap_or_default()
                    ),
                };
                say!(
                    "{:>4}  {}  {}  {}  added {}  {}",
                    hook.id,
                    hook.social_id,
                    hook.url,
                    kinds_text(&hook),
                    model::timefmt::rfc3339(hook.created_at),
                    last
                );
            }
            Ok(())
        }
        Action::Remove { db, id } => {
            let store = open(&db.db).await?;
            if !store.remove_webhook(id).await? {
                anyhow::bail!("no webhook {id}");
            }
            say!("webhook {id} removed");
            Ok(())
        }
        Action::Deliveries { db, id, limit } => {
            let store = open(&db.db).await?;
            store.webhook(id).await?.with_context(|| format!("no webhook {id}"))?;
            let log = store.deliveries(id, limit).await?;
            if log.is_empty() {
                say!("no deliveries to webhook {id} yet");
            }
            for d in log {
                say!(
                    "{}  event {:>6}  attempt {:>2}  {:<9}  {:>4}  {:>6} ms  {}",
                    model::timefmt::rfc3339(d.at),
                    d.event,
                    d.attempt,
                    d.outcome,
                    d.status.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
                    d.millis,
                    d.error.as_deref().unwrap_or("")
                );
            }
            Ok(())
        }
    }
}

/// A webhook's event types as shown.
fn kinds_text(hook: &model::Webhook) -> String {
    if hook.kinds.is_empty() {
        "all".to_owned()
    } else {
        hook.kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(",")
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::Action;
    use crate::{Cli, Command};

    #[test]
    fn webhooks_add_reads_its_event_types() {
        let parse = |args: &[&str]| match Cli::try_parse_from(args).map(|c| c.command) {
            Ok(Command::Webhooks { action: Action::Add { events, .. } }) => Ok(events.map(|e| e.0)),
            Ok(_) => panic!("not webhooks add"),
            Err(e) => Err(e.to_string()),
        };
        let base = ["rampart", "webhooks", "add", "--company", "acme", "--url", "https://h.example/"];
        assert_eq!(parse(&base), Ok(None), "every type when none is named");
        let two = [&base[..], &["--events", "rating_changed,finding_opened"]].concat();
        assert_eq!(parse(&two), Ok(Some(vec![model::EventKind::RatingChanged, model::EventKind::FindingOpened])));
        let bad = [&base[..], &["--events", "bogus"]].concat();
        assert!(parse(&bad).unwrap_err().contains("unknown event type"));
        let none = [&base[..], &["--events", ","]].concat();
        assert!(parse(&none).is_err());
    }
}
