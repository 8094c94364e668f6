//! The rating: a company's open findings, judged against what its scan assessed, become
//! twelve component scores and a global score (docs/METHODOLOGY.md, "Rating", is the
//! document; this crate is its executable form and carries its version).
//!
//! - A finding costs points by severity; a component's score is
//!   `100 · exp(−D / N)` with `D` the points over 50 and `N = 1 + ln(assets) / 2`, so
//!   the same finding weighs less on a larger footprint, sublinearly.
//! - A component that assessed nothing is not assessable (no score, and the reason); the
//!   global score is the weighted mean over the assessable ones.
//! - Caps bound the global score where no average may hide a fact (an actively exploited
//!   CVE, an exposed database, an expired certificate on the main site, any critical
//!   finding).
//!
//! Pure functions: the same findings give the same rating in any order on any machine;
//! removing a finding never lowers any score (tests/properties.rs).

#![forbid(unsafe_code)]

pub mod alerts;
pub mod change;
pub mod exposure;
pub mod guidelines;
pub mod peers;
pub mod plan;
pub mod predict;

use std::collections::{BTreeMap, BTreeSet};

use model::{ComponentScore, Finding, Grade, OffsetDateTimeText, RiskVector, Score, ScoreSnapshot, Severity};
use serde::Serialize;

/// The version of the method; every stored rating records it.
pub const METHODOLOGY_VERSION: &str = "2026.11";

/// What the rating judges.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The company's open findings, in any order.
    pub findings: &'a [Finding],
    /// Per component, the assets the scan assessed (absent or 0: not assessable).
    pub assets_checked: &'a BTreeMap<RiskVector, u32>,
    /// CVE ids in the CISA KEV catalogue (exploited in the wild).
    pub kev: &'a BTreeSet<String>,
    /// The host of the company's website (`www.acme.test`).
    pub website_host: Option<&'a str>,
}

/// The points one finding cost its component.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Penalty {
    pub code: String,
    pub asset: String,
    pub severity: Severity,
    pub cve: Option<String>,
    pub points: f64,
}

/// One of the twelve components.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComponentRating {
    pub risk_vector: RiskVector,
    /// 0–100, one decimal; none when not assessable.
    pub score: Option<f64>,
    pub grade: Option<Grade>,
    /// The nominal weight, in percent (the twelve sum to 100).
    pub weight: f64,
    /// The weight in this rating, after re-weighting over the assessable components.
    pub effective_weight: f64,
    pub assets_checked: u32,
    pub findings_count: u32,
    /// Worst first (then by code and asset).
    pub penalties: Vec<Penalty>,
    /// Why there is no score.
    pub not_assessable: Option<String>,
}

/// A bound on the global score, and the findings that set it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cap {
    pub reason: String,
    pub max_score: f64,
    /// `code on asset`, sorted.
    pub findings: Vec<String>,
}

/// The rating of one company at one time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rating {
    pub methodology: &'static str,
    /// 0–100, one decimal; none when no component is assessable.
    pub score: Option<f64>,
    pub grade: Option<Grade>,
    /// The weighted mean before the caps.
    pub uncapped_score: Option<f64>,
    /// All twelve, in `RiskVector::ALL` order.
    pub components: Vec<ComponentRating>,
    /// The caps that lowered the score, lowest bound first.
    pub caps: Vec<Cap>,
    /// Some component was not assessable and the others carry its weight.
    pub reweighted: bool,
}

/// A component's share of the global score, in percent.
pub fn weight_of(v: RiskVector) -> f64 {
    use RiskVector as V;
    match v {
        V::Vulnerabilities => 14.0,
        V::CertificateConf => 13.0,
        V::OpenPorts => 12.0,
        V::CertificateInfo => 10.0,
        V::CertificateCve => 8.0,
        V::WebHeaders => 7.0,
        V::Dmarc => 7.0,
        V::Sbom => 7.0,
        V::Digitalization => 7.0,
        V::ItStandardization => 6.0,
        V::Spf => 5.0,
        V::Dkim => 4.0,
    }
}

/// The points that take a component on one asset from 100 to 100/e (36.8).
pub const POINTS_SCALE: f64 = 50.0;

/// The points a finding of this severity costs.
pub fn points_of(s: Severity) -> f64 {
    match s {
        Severity::Critical => 60.0,
        Severity::High => 20.0,
        Severity::Medium => 8.0,
        Severity::Low => 3.0,
        Severity::Info => 0.0,
    }
}

