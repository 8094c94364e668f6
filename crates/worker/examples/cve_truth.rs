//! CVE truth (docs/PERFORMANCE.md, "CVE truth"): for each product and version the lab
//! runs, the CVEs Rampart charges (scored attributions) against the set the software's
//! vendor confirms — the CVEs its own advisories (../shared/data/vendor-advisories)
//! state that version affected by, among those whose record is in the NVD corpus
//! (../shared/data nvd-1.1 and nvd-2.0). Each detection is judged twice: on NVD alone,
//! and with the vendors' advisories imported. Printed per detection: true positives,
//! false positives with their cause, misses with their cause; then precision and recall
//! over the detections with vendor data. A detection whose product has no vendor data
//! here is listed with what it is charged, unmeasured.
//!
//!     cargo run --release -p worker --example cve_truth -- ../shared/data

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use lab::{Lab, LabFile};
use model::{CompanyProfile, CveBasis, CveId, Domain, DomainAsset, RiskVector, SocialId};
use scanner::probes::Context;
use scanner::software::Software;
use store::{CompanySnapshot, Store};
use vulndb::advisory::{Scheme, Statement};

type Error = Box<dyn std::error::Error>;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let data = PathBuf::from(std::env::args().nth(1).ok_or("usage: cve_truth SHARED_DATA_DIR")?);
    let dir = tempfile::tempdir()?;
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("truth.db").display())).await?;
    let mut feeds: Vec<PathBuf> = Vec::new();
    for sub in ["nvd-1.1", "nvd-2.0"] {
        let mut in_dir: Vec<PathBuf> =
            std::fs::read_dir(data.join(sub))?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
        in_dir.sort();
        feeds.extend(
            in_dir
                .into_iter()
                .filter(|p| p.to_string_lossy().ends_with(".json") || p.to_string_lossy().ends_with(".json.gz")),
        );
    }
    let started = std::time::Instant::now();
    let imported = vulndb::import::nvd_files(&*store, &feeds).await?;
    eprintln!(
        "NVD corpus: {} records from {} files in {:.1} s",
        imported.written,
        feeds.len(),
        started.elapsed().as_secs_f64()
    );

    let detections = lab_detections(&*store).await?;
    eprintln!("the lab runs {} distinct versioned products", detections.len());
    let now = time::OffsetDateTime::now_utc();
    let mut nvd_only = Vec::new();
    for s in &detections {
        nvd_only.push(charged(&*store, s, now).await?);
    }
    let advisories: Vec<PathBuf> = ["httpd", "nginx", "openssl", "ghsa-npm-jquery"]
        .iter()
        .map(|d| data.join("vendor-advisories").join(d))
        .collect();
    let read = vulndb::import::advisory_files(&*store, &advisories).await?;
    eprintln!("vendor advisories: {} statements", read.read);

    println!(
        "| product version | vendor data | NVD alone: TP / FP / missed | with advisories: TP / FP / missed | causes (with advisories) |"
    );
    println!("|---|---|---|---|---|");
    let (mut before, mut after) = (Tally::default(), Tally::default());
    for (s, (old, _)) in detections.iter().zip(nvd_only) {
        let (new, new_bases) = charged(&*store, s, now).await?;
        let mut label = format!("{} {}", s.name, s.version.as_deref().unwrap_or(""));
        if let Some(p) = &s.packaged {
            label.push_str(&format!(
                " ({} package{})",
                p.distribution,
                p.revision.as_deref().map(|r| format!(" {r}")).unwrap_or_default()
            ));
        }
        let Some(truth) = confirmed(&*store, s).await? else {
            println!("| {label} | none | {} charged | {} charged | not measured |", old.len(), new.len());
            continue;
        };
        let a = before.add(&old, &truth);
        let b = after.add(&new, &truth);
        let mut causes = Vec::new();
        for id in new.difference(&truth) {
            causes.push(format!("{id} FP ({}): the vendor does not state it affected", listed(&new_bases, id)));
        }
        for id in truth.difference(&new) {
            causes.push(format!("{id} missed: {}", listed(&new_bases, id)));
        }
        let causes = if causes.is_empty() { "-".to_owned() } else { causes.join("; ") };
        println!(
            "| {label} | {} CVEs | {} / {} / {} | {} / {} / {} | {causes} |",
            truth.len(),
            a.0,
            a.1,
            a.2,
            b.0,
            b.1,
            b.2
        );
    }
    println!();
    println!("NVD alone:       {}", before.summary());
    println!("with advisories: {}", after.summary());
    Ok(())
}

#[derive(Default)]
struct Tally {
    tp: usize,
    fp: usize,
    missed: usize,
}

impl Tally {
    fn add(&mut self, charged: &BTreeSet<CveId>, truth: &BTreeSet<CveId>) -> (usize, usize, usize) {
        let tp = charged.intersection(truth).count();
        let fp = charged.difference(truth).count();
        let missed = truth.difference(charged).count();
        (self.tp, self.fp, self.missed) = (self.tp + tp, self.fp + fp, self.missed + missed);
        (tp, fp, missed)
    }

