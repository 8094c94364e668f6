//! Every check a scan performs, with its outcome (docs/FINDINGS.md, "Every check has an
//! outcome"): a pass (with what was observed), a finding (with the codes it raised), or
//! not assessable (with why: a lookup that failed, a key that cannot be seen from
//! outside). A score of 100 then shows what was checked, and a check that could not be
//! made is never a finding. The types are `model`'s (a rating keeps them); this module
//! judges a check from the findings it raised.

use model::RiskVector;
pub use model::{Check, CheckOutcome as Outcome, ComponentChecks};

use crate::finding::ScanFinding;

/// The check's outcome from the findings it raised: none is a pass (`observed` says
/// what was seen), any is a finding (the detail lists their codes).
pub fn judged(
    risk_vector: RiskVector,
    check: &str,
    asset: &str,
    findings: &[ScanFinding],
    observed: impl Into<String>,
) -> Check {
    if findings.is_empty() {
        Check::pass(risk_vector, check, asset, observed)
    } else {
        Check::finding(risk_vector, check, asset, findings.iter().map(|f| f.code.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_is_a_finding_exactly_when_it_raised_one() {
        let pass = judged(RiskVector::Spf, "spf record", "a.test", &[], "v=spf1 -all");
        assert_eq!((pass.outcome, pass.detail.as_str()), (Outcome::Pass, "v=spf1 -all"));
        let f = ScanFinding::new("spf.softfail_all", "a.test", "~all");
        let found = judged(RiskVector::Spf, "spf record", "a.test", &[f.clone(), f], "");
        assert_eq!((found.outcome, found.detail.as_str()), (Outcome::Finding, "spf.softfail_all"));
    }
}