/// A–F: A ≥ 90, B ≥ 80, C ≥ 70, D ≥ 60, E ≥ 50, F below.
pub fn grade_of(score: f64) -> Grade {
    match score {
        s if s >= 90.0 => Grade::A,
        s if s >= 80.0 => Grade::B,
        s if s >= 70.0 => Grade::C,
        s if s >= 60.0 => Grade::D,
        s if s >= 50.0 => Grade::E,
        _ => Grade::F,
    }
}

/// The least score of a grade ([`grade_of`]'s bounds).
pub fn grade_floor(g: Grade) -> f64 {
    match g {
        Grade::A => 90.0,
        Grade::B => 80.0,
        Grade::C => 70.0,
        Grade::D => 60.0,
        Grade::E => 50.0,
        Grade::F => 0.0,
    }
}

/// Why a component with nothing assessed has no score.
fn not_assessable_reason(v: RiskVector) -> &'static str {
    use RiskVector as V;
    match v {
        V::Spf | V::Dmarc | V::ItStandardization => "no company domain was checked",
        V::Dkim => "the company's domains receive no mail",
        V::CertificateInfo | V::CertificateConf | V::CertificateCve => "no TLS endpoint answered",
        V::OpenPorts => "no host with an address was found",
        V::WebHeaders => "no web origin could be assessed (none answered 2xx with an application)",
        V::Digitalization => "no host was found",
        V::Sbom => "no software was detected",
        V::Vulnerabilities => "no software with a version was detected",
    }
}

fn round1(x: f64) -> f64 {
    let r = (x * 10.0).round() / 10.0;
    if r.is_finite() { r.clamp(0.0, 100.0) } else { 0.0 }
}

/// `100 · exp(−D / N)`: D = points / 50, N = 1 + ln(assets) / 2 (assets ≥ 1).
pub fn component_score(points: f64, assets: u32) -> f64 {
    let n = 1.0 + f64::from(assets.max(1)).ln() / 2.0;
    let d = points.max(0.0) / POINTS_SCALE;
    round1(100.0 * (-d / n).exp())
}

/// web_headers the Observatory's way: each origin starts at 100 and loses the
/// Observatory's modifier for each of its findings (at least 0); the component is the
/// mean over the origins assessed (origins without findings count 100). An origin is its
/// host: `http://H/` (the redirect check) and `https://H/` are one site.
pub fn observatory_component(penalties: &[Penalty], origins: u32) -> f64 {
    let mut by_host: BTreeMap<String, f64> = BTreeMap::new();
    for p in penalties {
        let host = p.asset.split_once("://").map_or(p.asset.as_str(), |(_, rest)| rest);
        let host = host.split(['/', ':']).next().unwrap_or(host).to_ascii_lowercase();
        *by_host.entry(host).or_default() += p.points;
    }
    let n = f64::from(origins).max(by_host.len() as f64).max(1.0);
    let lost: f64 = by_host.values().map(|p| p.min(100.0)).sum();
    round1(100.0 - lost / n)
}

fn describe(f: &Finding) -> String {
    format!("{} on {}", f.code, f.asset)
}

/// A cap: its reason, its bound, and which findings set it.
type CapRule<'a> = (&'static str, f64, &'a dyn Fn(&Finding) -> bool);

/// Each cap rule with the findings (their index in `input.findings`) that set it.
pub(crate) fn cap_setters(input: &Input<'_>) -> Vec<(&'static str, f64, Vec<usize>)> {
    let website = input.website_host.map(str::to_ascii_lowercase);
    let on_website = |asset: &str| {
        website.as_deref().is_some_and(|w| {
            let asset = asset.to_ascii_lowercase();
            let host =
                asset.split_once("://").map_or(asset.as_str(), |(_, rest)| rest.split('/').next().unwrap_or(rest));
            host == w || host.strip_prefix(w).is_some_and(|rest| rest.starts_with(':'))
        })
    };
    let rules: [CapRule<'_>; 4] = [
        ("an exposed database or cache (a critical open port)", 59.9, &|f: &Finding| {
            f.risk_vector == RiskVector::OpenPorts && f.severity == Severity::Critical
        }),
        ("an actively exploited CVE (CISA KEV)", 69.9, &|f: &Finding| {
            f.cve.as_ref().is_some_and(|c| input.kev.contains(c.as_str()))
        }),
        ("an expired certificate on the main website", 69.9, &|f: &Finding| {
            f.code == "certificate_info.expired" && on_website(&f.asset)
        }),
        ("a critical finding", 79.9, &|f: &Finding| f.severity == Severity::Critical),
    ];
    rules
        .iter()
        .map(|(reason, max, applies)| {
            let setters = input.findings.iter().enumerate().filter(|(_, f)| applies(f)).map(|(i, _)| i).collect();
            (*reason, *max, setters)
        })
        .collect()
}

