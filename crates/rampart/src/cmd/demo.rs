//! `rampart demo`: the whole pipeline on this machine — the lab up, its fictional
//! companies registered, scanned and rated by in-process workers, working keys and curl
//! commands printed, the API served (workers keep running for rescans). Started again on
//! its database, it serves at once: the companies rated before are queued for the
//! workers, and only those never rated are scanned before it serves.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use model::{Scope, SocialId};
use tokio::net::TcpListener;

use crate::common::{open, shutdown_signal, with_web_app};

#[derive(clap::Args)]
pub(crate) struct Args {
    #[arg(long, env = "RAMPART_LISTEN", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// The demo's own database (never `RAMPART_DB`, which `serve` reads).
    #[arg(long, env = "RAMPART_DEMO_DB", default_value = "rampart-demo.db")]
    db: String,
    /// The second octet of the lab's addresses (127.N.*.*), to run beside another lab.
    #[arg(long, default_value_t = 78)]
    lab_octet: u8,
}

pub(crate) async fn run(args: Args) -> Result<()> {
    let Args { listen, db, lab_octet } = args;
    let started = std::time::Instant::now();
    let store = open(&db).await?;
    let listener = match TcpListener::bind(listen).await {
        Ok(listener) => listener,
        // One line: who has the address (most often a demo already running).
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => anyhow::bail!(
            "the demo's address {listen} is taken by {}: stop it, or start this demo with --listen and --lab-octet",
            lab::holder_text(listen)
        ),
        Err(e) => return Err(e).with_context(|| format!("listening on {listen}")),
    };
    // Nothing hand-written (the sample companies and CVEs are `rampart mock`'s): the
    // lab's companies, scanned, and the real NVD records of the lab's software, the KEV
    // catalogue, an EPSS sample and the vendors' advisories (a fresh machine has no feeds).
    vulndb::import::nvd_bytes_all(&*store, lab::NVD_RECORDS).await?;
    vulndb::import::kev_bytes(&*store, "the lab's KEV catalogue", lab::KEV_CATALOG).await?;
    vulndb::import::epss_bytes(&*store, lab::EPSS_SAMPLE).await?;
    // The vendors' own advisories, whose word is taken over NVD's.
    vulndb::import::advisory_bundle(&*store, "the lab's vendor advisories", lab::ADVISORIES).await?;
    let eol = scanner::software::Eol::rows(lab::EOL_PRODUCTS, "lab").context("the lab's end-of-life data")?;
    store.save_eol_products(&eol).await?;

    // The lab: a simulated internet of fictional companies on 127.0.0.0/8.
    let file = if lab_octet == 78 { lab::LabFile::builtin()? } else { lab::LabFile::builtin_at(lab_octet)? };
    let running = lab::Lab::up(&file).await?;
    let resolver = running.resolver.context("the lab has no DNS server")?;
    let ctx = scanner::probes::Context::lab(
        resolver,
        file.effective_port_map(),
        running.ca_root_der.clone(),
        &running.trust_anchor_text(),
    )?;
    let ctx = Arc::new(worker::with_store_data(ctx, &*store).await?);
    // Parents before their subsidiaries (the importer links a subsidiary to a known parent).
    let mut ordered: Vec<&lab::LabCompany> = file.companies.iter().collect();
    ordered.sort_by_key(|c| c.company.get("parent_social_id").is_some_and(|p| !p.is_null()));
    let lines: String = ordered.iter().map(|c| format!("{}\n", c.company)).collect();
    intel::import_companies(&*store, std::io::Cursor::new(lines)).await?;
    // The lab companies' incident history (fictional, VERIS), linked by name.
    let incidents = intel::link::import_veris_texts(&*store, lab::INCIDENTS).await?;
    if !incidents.errors.is_empty() || incidents.linked_by_name != lab::INCIDENTS.len() {
        anyhow::bail!("the lab's incidents did not import whole: {incidents:?}");
    }
    // Serving never waits for scans of companies rated before (a restart on the same
    // database): their full scans are queued for the workers that run beside the server,
    // at background priority. Only companies never rated are scanned first, so a fresh
    // demo prints its keys with every lab company rated.
    let total = file.companies.len();
    let mut rated_before = Vec::new();
    let mut never_rated = Vec::new();
    for company in &file.companies {
        let id = SocialId::parse(company.social_id())?;
        let latest = match store.company_by_social_id(&id).await? {
            Some(c) => store.latest_score(c.id).await?,
            None => None,
        };
        match latest {
            Some(r) => rated_before.push((id, r)),
            None => never_rated.push(id),
        }
    }
    let doing = match (rated_before.len(), never_rated.len()) {
        (0, _) => "scanning:".to_owned(),
        (_, 0) => "every company was rated before: their scans are queued for the workers".to_owned(),
        (q, n) => format!("{q} companies rated before are queued for the workers, {n} never rated are scanned now:"),
    };
    say!(
        "Rampart demo — database {db}; the lab is up ({} companies, {} hosts, DNS {resolver}); {doing}",
        file.companies.len(),
        file.hosts.len()
    );
    let mut done = 0;
    let now = time::OffsetDateTime::now_utc();
    for (id, r) in &rated_before {
        done += 1;
        let queued = store
            .enqueue_with(&model::JobSpec::Scan { social_id: id.clone() }, model::JobSpec::BACKGROUND, now)
            .await?;
        say!(
            "  [{done:>2}/{total}] {:<24} {} (rated {:.1} ({}) at {})",
            id.as_str(),
            if queued { "scan queued" } else { "scan already queued" },
            r.score.as_f64(),
            r.grade.as_str(),
            model::timefmt::rfc3339(r.scanned_at.0)
        );
    }

    // Scan and rate every company never rated, a few at a time, and say how each came out.
    let mut scans = tokio::task::JoinSet::new();
    let limit = Arc::new(tokio::sync::Semaphore::new(4));
    for id in never_rated {
        let (store, ctx, limit) = (store.clone(), ctx.clone(), limit.clone());
        scans.spawn(async move {
            let _permit = limit.acquire_owned().await;
            let t = std::time::Instant::now();
            let outcome = worker::process(&*store, &ctx, &model::JobSpec::Scan { social_id: id.clone() }).await;
            (id, outcome, t.elapsed())
        });
    }
    while let Some(joined) = scans.join_next().await {
        let (id, outcome, took) = joined?;
        let social_id = id.as_str();
        done += 1;
        let rated = match store.company_by_social_id(&id).await? {
            Some(c) => store.latest_score(c.id).await?,
            None => None,
        };
        match (outcome, rated) {
            (Ok(o), Some(r)) => say!(
                "  [{done:>2}/{total}] {social_id:<24} score {:>5.1} ({})  {} findings  {:.1} s",
                r.score.as_f64(),
                r.grade.as_str(),
                o.opened + o.seen_again,
                took.as_secs_f64()
            ),
            (Ok(_), None) => say!("  [{done:>2}/{total}] {social_id:<24} nothing to rate"),
            (Err(e), _) => say!("  [{done:>2}/{total}] {social_id:<24} scan failed: {e}"),
        }
    }
    if rated_before.is_empty() {
        say!("Scanned and rated in {:.1} s.\n", started.elapsed().as_secs_f64());
    } else {
        say!(
            "Ready in {:.1} s; the {} queued scans run beside the server.\n",
            started.elapsed().as_secs_f64(),
            rated_before.len()
        );
    }

    // Ctrl-C and SIGTERM are listened for before the keys are printed: a stop asked
    // from then on stops the workers and the server alike (until now a signal ends the
    // process as it would any other).
    let (stop_workers, stop_serving) = (shutdown_signal(), shutdown_signal());
    let stamp = model::timefmt::rfc3339(model::timefmt::now());
    let (org, portfolio) = demo_portfolio(&*store, &file).await?;
    let underwriter = super::keys::create_key(
        &*store,
        &format!("demo underwriter {stamp}"),
        super::keys::with_portfolio(vec![Scope::General, Scope::Vulnerability, Scope::Underwriter]),
        None,
        Some(org),
        600,
        100_000,
    )
    .await?;
    let company = SocialId::parse(lab::DEMO_MONITOR_COMPANY)?;
    let monitor = super::keys::create_key(
        &*store,
        &format!("demo monitor {stamp}"),
        vec![Scope::Monitor],
        Some(company.clone()),
        None,
        600,
        100_000,
    )
    .await?;
    let rated = file.companies.first().map(|c| c.social_id().to_owned()).unwrap_or_else(|| company.to_string());
    // The Monitor company's domain, as the lab file gave it.
    let domain = store
        .company_by_social_id(&company)
        .await?
        .and_then(|c| c.domain)
        .with_context(|| format!("the lab has no company {company} with a domain"))?;
    let base = format!("http://{}", listener.local_addr()?);
    say!("{:<54} {underwriter}", "Underwriter key (general, vulnerability, underwriter, portfolio):");
    say!("{:<54} {monitor}\n", format!("Monitor key for {company}:"));
    say!("Try:");
    say!("  curl -s -H 'apikey: {underwriter}' '{base}/underwriter-getcompanyscores?social_id={rated}'");
    say!("  curl -s -H 'apikey: {underwriter}' '{base}/general-getsocialid-by-domain?domain={domain}'");
    say!(
        "  curl -s -H 'apikey: {monitor}' '{base}/monitor-get-subdomain-findings?subdomain={domain}&risk_vector_type=DMARC'"
    );
    say!("  curl -s -H 'apikey: {underwriter}' '{base}/portfolio-getcompanies?portfolio_id={portfolio}&sort=-score'");
    say!("\nWeb app (sign in with a key above): {base}/");
    say!("API documentation: {base}/docs   (Ctrl-C stops the server and the lab)");
    // Workers keep running beside the API: rescans and new companies are scanned in the lab.
    let config = worker::Config { concurrency: 2, ..Default::default() };
    let workers = tokio::spawn(worker::run(store.clone(), ctx, config, stop_workers));
    // The lab's companies live on 127.0.0.0/8: their own addresses may be added.
    let state = api::AppState::with_store(store, api::Config { lab_addresses: true, ..Default::default() });
    api::serve_app(listener, state.clone(), with_web_app(&state), stop_serving).await?;
    let _ = workers.await;
    running.down().await;
    Ok(())
}