    fn summary(&self) -> String {
        let precision = 100.0 * self.tp as f64 / (self.tp + self.fp).max(1) as f64;
        let recall = 100.0 * self.tp as f64 / (self.tp + self.missed).max(1) as f64;
        format!(
            "precision {precision:.1} % ({}/{}), recall {recall:.1} % ({}/{})",
            self.tp,
            self.tp + self.fp,
            self.tp,
            self.tp + self.missed
        )
    }
}

/// The CVEs a detection is charged with (scored attributions), and the basis of every
/// CVE attributed to it.
async fn charged(
    store: &dyn Store,
    s: &Software,
    now: time::OffsetDateTime,
) -> Result<(BTreeSet<CveId>, BTreeMap<CveId, CveBasis>), Error> {
    let inventory = worker::software::inventory(store, std::slice::from_ref(s), None, now).await?;
    let bases: BTreeMap<CveId, CveBasis> =
        inventory.components.iter().flat_map(|c| &c.cves).map(|c| (c.id.clone(), c.basis)).collect();
    Ok((bases.iter().filter(|(_, b)| b.scored()).map(|(id, _)| id.clone()).collect(), bases))
}

/// How a CVE is attributed: its basis, or that nothing matched it.
fn listed(bases: &BTreeMap<CveId, CveBasis>, id: &CveId) -> String {
    match bases.get(id) {
        Some(b) => format!("listed as {b}"),
        None => "not matched".to_owned(),
    }
}

/// The CVEs the product's vendor states the detected version affected by (on every
/// platform), among those whose record the store holds; `None` when the vendor has no
/// statement about the product here.
async fn confirmed(store: &dyn Store, s: &Software) -> Result<Option<BTreeSet<CveId>>, Error> {
    let Some(version) = s.version.as_deref().and_then(scanner::software::release_version) else { return Ok(None) };
    let mut statements = Vec::new();
    for name in &s.cpes {
        let Ok(cpe) = model::Cpe::parse(name) else { continue };
        let mut names = vec![cpe.clone()];
        names.extend(vulndb::aliases::aliases_of(&cpe));
        for n in names {
            for row in store.advisories_for(n.vendor(), n.product()).await? {
                statements.push(Statement::from_row(&row)?);
            }
        }
    }
    let upstream: Vec<&Statement> = statements.iter().filter(|st| st.source.scheme() == Scheme::Upstream).collect();
    if upstream.is_empty() {
        return Ok(None);
    }
    let affected: Vec<CveId> = upstream
        .iter()
        .filter(|st| st.platform.is_none() && st.verdict(&version) == Some(true))
        .map(|st| st.cve.clone())
        .collect();
    let known: BTreeSet<CveId> = store.cves(&affected).await?.into_iter().map(|r| r.id).collect();
    Ok(Some(known))
}

/// Every versioned product the built-in lab's companies run (one per name, version and
/// distribution package), as their scans detect them.
async fn lab_detections(store: &dyn Store) -> Result<Vec<Software>, Error> {
    let file = LabFile::builtin_at(87)?;
    let lab = Lab::up(&file).await?;
    let mut ctx = Context::lab(
        lab.resolver.ok_or("the lab has no resolver")?,
        file.effective_port_map(),
        lab.ca_root_der.clone(),
        &lab.trust_anchor_text(),
    )?;
    ctx.vectors = vec![RiskVector::Sbom, RiskVector::Vulnerabilities];
    let mut all: BTreeMap<(String, Option<String>, String), Software> = BTreeMap::new();
    for company in &file.companies {
        let social_id = company.social_id();
        let domains: Vec<DomainAsset> = company.company["domains"]
            .as_array()
            .ok_or("a lab company without domains")?
            .iter()
            .filter_map(|d| {
                Some(DomainAsset { name: Domain::parse(d["name"].as_str()?).ok()?, attribution: "lab".into() })
            })
            .collect();
        let profile = CompanyProfile {
            social_id: Some(SocialId::parse(social_id)?),
            company_name: company.company["company_name"].as_str().unwrap_or(social_id).to_owned(),
            domain: domains.first().map(|d| d.name.clone()),
            ..Default::default()
        };
        let c = store.save_company(&CompanySnapshot { profile, domains: Some(domains), ..Default::default() }).await?;
        worker::process(store, &ctx, &model::JobSpec::Scan { social_id: SocialId::parse(social_id)? }).await?;
        let Some(kept) = store.detected_software(c.id).await? else { continue };
        for s in serde_json::from_str::<Vec<Software>>(&kept)? {
            if s.cpes.is_empty() || !scanner::checks::vulnerabilities::matchable(&s) {
                continue;
            }
            let packaged =
                s.packaged.as_ref().map(|p| format!("{} {}", p.distribution, p.revision.as_deref().unwrap_or("")));
            all.entry((s.name.clone(), s.version.clone(), packaged.unwrap_or_default())).or_insert(s);
        }
    }
    Ok(all.into_values().collect())
}
