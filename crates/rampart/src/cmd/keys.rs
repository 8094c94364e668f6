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
        /// Comma-separated: general, vulnerability, underwriter, monitor, portfolio.
        /// Default: general,vulnerability,underwriter (plus monitor with --company).
        /// underwriter grants portfolio too.
        #[arg(long)]
        scopes: Option<String>,
        /// The company a monitor key reports on.
        #[arg(long)]
        company: Option<String>,
        /// The organisation the key belongs to (`rampart orgs create`): its portfolios
        /// are the key's. A key with the portfolio scope and no --org gets an
        /// organisation of its own, named after it.
        #[arg(long)]
        org: Option<String>,
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
        Action::Create { db, name, scopes, company, org, per_minute, monthly } => {
            let store = open(&db.db).await?;
            let company = company.as_deref().map(SocialId::parse).transpose().context("--company")?;
            if let Some(c) = &company
                && store.company_by_social_id(c).await?.is_none()
            {
                bail!("company {c} is not in the database: import it first");
            }
            let scopes = match scopes {
                Some(list) => Scope::parse_list(&list).map_err(anyhow::Error::msg)?,
                // A key bound to a company reads that company: no portfolios.
                None if company.is_some() => Scope::ALL.into_iter().filter(|s| *s != Scope::Portfolio).collect(),
                None => vec![Scope::General, Scope::Vulnerability, Scope::Underwriter],
            };
            let scopes = if company.is_none() { with_portfolio(scopes) } else { scopes };
            let org = match (org, scopes.contains(&Scope::Portfolio)) {
                (Some(o), _) => Some(super::orgs::named(&*store, &o).await?),
                (None, false) => None,
                (None, true) => {
                    let own = model::portfolio::name("--name", &name)?;
                    if store.org_by_name(&own).await?.is_some() {
                        bail!(
                            "an organisation named {own:?} exists: give --org {own:?} to put the key in it, or another --name"
                        );
                    }
                    let made = store.create_org(&own).await?;
                    eprintln!("organisation {} ({own}) created for the key", made.id);
                    Some(made)
                }
            };
            let secret = create_key(&*store, &name, scopes, company, org.map(|o| o.id), per_minute, monthly).await?;
            say!("{secret}");
        }
        Action::List { db } => {
            let store = open(&db.db).await?;
            say!(
                "{:<5} {:<12} {:<8} {:<50} {:<24} {:>5} {:>10} {:>10}  name",
                "id",
                "prefix",
                "active",
                "scopes",
                "company",
                "org",
                "per_min",
                "monthly"
            );
            for k in store.keys().await? {
                let scopes: Vec<&str> = k.scopes.iter().map(|s| s.as_str()).collect();
                say!(
                    "{:<5} {:<12} {:<8} {:<50} {:<24} {:>5} {:>10} {:>10}  {}",
                    k.id,
                    k.prefix,
                    if k.active { "yes" } else { "no" },
                    scopes.join(","),
                    k.company.as_ref().map(SocialId::as_str).unwrap_or("-"),
                    k.org.map_or_else(|| "-".to_owned(), |o| o.to_string()),
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

/// `scopes` with portfolio when they have underwriter (`rampart keys create` grants both).
pub(crate) fn with_portfolio(mut scopes: Vec<Scope>) -> Vec<Scope> {
    if scopes.contains(&Scope::Underwriter) && !scopes.contains(&Scope::Portfolio) {
        scopes.push(Scope::Portfolio);
        scopes.sort();
    }
    scopes
}

/// A new key stored, its secret returned; a monitor key's company must be known; a key
/// with the portfolio scope must belong to an organisation.
pub(crate) async fn create_key(
    store: &dyn store::Store,
    name: &str,
    scopes: Vec<Scope>,
    company: Option<SocialId>,
    org: Option<i64>,
    per_minute: u32,
    monthly: u64,
) -> Result<String> {
    if scopes.contains(&Scope::Portfolio) && org.is_none() {
        bail!("a key with the portfolio scope belongs to an organisation: give --org NAME");
    }
    if let Some(c) = &company
        && store.company_by_social_id(c).await?.is_none()
    {
        bail!("company {c} is not in the database: import it first");
    }
    let mut key = api::generate_key(name, scopes, company, per_minute, monthly)?;
    key.record.org = org;
    store.create_key(&key.record).await?;
    Ok(key.secret)
}