/// The caps the findings set, lowest bound first (each reason once).
fn caps_of(input: &Input<'_>) -> Vec<Cap> {
    let mut caps: Vec<Cap> = cap_setters(input)
        .into_iter()
        .filter_map(|(reason, max, setters)| {
            let mut findings: Vec<String> = setters.iter().map(|i| describe(&input.findings[*i])).collect();
            findings.sort();
            findings.dedup();
            (!findings.is_empty()).then(|| Cap { reason: reason.to_owned(), max_score: max, findings })
        })
        .collect();
    caps.sort_by(|a, b| a.max_score.total_cmp(&b.max_score).then_with(|| a.reason.cmp(&b.reason)));
    caps
}

/// The points a finding costs its component (an accepted compensating control: none).
pub fn finding_points(f: &Finding) -> f64 {
    if f.no_weight {
        0.0
    } else if f.risk_vector == RiskVector::WebHeaders {
        f64::from(model::observatory_penalty(&f.code))
    } else {
        points_of(f.severity)
    }
}

/// Rates the input.
pub fn rate(input: &Input<'_>) -> Rating {
    let mut by_vector: BTreeMap<RiskVector, Vec<&Finding>> = BTreeMap::new();
    // A finding with an accepted compensating control is shown and weighs nothing.
    for f in input.findings.iter().filter(|f| !f.no_weight) {
        by_vector.entry(f.risk_vector).or_default().push(f);
    }
    let mut components: Vec<ComponentRating> = RiskVector::ALL
        .iter()
        .map(|&v| {
            let findings = by_vector.get(&v).map(Vec::as_slice).unwrap_or_default();
            let assets = input.assets_checked.get(&v).copied().unwrap_or(0);
            let web = v == RiskVector::WebHeaders;
            let mut penalties: Vec<Penalty> = findings
                .iter()
                .map(|f| Penalty {
                    code: f.code.clone(),
                    asset: f.asset.clone(),
                    severity: f.severity,
                    cve: f.cve.as_ref().map(|c| c.as_str().to_owned()),
                    points: finding_points(f),
                })
                .filter(|p| p.points > 0.0)
                .collect();
            penalties.sort_by(|a, b| {
                b.points
                    .total_cmp(&a.points)
                    .then_with(|| a.code.cmp(&b.code))
                    .then_with(|| a.asset.cmp(&b.asset))
                    .then_with(|| a.cve.cmp(&b.cve))
            });
            // Summed in a fixed order: the same total on every machine.
            let points: f64 = penalties.iter().map(|p| p.points).sum();
            let assessable = assets > 0;
            let score = assessable
                .then(|| if web { observatory_component(&penalties, assets) } else { component_score(points, assets) });
            ComponentRating {
                risk_vector: v,
                score,
                grade: score.map(grade_of),
                weight: weight_of(v),
                effective_weight: 0.0,
                assets_checked: assets,
                findings_count: u32::try_from(findings.len()).unwrap_or(u32::MAX),
                penalties,
                not_assessable: (!assessable).then(|| not_assessable_reason(v).to_owned()),
            }
        })
        .collect();
    let total_weight: f64 = components.iter().filter(|c| c.score.is_some()).map(|c| c.weight).sum();
    let reweighted = components.iter().any(|c| c.score.is_none());
    let mut weighted = 0.0;
    for c in &mut components {
        if let Some(s) = c.score
            && total_weight > 0.0
        {
            c.effective_weight = (c.weight * 100.0 / total_weight * 100.0).round() / 100.0;
            weighted += c.weight * s;
        }
    }
    let uncapped = (total_weight > 0.0).then(|| round1(weighted / total_weight));
    let caps: Vec<Cap> = match uncapped {
        Some(u) => caps_of(input).into_iter().filter(|c| c.max_score < u).collect(),
        None => Vec::new(),
    };
    let score = uncapped.map(|u| caps.iter().map(|c| c.max_score).fold(u, f64::min));
    Rating {
        methodology: METHODOLOGY_VERSION,
        score,
        grade: score.map(grade_of),
        uncapped_score: uncapped,
        components,
        caps,
        reweighted,
    }
}

