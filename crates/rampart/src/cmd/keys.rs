//! `rampart keys create|list|deactivate|activate`: the API keys.

use anyhow::{Context as _, Result, bail};
use clap::Subcommand;
use model::{Scope, SocialId};

use crate::common::open;
use crate::flags::DbArg;

#[derive(Subcommand)]
pub(crate) enum Action {
    /// Create a key and print it (alone, on stdout). It is shown only this once.
    Create {
        #[command(flatten)]
        db: DbArg,
        #[arg(long)]
        name: String,
        /// Comma-separated: general, vulnerability, underwriter, monitor.
        /// Default: general,vulnerability,underwriter (plus monitor with --company).
        #[arg(long)]
        scopes: Option<String>,
        /// The company a monitor key reports on.
        #[arg(long)]
        company: Option<String>,
        /// Requests per minute (0: unlimited).
        #[arg(long, default_value_t = 600)]
        per_minute: u32,
        /// Requests per calendar month (0: unlimited).
        #[arg(long, default_value_t = 100_000)]
        monthly: u64,
    },
    /// List keys (never the secrets).
    List {
        #[command(flatten)]
        db: DbArg,
    },
    /// Deactivate a key, by id or prefix.
    Deactivate {
        #[command(flatten)]
        db: DbArg,
        key: String,
    },
    /// Reactivate a key, by id or prefix.
    Activate {
        #[command(flatten)]
        db: DbArg,
        key: String,
    },
}

pub(crate) async fn run(action: Action) -> Result<()> {
    match action {
        Action::Create { db, name, scopes, company, per_minute, monthly } => {
            let store = open(&db.db).await?;
            let company = company.as_deref().map(SocialId::parse).transpose().context("--company")?;
            let scopes = match scopes {
                Some(list) => Scope::parse_list(&list).map_err(anyhow::Error::msg)?,
                None if company.is_some() => Scope::ALL.to_vec(),
                None => vec![Scope::General, Scope::Vulnerability, Scope::Underwriter],
            };
            let secret = create_key(&*store, &name, scopes, company, per_minute, monthly).await?;
            say!("{secret}");
        }
        Action::List { db } => {
            let store = open(&db.db).await?;
            say!(
                "{:<5} {:<12} {:<8} {:<40} {:<24} {:>10} {:>10}  name",
                "id",
                "prefix",
                "active",
                "scopes",
                "company",
                "per_min",
                "monthly"
            );
            for k in store.keys().await? {
                let scopes: Vec<&str> = k.scopes.iter().map(|s| s.as_str()).collect();
                say!(
                    "{:<5} {:<12} {:<8} {:<40} {:<24} {:>10} {:>10}  {}",
                    k.id,
                    k.prefix,
                    if k.active { "yes" } else { "no" },
                    scopes.join(","),
                    k.company.as_ref().map(SocialId::as_str).unwrap_or("-"),
                    k.per_minute,
                    k.monthly,
                    k.name
                );
            }
        }
        Action::Deactivate { db, key } => {
            let store = open(&db.db).await?;
            if !store.set_key_active(&key, false).await? {
                bail!("no key with id or prefix {key:?}");
            }
            eprintln!("key {key} deactivated");
        }
        Action::Activate { db, key } => {
            let store = open(&db.db).await?;
            if !store.set_key_active(&key, true).await? {
                bail!("no key with id or prefix {key:?}");
            }
            eprintln!("key {key} activated");
        }
    }
    Ok(())
}

/// A new key stored, its secret returned; a monitor key's company must be known.
pub(crate) async fn create_key(
    store: &dyn store::Store,
    name: &str,
    scopes: Vec<Scope>,
    company: Option<SocialId>,
    per_minute: u32,
    monthly: u64,
) -> Result<String> {
    if let Some(c) = &company
        && store.company_by_social_id(c).await?.is_none()
    {
        bail!("company {c} is not in the database: import it first");
    }
    let key = api::generate_key(name, scopes, company, per_minute, monthly)?;
    store.create_key(&key.record).await?;
    Ok(key.secret)
}
