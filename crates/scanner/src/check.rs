//! Every check a scan performs, with its outcome (issue 20 §2): a pass (with what was
//! observed), a finding (with the codes it raised), or not assessable (with why: a
//! lookup that failed, a key that cannot be seen from outside). A score of 100 then
//! shows what was checked, and a check that could not be made is never a finding.

use model::RiskVector;
use serde::Serialize;

use crate::finding::ScanFinding;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Pass,
    Finding,
    NotAssessable,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Finding => "finding",
            Outcome::NotAssessable => "not assessable",
        }
    }
}

/// One check on one asset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub risk_vector: RiskVector,
    /// What was checked, e.g. `spf record`, `dkim keys`, `dnssec`, `security.txt`.
    pub check: &'static str,
    pub asset: String,
    pub outcome: Outcome,
    /// A pass: what was observed; a finding: the codes raised; not assessable: why.
    pub detail: String,
}

impl Check {
    /// The check's outcome from the findings it raised: none is a pass (`observed`
    /// says what was seen), any is a finding (the detail lists their codes).
    pub fn judged(
        risk_vector: RiskVector,
        check: &'static str,
        asset: &str,
        findings: &[ScanFinding],
        observed: impl Into<String>,
    ) -> Check {
        if findings.is_empty() {
            return Check {
                risk_vector,
                check,
                asset: asset.to_owned(),
                outcome: Outcome::Pass,
                detail: observed.into(),
            };
        }
        let mut codes: Vec<&str> = findings.iter().map(|f| f.code.as_str()).collect();
        codes.dedup();
        Check { risk_vector, check, asset: asset.to_owned(), outcome: Outcome::Finding, detail: codes.join(", ") }
    }

    /// A check that could not be made, and why.
    pub fn not_assessable(risk_vector: RiskVector, check: &'static str, asset: &str, why: impl Into<String>) -> Check {
        Check { risk_vector, check, asset: asset.to_owned(), outcome: Outcome::NotAssessable, detail: why.into() }
    }
}

/// Per risk vector: how many checks passed, raised findings, or could not be made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub pass: u32,
    pub finding: u32,
    pub not_assessable: u32,
}

/// The tally of `checks` for `vector`.
pub fn tally(checks: &[Check], vector: RiskVector) -> Tally {
    let mut t = Tally::default();
    for c in checks.iter().filter(|c| c.risk_vector == vector) {
        match c.outcome {
            Outcome::Pass => t.pass += 1,
            Outcome::Finding => t.finding += 1,
            Outcome::NotAssessable => t.not_assessable += 1,
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_is_a_finding_exactly_when_it_raised_one() {
        let pass = Check::judged(RiskVector::Spf, "spf record", "a.test", &[], "v=spf1 -all");
        assert_eq!((pass.outcome, pass.detail.as_str()), (Outcome::Pass, "v=spf1 -all"));
        let f = ScanFinding::new("spf.softfail_all", "a.test", "~all");
        let found = Check::judged(RiskVector::Spf, "spf record", "a.test", &[f.clone(), f], "");
        assert_eq!((found.outcome, found.detail.as_str()), (Outcome::Finding, "spf.softfail_all"));
        let na = Check::not_assessable(RiskVector::Spf, "spf record", "a.test", "SERVFAIL");
        assert_eq!(na.outcome, Outcome::NotAssessable);
        let t = tally(&[pass, found, na], RiskVector::Spf);
        assert_eq!((t.pass, t.finding, t.not_assessable), (1, 1, 1));
        assert_eq!(tally(&[], RiskVector::Dkim), Tally::default());
    }
}