/// What the store keeps of a rating: a component that was not assessable is stored
/// with score 100, grade A and weight 0 beside its reason (the API shows it as not
/// assessable); none when nothing at all was assessable.
pub fn snapshot(rating: &Rating, scanned_at: OffsetDateTimeText) -> Option<ScoreSnapshot> {
    let score = Score::from_f64(rating.score?).ok()?;
    let grade = rating.grade?;
    let mut components = BTreeMap::new();
    for c in &rating.components {
        let (s, g) = match (c.score, c.grade) {
            (Some(s), Some(g)) => (Score::from_f64(s).ok()?, g),
            _ => (Score::from_f64(100.0).ok()?, Grade::A),
        };
        components.insert(
            c.risk_vector,
            ComponentScore {
                score: s,
                grade: g,
                weight: Score::from_f64(c.effective_weight).ok()?,
                assets_checked: c.assets_checked,
                findings_count: c.findings_count,
                not_assessable: c.not_assessable.clone(),
                checks: None,
            },
        );
    }
    Some(ScoreSnapshot {
        scanned_at,
        score,
        grade,
        components,
        methodology: Some(METHODOLOGY_VERSION.to_owned()),
        notes: Vec::new(),
        reason: None,
        quick: false,
    })
}

/// What the crate's tests build findings with.
#[cfg(test)]
pub(crate) mod testing {
    use model::{Finding, OffsetDateTimeText, RiskVector, Severity};

