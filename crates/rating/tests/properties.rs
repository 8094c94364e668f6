//! The properties of the rating (docs/METHODOLOGY.md, "Properties the tests hold"), over
//! arbitrary findings: scores stay within 0–100; removing a finding never lowers any
//! score; the order of the findings never changes the rating; the same input gives the
//! same rating.

use std::collections::{BTreeMap, BTreeSet};

use model::{CveId, Finding, OffsetDateTimeText, RiskVector, Severity};
use proptest::prelude::*;
use rating::{Input, Rating, rate};

const CODES: [&str; 4] = ["x.one", "certificate_info.expired", "open_ports.redis_exposed", "vulnerabilities.cve"];
const ASSETS: [&str; 4] = ["www.a.test", "www.a.test:443", "db.a.test:6379", "a.test"];
const CVES: [&str; 3] = ["CVE-2021-41773", "CVE-2014-0160", "CVE-2022-21661"];

fn finding() -> impl Strategy<Value = Finding> {
    (
        0..RiskVector::ALL.len(),
        0..Severity::ALL.len(),
        0..CODES.len(),
        0..ASSETS.len(),
        proptest::option::of(0..CVES.len()),
    )
        .prop_map(|(v, s, c, a, cve)| Finding {
            id: 0,
            risk_vector: RiskVector::ALL[v],
            asset: ASSETS[a].to_owned(),
            severity: Severity::ALL[s],
            code: CODES[c].to_owned(),
            title: String::new(),
            evidence: String::new(),
            remediation: String::new(),
            references: Vec::new(),
            cve: cve.and_then(|i| CveId::parse(CVES[i]).ok()),
            component: None,
            first_seen: OffsetDateTimeText(time::OffsetDateTime::UNIX_EPOCH),
            last_seen: OffsetDateTimeText(time::OffsetDateTime::UNIX_EPOCH),
            disputed: false,
            no_weight: false,
        })
}

fn assets() -> impl Strategy<Value = BTreeMap<RiskVector, u32>> {
    proptest::collection::vec(prop_oneof![Just(0u32), 1u32..500], RiskVector::ALL.len())
        .prop_map(|counts| RiskVector::ALL.iter().copied().zip(counts).collect())
}

fn rated(findings: &[Finding], assets: &BTreeMap<RiskVector, u32>) -> Rating {
    let kev: BTreeSet<String> = ["CVE-2021-41773".to_owned()].into();
    rate(&Input { findings, assets_checked: assets, kev: &kev, website_host: Some("www.a.test") })
}

fn in_bounds(x: Option<f64>) -> bool {
    x.is_none_or(|s| (0.0..=100.0).contains(&s))
}

proptest! {
    #[test]
    fn scores_stay_within_bounds(findings in proptest::collection::vec(finding(), 0..40), assets in assets()) {
        let r = rated(&findings, &assets);
        prop_assert!(in_bounds(r.score) && in_bounds(r.uncapped_score));
        prop_assert!(r.components.iter().all(|c| in_bounds(c.score)));
        prop_assert_eq!(r.components.len(), 12);
        let w: f64 = r.components.iter().map(|c| c.effective_weight).sum();
        prop_assert!(r.score.is_none() || (w - 100.0).abs() < 0.1, "effective weights sum to {}", w);
    }

    #[test]
    fn removing_a_finding_never_lowers_a_score(
        findings in proptest::collection::vec(finding(), 1..40),
        assets in assets(),
        pick in any::<prop::sample::Index>(),
    ) {
        let before = rated(&findings, &assets);
        let mut fewer = findings.clone();
        fewer.remove(pick.index(findings.len()));
        let after = rated(&fewer, &assets);
        prop_assert!(after.score >= before.score, "{:?} -> {:?}", before.score, after.score);
        for (b, a) in before.components.iter().zip(&after.components) {
            prop_assert!(a.score >= b.score, "{}: {:?} -> {:?}", b.risk_vector, b.score, a.score);
        }
    }

    #[test]
    fn order_never_matters_and_the_same_input_gives_the_same_rating(
        findings in proptest::collection::vec(finding(), 0..40),
        assets in assets(),
        seed in any::<u64>(),
    ) {
        let r = rated(&findings, &assets);
        prop_assert_eq!(&r, &rated(&findings, &assets));
        let mut shuffled = findings.clone();
        // A deterministic shuffle from the seed (Fisher–Yates with an LCG).
        let mut state = seed;
        for i in (1..shuffled.len()).rev() {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let j = usize::try_from(state >> 33).unwrap_or(0) % (i + 1);
            shuffled.swap(i, j);
        }
        prop_assert_eq!(&r, &rated(&shuffled, &assets));
    }
}

/// Every set of findings of `n` (as indices), smallest first.
fn subsets(n: usize) -> Vec<Vec<usize>> {
    let mut all: Vec<Vec<usize>> = (0u32..1 << n).map(|m| (0..n).filter(|i| m & (1 << i) != 0).collect()).collect();
    all.sort_by_key(Vec::len);
    all
}

fn without(findings: &[Finding], fixed: &[usize]) -> Vec<Finding> {
    findings.iter().enumerate().filter(|(i, _)| !fixed.contains(i)).map(|(_, f)| f.clone()).collect()
}

proptest! {
    /// The plan reaches the target: its fixes applied and rated again give at least the
    /// target; its steps' scores never fall and end at the rating of the findings left.
    #[test]
    fn a_plan_reaches_its_target(
        findings in proptest::collection::vec(finding(), 0..40),
        assets in assets(),
        target in 40.0f64..100.0,
    ) {
        let kev: BTreeSet<String> = ["CVE-2021-41773".to_owned()].into();
        let input = Input { findings: &findings, assets_checked: &assets, kev: &kev, website_host: Some("www.a.test") };
        match rating::plan::plan(&input, target) {
            rating::plan::Plan::Reached { score } => prop_assert!(score >= target),
            rating::plan::Plan::Unreachable { why } => prop_assert!(rated(&findings, &assets).score.is_none(), "{why}"),
            rating::plan::Plan::Steps { steps, .. } => {
                let fixed: Vec<usize> = steps.iter().map(|s| s.finding).collect();
                let after = rated(&without(&findings, &fixed), &assets).score.unwrap();
                prop_assert!(after >= target, "{after} < {target}");
                prop_assert!(steps.windows(2).all(|w| w[0].score_after <= w[1].score_after));
                prop_assert_eq!(steps.last().unwrap().score_after, after);
            }
        }
    }

    /// And no smaller set of fixes would (every subset tried, on small inputs).
    #[test]
    fn no_smaller_set_of_fixes_reaches_the_target(
        findings in proptest::collection::vec(finding(), 1..10),
        assets in assets(),
        target in 40.0f64..100.0,
    ) {
        let kev: BTreeSet<String> = ["CVE-2021-41773".to_owned()].into();
        let input = Input { findings: &findings, assets_checked: &assets, kev: &kev, website_host: Some("www.a.test") };
        if let rating::plan::Plan::Steps { steps, .. } = rating::plan::plan(&input, target) {
            let smallest = subsets(findings.len())
                .into_iter()
                .find(|s| rated(&without(&findings, s), &assets).score.is_some_and(|x| x >= target))
                .expect("fixing everything reaches any target");
            prop_assert_eq!(steps.len(), smallest.len(), "the plan {:?}, a smaller set {:?}", steps, smallest);
        }
    }
}
