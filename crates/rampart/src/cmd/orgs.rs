//! `rampart orgs create|list`: organisations, which hold keys and portfolios.

use anyhow::Result;
use clap::Subcommand;

use crate::common::open;
use crate::flags::DbArg;

#[derive(Subcommand)]
pub(crate) enum Action {
    /// Create an organisation (an insurer, a vendor-risk team): its keys
    /// (`rampart keys create --org NAME`) share its portfolios, no other key sees them.
    Create {
        #[command(flatten)]
        db: DbArg,
        /// 1 to 100 characters, unique.
        name: String,
    },
    /// List the organisations with their keys and portfolios.
    List {
        #[command(flatten)]
        db: DbArg,
    },
}

pub(crate) async fn run(action: Action) -> Result<()> {
    match action {
        Action::Create { db, name } => {
            let store = open(&db.db).await?;
            let name = model::portfolio::name("the name", &name)?;
            let org = store.create_org(&name).await?;
            say!("{}", org.id);
            eprintln!("organisation {} ({name}) created: `rampart keys create --org {name:?}` gives it keys", org.id);
        }
        Action::List { db } => {
            let store = open(&db.db).await?;
            let keys = store.keys().await?;
            say!("{:<5} {:>5} {:>11}  name", "id", "keys", "portfolios");
            for org in store.orgs().await? {
                let n = keys.iter().filter(|k| k.org == Some(org.id)).count();
                let portfolios = store.portfolios(org.id).await?.len();
                say!("{:<5} {:>5} {:>11}  {}", org.id, n, portfolios, org.name);
            }
        }
    }
    Ok(())
}

/// The organisation `name` names, or an error saying how to make it.
pub(crate) async fn named(store: &dyn store::Store, name: &str) -> Result<model::Org> {
    match store.org_by_name(name.trim()).await? {
        Some(org) => Ok(org),
        None => anyhow::bail!("no organisation named {name:?}: `rampart orgs create {name:?}` makes it"),
    }
}
