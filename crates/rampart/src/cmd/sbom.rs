//! `rampart sbom SOCIAL_ID`: a company's external SBOM as CycloneDX 1.5 JSON (or plain
//! JSON lines of the stored components).
//!
//! Each component carries its name, version, CPE and package URL, the hosts it was seen
//! on (`evidence.occurrences`), how it was identified (`evidence.identity`, with the
//! engine's confidence), and its lifecycle as properties; each CVE matched to a
//! component is a `vulnerabilities` entry with its NVD ratings, CISA KEV and EPSS, that
//! `affects` the component.

use std::collections::BTreeMap;

use anyhow::{Context as _, Result, bail};
use clap::ValueEnum;
use model::{Page, SbomComponent, SocialId};
use serde_json::{Value, json};

use crate::flags::DbArg;

#[derive(clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    db: DbArg,
    social_id: String,
    #[arg(long, value_enum, default_value = "cyclonedx")]
    format: SbomFormat,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum SbomFormat {
    /// CycloneDX 1.5 JSON.
    Cyclonedx,
    /// The stored components as JSON.
    Json,
}

/// Every page of a paged store read.
async fn all_pages<T, F, Fut>(mut read: F) -> Result<Vec<T>>
where
    F: FnMut(Page) -> Fut,
    Fut: std::future::Future<Output = store::Result<store::Paged<T>>>,
{
    let mut out = Vec::new();
    for n in 1.. {
        let page = Page::parse(Some(&n.to_string())).map_err(|e| anyhow::anyhow!("{e}"))?;
        let got = read(page).await?;
        let done = got.items.is_empty() || (out.len() + got.items.len()) as u64 >= got.total;
        out.extend(got.items);
        if done {
            break;
        }
    }
    Ok(out)
}

pub(crate) async fn run(args: Args) -> Result<()> {
    export(&args.db.db, &args.social_id, args.format).await
}

async fn export(db: &str, social_id: &str, format: SbomFormat) -> Result<()> {
    let store = store::open(db).await.with_context(|| format!("opening {}", store::redact_url(db)))?;
    let id = SocialId::parse(social_id).with_context(|| format!("{social_id:?} is not a social id"))?;
    let Some(company) = store.company_by_social_id(&id).await? else { bail!("company {social_id} is not known") };
    let components = all_pages(|p| store.sbom(company.id, p, false)).await?;
    let doc = match format {
        SbomFormat::Json => serde_json::to_value(&components)?,
        SbomFormat::Cyclonedx => {
            let apps = all_pages(|p| store.applications(company.id, p)).await?;
            let categories: BTreeMap<String, Vec<String>> =
                apps.into_iter().map(|a| (a.name.to_ascii_lowercase(), a.categories)).collect();
            let ids: Vec<model::CveId> = {
                let mut ids: Vec<model::CveId> =
                    components.iter().flat_map(|c| c.cves.iter().map(|a| a.id.clone())).collect();
                ids.sort();
                ids.dedup();
                ids
            };
            let records = store.cves(&ids).await?;
            cyclonedx(&company, &components, &categories, &records, time::OffsetDateTime::now_utc())
        }
    };
    say!("{}", serde_json::to_string_pretty(&doc)?);
    Ok(())
}

/// The CycloneDX component type of a technology, from its categories.
fn component_type(categories: &[String]) -> &'static str {
    let has = |words: &[&str]| categories.iter().any(|c| words.iter().any(|w| c.to_ascii_lowercase().contains(w)));
    if has(&["operating system"]) {
        "operating-system"
    } else if has(&["javascript libraries", "ui frameworks", "libraries", "cryptography"]) {
        "library"
    } else if has(&["framework"]) {
        "framework"
    } else if has(&["network device", "appliance"]) {
        "device"
    } else {
        "application"
    }
}

fn rating_severity(score: f64) -> &'static str {
    match score {
        s if s >= 9.0 => "critical",
        s if s >= 7.0 => "high",
        s if s >= 4.0 => "medium",
        s if s > 0.0 => "low",
        _ => "none",
    }
}

/// Why an attribution is listed only, or scored with doubt.
fn unscored_detail(basis: model::CveBasis) -> &'static str {
    match basis {
        model::CveBasis::PlatformConditional => {
            "platform-conditional: it holds only with a platform the scan did not observe; not scored"
        }
        model::CveBasis::DistributionBackportUnknown => {
            "distribution-backport-unknown: a distribution's package, whose fix may be backported; scored with a \
             lower confidence"
        }
        model::CveBasis::VendorUnlisted => {
            "vendor-unlisted: the vendor lists every CVE of its product and not this one; not scored"
        }
        _ => "unbounded: the NVD entry names no version bounds, or an edition or platform not observed; not scored",
    }
}

