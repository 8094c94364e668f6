//! Every check a scan makes, with its outcome (docs/FINDINGS.md, "Every check has an
//! outcome"): a pass (with what was observed), a finding (the codes it raised), or not
//! assessable (with why). The scanner makes them; a rating keeps, per component, how
//! many of each and a list of them, so a score of 100 shows what was checked.

use serde::{Deserialize, Serialize};

use crate::RiskVector;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckOutcome {
    Pass,
    Finding,
    NotAssessable,
}

impl CheckOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckOutcome::Pass => "pass",
            CheckOutcome::Finding => "finding",
            CheckOutcome::NotAssessable => "not assessable",
        }
    }
}

/// One check on one asset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub risk_vector: RiskVector,
    /// What was checked, e.g. `spf record`, `dkim keys`, `dnssec`, `security.txt`.
    pub check: String,
    pub asset: String,
    pub outcome: CheckOutcome,
    /// A pass: what was observed; a finding: the codes raised; not assessable: why.
    pub detail: String,
    /// Not assessable because the target was never reached (the guard refused it, its
    /// name did not resolve for a reason other than not existing): the findings a
    /// probe that ran saw on it stay open until one runs again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unreached: bool,
}

impl Check {
    /// A check that passed: `observed` says what was seen.
    pub fn pass(risk_vector: RiskVector, check: &str, asset: &str, observed: impl Into<String>) -> Check {
        Check::new(risk_vector, check, asset, CheckOutcome::Pass, observed.into())
    }

    /// A check that raised findings: `codes` are theirs (each once, in order).
    pub fn finding<'a>(
        risk_vector: RiskVector,
        check: &str,
        asset: &str,
        codes: impl IntoIterator<Item = &'a str>,
    ) -> Check {
        let mut seen: Vec<&str> = Vec::new();
        for c in codes {
            if !seen.contains(&c) {
                seen.push(c);
            }
        }
        Check::new(risk_vector, check, asset, CheckOutcome::Finding, seen.join(", "))
    }

    /// A check that could not be made, and why.
    pub fn not_assessable(risk_vector: RiskVector, check: &str, asset: &str, why: impl Into<String>) -> Check {
        Check::new(risk_vector, check, asset, CheckOutcome::NotAssessable, why.into())
    }

    /// A check that could not be made because its target was not reached ([`Check::unreached`]).
    pub fn unreached(risk_vector: RiskVector, check: &str, asset: &str, why: impl Into<String>) -> Check {
        Check { unreached: true, ..Check::not_assessable(risk_vector, check, asset, why) }
    }

    fn new(risk_vector: RiskVector, check: &str, asset: &str, outcome: CheckOutcome, detail: String) -> Check {
        Check { risk_vector, check: check.to_owned(), asset: asset.to_owned(), outcome, detail, unreached: false }
    }
}

/// The checks one component of a rating made: how many of each outcome, and a list of
/// them (at most [`ComponentChecks::LIST_MAX`]: those not assessable first, then the
/// findings, then the passes).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComponentChecks {
    pub pass: u32,
    pub finding: u32,
    pub not_assessable: u32,
    #[serde(default)]
    pub list: Vec<Check>,
}

impl ComponentChecks {
    /// The most checks a rating lists per component.
    pub const LIST_MAX: usize = 50;

    /// The checks of `vector` among `checks`; `None` when it made none.
    pub fn of(checks: &[Check], vector: RiskVector) -> Option<ComponentChecks> {
        let mut mine: Vec<&Check> = checks.iter().filter(|c| c.risk_vector == vector).collect();
        if mine.is_empty() {
            return None;
        }
        let mut out = ComponentChecks::default();
        for c in &mine {
            match c.outcome {
                CheckOutcome::Pass => out.pass += 1,
                CheckOutcome::Finding => out.finding += 1,
                CheckOutcome::NotAssessable => out.not_assessable += 1,
            }
        }
        let rank = |o: CheckOutcome| match o {
            CheckOutcome::NotAssessable => 0,
            CheckOutcome::Finding => 1,
            CheckOutcome::Pass => 2,
        };
        mine.sort_by_key(|c| rank(c.outcome));
        out.list = mine.into_iter().take(Self::LIST_MAX).cloned().collect();
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_component_lists_what_it_could_not_assess_first() {
        let mut checks = vec![Check::pass(RiskVector::Spf, "spf record", "a.test", "v=spf1 -all")];
        checks.push(Check::finding(RiskVector::Spf, "spf record", "b.test", ["spf.softfail_all", "spf.softfail_all"]));
        checks.push(Check::not_assessable(RiskVector::Spf, "spf record", "c.test", "SERVFAIL"));
        checks.push(Check::pass(RiskVector::Dkim, "dkim keys", "a.test", "keys at s1"));
        let spf = ComponentChecks::of(&checks, RiskVector::Spf).unwrap();
        assert_eq!((spf.pass, spf.finding, spf.not_assessable), (1, 1, 1));
        let order: Vec<&str> = spf.list.iter().map(|c| c.asset.as_str()).collect();
        assert_eq!(order, ["c.test", "b.test", "a.test"]);
        assert_eq!(spf.list[1].detail, "spf.softfail_all");
        assert!(ComponentChecks::of(&checks, RiskVector::Dmarc).is_none());
        let many: Vec<Check> = (0..60).map(|i| Check::pass(RiskVector::Sbom, "x", &format!("h{i}"), "")).collect();
        let sbom = ComponentChecks::of(&many, RiskVector::Sbom).unwrap();
        assert_eq!((sbom.pass, sbom.list.len()), (60, ComponentChecks::LIST_MAX));
        let json = serde_json::to_value(&spf).unwrap();
        assert_eq!(json["list"][0]["outcome"], "not_assessable");
        assert_eq!(serde_json::from_value::<ComponentChecks>(json).unwrap(), spf);
    }
}
