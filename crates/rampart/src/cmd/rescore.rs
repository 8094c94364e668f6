//! `rampart rescore [--methodology V] [--company SOCIAL_ID]`: recomputes the history of
//! computed ratings under a methodology version this build implements. Each stored
//! rating keeps its time and the assets its scan assessed; the findings judged are those
//! open at that time (first seen by then and not closed by then — a finding closed and
//! later reopened counts as open from its first sighting). Imported ratings are left as
//! they are: there is no scan behind them.

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use model::{Finding, Page, RiskVector, SocialId};
use store::Store;
use time::OffsetDateTime;

use crate::flags::DbArg;

#[derive(clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    db: DbArg,
    #[arg(long, default_value = rating::METHODOLOGY_VERSION)]
    methodology: String,
    /// Only this company (default: every scanned company).
    #[arg(long)]
    company: Option<String>,
}

/// The methodology versions this build can compute.
const KNOWN: [&str; 1] = [rating::METHODOLOGY_VERSION];

pub(crate) async fn run(args: Args) -> Result<()> {
    let store = crate::common::open(&args.db.db).await?;
    rescore(&*store, &args.methodology, args.company.as_deref()).await
}

async fn rescore(store: &dyn Store, methodology: &str, company: Option<&str>) -> Result<()> {
    if !KNOWN.contains(&methodology) {
        bail!("methodology {methodology:?} is not implemented by this build (it knows {})", KNOWN.join(", "));
    }
    let companies = match company {
        Some(id) => {
            let id = SocialId::parse(id)?;
            match store.company_by_social_id(&id).await? {
                Some(c) => vec![c],
                None => bail!("no company {id}"),
            }
        }
        None => {
            let mut all = Vec::new();
            let mut page = Page::FIRST;
            loop {
                let got = store.last_scanned(page).await?;
                let n = got.items.len();
                all.extend(got.items);
                if n == 0 || all.len() as u64 >= got.total {
                    break;
                }
                page = Page::parse(Some(&(page.number() + 1).to_string()))?;
            }
            all
        }
    };
    let mut recomputed = 0;
    for c in &companies {
        let history = store.score_history(c.id, 10_000).await?;
        let computed: Vec<&model::ScoreSnapshot> = history.iter().filter(|s| s.methodology.is_some()).collect();
        if computed.is_empty() {
            continue;
        }
        let open = store.open_findings(c.id).await?;
        let closed = store.closed_findings(c.id).await?;
        let website = model::website_host(&c.website);
        let mut changed = 0;
        for old in &computed {
            let at = old.scanned_at.0;
            let findings = open_at(&open, &closed, at);
            let assets: BTreeMap<RiskVector, u32> =
                old.components.iter().map(|(v, x)| (*v, x.assets_checked)).collect();
            let kev = store::judged::kev_among(store, &findings).await?;
            let r = rating::rate(&rating::Input {
                findings: &findings,
                assets_checked: &assets,
                kev: &kev,
                website_host: website.as_deref(),
            });
            // What the scan said it could not assess, its checks and what limited it stay.
            let basis = worker::rate::basis_of(old);
            let Some(new) = worker::rate::snapshot_of(&r, &basis, old.scanned_at) else { continue };
            if &new != *old {
                changed += 1;
            }
            store.replace_rating(c.id, &new).await?;
            recomputed += 1;
        }
        let latest = store.latest_score(c.id).await?;
        say!(
            "{}: {} rating(s) recomputed under {methodology}, {changed} changed; latest {}",
            c.social_id,
            computed.len(),
            latest.map_or_else(|| "none".to_owned(), |s| format!("{:.1} ({})", s.score.as_f64(), s.grade.as_str()))
        );
    }
    say!("{recomputed} rating(s) of {} compan(y/ies) recomputed", companies.len());
    Ok(())
}

/// The findings open at `at`: first seen by then, and still open or closed after it.
fn open_at(open: &[Finding], closed: &[(Finding, model::OffsetDateTimeText)], at: OffsetDateTime) -> Vec<Finding> {
    open.iter()
        .filter(|f| f.first_seen.0 <= at)
        .cloned()
        .chain(closed.iter().filter(|(f, when)| f.first_seen.0 <= at && when.0 > at).map(|(f, _)| f.clone()))
        .collect()
}