/// The CycloneDX 1.5 document of a company's components.
fn cyclonedx(
    company: &model::Company,
    components: &[SbomComponent],
    categories: &BTreeMap<String, Vec<String>>,
    records: &[model::CveRecord],
    now: time::OffsetDateTime,
) -> Value {
    let stamp = model::timefmt::rfc3339(now);
    let mut comps = Vec::with_capacity(components.len());
    // CVE → the components it is attributed to, and its strongest basis among them.
    let mut refs: BTreeMap<String, (Vec<String>, model::CveBasis)> = BTreeMap::new();
    for (i, c) in components.iter().enumerate() {
        let bom_ref = format!("component-{}", i + 1);
        for cve in &c.cves {
            let (affects, basis) = refs.entry(cve.id.to_string()).or_insert((Vec::new(), cve.basis));
            affects.push(bom_ref.clone());
            *basis = (*basis).min(cve.basis);
        }
        let cats = categories.get(&c.name.to_ascii_lowercase()).cloned().unwrap_or_default();
        let confidence = f64::from(c.confidence.unwrap_or(100)) / 100.0;
        let field = if c.purl.is_some() {
            "purl"
        } else if c.cpe.is_some() {
            "cpe"
        } else {
            "name"
        };
        let mut properties = vec![json!({"name": "rampart:evidence", "value": c.evidence})];
        for cat in &cats {
            properties.push(json!({"name": "rampart:category", "value": cat}));
        }
        if let Some(eol) = c.end_of_life {
            properties.push(json!({"name": "rampart:end_of_life", "value": eol.to_string()}));
        }
        if let Some(latest) = &c.latest_version {
            properties.push(json!({"name": "rampart:latest_version", "value": latest}));
        }
        let mut comp = json!({
            "type": component_type(&cats),
            "bom-ref": bom_ref,
            "name": c.name,
            "evidence": {
                "identity": {
                    "field": field,
                    "confidence": confidence,
                    "methods": [{"technique": "other", "confidence": confidence, "value": c.evidence}]
                },
                "occurrences": c.hosts.iter().map(|h| json!({"location": h.as_str()})).collect::<Vec<_>>()
            },
            "properties": properties
        });
        if let Some(v) = &c.version {
            comp["version"] = json!(v);
        }
        if let Some(cpe) = &c.cpe {
            comp["cpe"] = json!(cpe);
        }
        if let Some(purl) = &c.purl {
            comp["purl"] = json!(purl);
        }
        comps.push(comp);
    }
    let mut vulns = Vec::new();
    for r in records {
        let Some((affects, basis)) = refs.get(r.id.as_str()) else { continue };
        let mut ratings = Vec::new();
        if let Some(s) = r.cvss3 {
            ratings.push(
                json!({"source": {"name": "NVD"}, "score": s, "severity": rating_severity(s), "method": "CVSSv3"}),
            );
        }
        if let Some(s) = r.cvss {
            let mut rating =
                json!({"source": {"name": "NVD"}, "score": s, "severity": rating_severity(s), "method": "CVSSv2"});
            if let Some(v) = &r.cvss_vector {
                rating["vector"] = json!(v);
            }
            ratings.push(rating);
        }
        let mut properties = vec![json!({"name": "rampart:basis", "value": basis.as_str()})];
        if r.kev.is_some() {
            properties.push(json!({"name": "rampart:cisa_kev", "value": "true"}));
        }
        if let Some(e) = r.epss {
            properties.push(json!({"name": "rampart:epss", "value": format!("{e}")}));
        }
        let mut v = json!({
            "bom-ref": r.id.as_str(),
            "id": r.id.as_str(),
            "source": {"name": "NVD", "url": format!("https://nvd.nist.gov/vuln/detail/{}", r.id)},
            "ratings": ratings,
            "description": r.summary,
            "affects": affects.iter().map(|a| json!({"ref": a})).collect::<Vec<_>>()
        });
        if let Ok(n) = r.cwe.trim_start_matches("CWE-").parse::<u32>() {
            v["cwes"] = json!([n]);
        }
        v["properties"] = json!(properties);
        if !basis.scored() || *basis == model::CveBasis::DistributionBackportUnknown {
            // Listed, not charged, or charged with doubt (docs/METHODOLOGY.md): NVD's
            // entry does not say that the version seen is affected, or the distribution
            // may have backported the fix.
            v["analysis"] = json!({"state": "in_triage", "detail": unscored_detail(*basis)});
        }
        vulns.push(v);
    }
    json!({
        "$schema": "http://cyclonedx.org/schema/bom-1.5.schema.json",
        "bomFormat": "CycloneDX",
        "specVersion": "1.5",
        "serialNumber": format!("urn:uuid:{}", uuid::Uuid::new_v4()),
        "version": 1,
        "metadata": {
            "timestamp": stamp,
            "tools": {"components": [{"type": "application", "name": "rampart", "version": env!("CARGO_PKG_VERSION")}]},
            "component": {
                "type": "application",
                "bom-ref": format!("company:{}", company.social_id),
                "name": company.company_name,
                "description": format!("The internet-facing software of {} as Rampart's scans detected it", company.company_name)
            }
        },
        "components": comps,
        "vulnerabilities": vulns
    })
}