    /// A finding of `code` on `asset` (id 0, seen at the epoch).
    pub(crate) fn finding(v: RiskVector, severity: Severity, code: &str, asset: &str) -> Finding {
        Finding {
            id: 0,
            risk_vector: v,
            asset: asset.into(),
            severity,
            code: code.into(),
            title: String::new(),
            evidence: String::new(),
            remediation: String::new(),
            references: Vec::new(),
            cve: None,
            component: None,
            first_seen: OffsetDateTimeText(time::OffsetDateTime::UNIX_EPOCH),
            last_seen: OffsetDateTimeText(time::OffsetDateTime::UNIX_EPOCH),
            disputed: false,
            no_weight: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/METHODOLOGY.md and this code say the same: findings are normalised by the
    /// assets assessed (`N = 1 + ln(A) / 2`), not by company size, and its worked
    /// examples are what `component_score` computes.
    #[test]
    fn the_methodology_document_says_what_the_code_does() {
        let doc = include_str!("../../../docs/METHODOLOGY.md");
        let flat = doc.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("score = 100 · exp(−(P / 50) / N), N = 1 + ln(A) / 2"), "the formula");
        assert!(flat.contains("it does not normalise by the company's size"), "no size normalisation claimed");
        assert!(!flat.contains("normalises it by company size"));
        for (points, assets, shown) in [(20.0, 2, "74.3"), (11.0, 2, "84.9"), (60.0, 1, "30.1"), (60.0, 50, "66.6")] {
            let computed = format!("{:.1}", component_score(points, assets));
            assert_eq!(computed, shown, "{points} points on {assets} assets");
            assert!(flat.contains(shown), "the document shows {shown}");
        }
    }

    use crate::testing::finding;

    fn all(assets: u32) -> BTreeMap<RiskVector, u32> {
        RiskVector::ALL.iter().map(|v| (*v, assets)).collect()
    }

    fn component(r: &Rating, v: RiskVector) -> &ComponentRating {
        r.components.iter().find(|c| c.risk_vector == v).expect("all twelve")
    }

    #[test]
    fn the_weights_sum_to_a_hundred() {
        let sum: f64 = RiskVector::ALL.iter().map(|v| weight_of(*v)).sum();
        assert!((sum - 100.0).abs() < 1e-9, "{sum}");
    }

    #[test]
    fn worked_examples() {
        // One high on one asset: 100·e^(−0.4) = 67.0. On 20 assets, N = 1 + ln 20 / 2 = 2.498:
        // 100·e^(−0.4/2.498) = 85.2. One critical on one asset: 100·e^(−1.2) = 30.1.
        assert_eq!(component_score(20.0, 1), 67.0);
        assert_eq!(component_score(20.0, 20), 85.2);
        assert_eq!(component_score(60.0, 1), 30.1);
        assert_eq!(component_score(0.0, 5), 100.0);
        // DMARC p=none (medium, 8) and no rua (low, 3) on 2 domains: N = 1.347,
        // 100·e^(−0.22/1.347) = 84.9.
        assert_eq!(component_score(11.0, 2), 84.9);
        // Fifty hosts, one critical: 100·e^(−1.2/2.956) = 66.6.
        assert_eq!(component_score(60.0, 50), 66.6);
        assert_eq!(component_score(1e9, 1), 0.0);
    }

    #[test]
    fn a_clean_company_scores_a_hundred_and_nothing_assessed_is_no_score() {
        let kev = BTreeSet::new();
        let assets = all(3);
        let r = rate(&Input { findings: &[], assets_checked: &assets, kev: &kev, website_host: None });
        assert_eq!((r.score, r.grade, r.reweighted), (Some(100.0), Some(Grade::A), false));
        let none = BTreeMap::new();
        let r = rate(&Input { findings: &[], assets_checked: &none, kev: &kev, website_host: None });
        assert_eq!((r.score, r.grade), (None, None));
        assert!(r.components.iter().all(|c| c.not_assessable.is_some()));
        assert!(snapshot(&r, OffsetDateTimeText(time::OffsetDateTime::UNIX_EPOCH)).is_none());
    }

    #[test]
    fn not_assessable_components_carry_no_weight() {
        let kev = BTreeSet::new();
        let mut assets = all(2);
        assets.insert(RiskVector::Dkim, 0);
        let findings = [finding(RiskVector::Spf, Severity::High, "spf.missing", "a.test")];
        let r = rate(&Input { findings: &findings, assets_checked: &assets, kev: &kev, website_host: None });
        let dkim = component(&r, RiskVector::Dkim);
        assert_eq!((dkim.score, dkim.effective_weight), (None, 0.0));
        assert_eq!(dkim.not_assessable.as_deref(), Some("the company's domains receive no mail"));
        assert!(r.reweighted);
        // SPF: 100·e^(−0.4/1.347) = 74.3; the other ten score 100 over weight 96.
        let spf = component(&r, RiskVector::Spf);
        assert_eq!(spf.score, Some(74.3));
        assert_eq!(spf.effective_weight, 5.21);
        let expected = round1((5.0 * 74.3 + 91.0 * 100.0) / 96.0);
        assert_eq!(r.score, Some(expected));
        assert_eq!(expected, 98.7);
        let snap = snapshot(&r, OffsetDateTimeText(time::OffsetDateTime::UNIX_EPOCH)).expect("rated");
        assert_eq!(snap.components[&RiskVector::Dkim].weight, Score::from_f64(0.0).expect("0"));
        assert!(snap.components[&RiskVector::Dkim].not_assessable.is_some());
        assert_eq!(snap.methodology.as_deref(), Some(METHODOLOGY_VERSION));
    }

    #[test]
    fn caps() {
        let assets = all(50);
        let mut kev = BTreeSet::new();
        // A lone critical open port on a large footprint averages high, but is capped.
        let db = finding(RiskVector::OpenPorts, Severity::Critical, "open_ports.redis_exposed", "db.a.test:6379");
        let r = rate(&Input {
            findings: std::slice::from_ref(&db),
            assets_checked: &assets,
            kev: &kev,
            website_host: None,
        });
        assert!(r.uncapped_score.is_some_and(|u| u > 95.0), "{r:?}");
        assert_eq!(r.score, Some(59.9));
        assert_eq!(r.grade, Some(Grade::E));
        assert_eq!(r.caps.len(), 2, "the database and the critical: {:?}", r.caps);
        assert_eq!(r.caps[0].findings, ["open_ports.redis_exposed on db.a.test:6379"]);

        let mut cve = finding(RiskVector::Vulnerabilities, Severity::High, "vulnerabilities.cve", "www.a.test");
        cve.cve = model::CveId::parse("CVE-2021-41773").ok();
        let r = rate(&Input {
            findings: std::slice::from_ref(&cve),
            assets_checked: &assets,
            kev: &kev,
            website_host: None,
        });
        assert!(r.caps.is_empty() && r.score.is_some_and(|s| s > 95.0));
        kev.insert("CVE-2021-41773".to_owned());
        let r = rate(&Input {
            findings: std::slice::from_ref(&cve),
            assets_checked: &assets,
            kev: &kev,
            website_host: None,
        });
        assert_eq!((r.score, r.grade), (Some(69.9), Some(Grade::D)));

        let expired =
            finding(RiskVector::CertificateInfo, Severity::High, "certificate_info.expired", "www.a.test:443");
        let site = Some("www.a.test");
        let r = rate(&Input {
            findings: std::slice::from_ref(&expired),
            assets_checked: &assets,
            kev: &kev,
            website_host: site,
        });
        assert_eq!(r.score, Some(69.9));
        let other = Some("shop.a.test");
        let r = rate(&Input {
            findings: std::slice::from_ref(&expired),
            assets_checked: &assets,
            kev: &kev,
            website_host: other,
        });
        assert!(r.caps.is_empty(), "not the main site: {:?}", r.caps);
    }

    #[test]
    fn web_headers_score_the_observatory_way() {
        let kev = BTreeSet::new();
        let mut assets = all(1);
        assets.insert(RiskVector::WebHeaders, 4);
        let f = |code: &str, asset: &str| finding(RiskVector::WebHeaders, Severity::Medium, code, asset);
        // www: HSTS missing (20) + no redirect on http:// (20) = 60; api: CORS (50); two clean.
        let findings = [
            f("web_headers.hsts_missing", "https://www.a.test/"),
            f("web_headers.no_https_redirect", "http://www.a.test/"),
            f("web_headers.cors_wildcard_with_credentials", "https://api.a.test/"),
            f("web_headers.version_disclosure", "https://www.a.test/"),
        ];
        let r = rate(&Input { findings: &findings, assets_checked: &assets, kev: &kev, website_host: None });
        let w = component(&r, RiskVector::WebHeaders);
        // (60 + 50 + 100 + 100) / 4 = 77.5
        assert_eq!(w.score, Some(77.5));
        assert_eq!(w.penalties.len(), 3, "version disclosure has no Observatory modifier");
        assert_eq!(w.penalties[0].points, 50.0);
        // An origin never goes below 0.
        let many: Vec<Finding> =
            (0..10).map(|_| f("web_headers.cookie_without_httponly", "https://x.a.test/")).collect();
        assert_eq!(
            observatory_component(
                &rate(&Input { findings: &many, assets_checked: &assets, kev: &kev, website_host: None }).components[5]
                    .penalties,
                4
            ),
            75.0
        );
    }

    #[test]
    fn grade_boundaries() {
        for (s, g) in [(100.0, Grade::A), (90.0, Grade::A), (89.9, Grade::B), (80.0, Grade::B), (79.9, Grade::C)] {
            assert_eq!(grade_of(s), g, "{s}");
        }
        for (s, g) in [(70.0, Grade::C), (69.9, Grade::D), (60.0, Grade::D), (59.9, Grade::E), (50.0, Grade::E)] {
            assert_eq!(grade_of(s), g, "{s}");
        }
        assert_eq!(grade_of(49.9), Grade::F);
        assert_eq!(grade_of(0.0), Grade::F);
        // Each grade's floor is its own, and a tenth below it the next grade's.
        for g in [Grade::A, Grade::B, Grade::C, Grade::D, Grade::E] {
            assert_eq!(grade_of(grade_floor(g)), g);
            assert_ne!(grade_of(grade_floor(g) - 0.1), g);
        }
        assert_eq!(grade_floor(Grade::F), 0.0);
    }

    #[test]
    fn info_findings_count_but_cost_nothing() {
        let kev = BTreeSet::new();
        let assets = all(1);
        let findings = [finding(RiskVector::Digitalization, Severity::Info, "digitalization.wildcard_dns", "*.a.test")];
        let r = rate(&Input { findings: &findings, assets_checked: &assets, kev: &kev, website_host: None });
        let d = component(&r, RiskVector::Digitalization);
        assert_eq!((d.score, d.findings_count, d.penalties.len()), (Some(100.0), 1, 0));
    }
}