/// The demo's organisation and its portfolio of the lab's companies (made once; a demo
/// started again on its database finds them): their ids.
async fn demo_portfolio(store: &dyn store::Store, file: &lab::LabFile) -> Result<(i64, i64)> {
    const ORG: &str = "Demo Underwriting";
    const PORTFOLIO: &str = "Lab companies";
    let org = match store.org_by_name(ORG).await? {
        Some(org) => org,
        None => store.create_org(ORG).await?,
    };
    let portfolio = match store.portfolios(org.id).await?.into_iter().find(|p| p.name == PORTFOLIO) {
        Some(p) => p,
        None => store
            .create_portfolio(org.id, PORTFOLIO, 1)
            .await?
            .with_context(|| format!("the demo's portfolio {PORTFOLIO:?} could not be made"))?,
    };
    let mut members = Vec::new();
    for (i, c) in file.companies.iter().enumerate() {
        let sid = SocialId::parse(c.social_id())?;
        let Some(company) = store.company_by_social_id(&sid).await? else { continue };
        // Tiers 1 to 4 in turn, so the demo's list has some to sort and filter by.
        let record = model::VendorRecord { tier: Some(model::Tier::new((i % 4) as i64 + 1)?), ..Default::default() };
        members.push((company.id, record));
    }
    store.add_to_portfolio(portfolio.id, &members).await?;
    Ok((org.id, portfolio.id))
}
