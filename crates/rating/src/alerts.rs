//! Which of a portfolio's alert rules a company's change raises (docs/API.md, "Alerts"):
//! pure, from what was observed before and after one job.

use model::alerts::{AlertRules, Trigger};
use model::{Finding, Grade, Score};

/// What one job changed about a company, as the rules read it.
#[derive(Debug, Clone, Copy)]
pub struct Observed<'a> {
    /// The rating before and after (none: the company had none, or the job made none).
    pub before: Option<(Score, Grade)>,
    pub after: Option<(Score, Grade)>,
    /// Findings that opened, worst first.
    pub opened: &'a [Finding],
    /// KEV-listed CVEs on the company's open findings that were not there before.
    pub new_kev: &'a [String],
    /// The rating became stale.
    pub stale: bool,
}

/// A rule raised: which, what it says, and what tells this alert from another of the
/// same rule at the same moment (a finding's id, a CVE).
#[derive(Debug, Clone, PartialEq)]
pub struct Raised {
    pub rule_id: String,
    pub kind: &'static str,
    pub subject: String,
    pub summary: String,
}

/// The most alerts one rule raises for one job (the findings of a first full scan).
pub const MAX_PER_RULE: usize = 20;

/// The alerts `rules` raise for a company of tier `tier` given `seen`.
pub fn raised(rules: &AlertRules, tier: Option<u8>, seen: &Observed<'_>) -> Vec<Raised> {
    let mut out = Vec::new();
    for rule in rules.rules.iter().filter(|r| r.covers(tier)) {
        let mut raise = |subject: String, summary: String| {
            out.push(Raised { rule_id: rule.id.clone(), kind: rule.trigger.kind(), subject, summary })
        };
        match rule.trigger {
            Trigger::ScoreDrop(points) => {
                if let (Some((b, _)), Some((a, _))) = (seen.before, seen.after) {
                    let drop = b.as_f64() - a.as_f64();
                    if drop + 1e-9 >= points {
                        raise(
                            String::new(),
                            format!("Score fell {drop:.1} points ({:.1} → {:.1})", b.as_f64(), a.as_f64()),
                        );
                    }
                }
            }
            Trigger::GradeDrop => {
                // Grades order A (best) to F: a fall is a later letter.
                if let (Some((_, b)), Some((_, a))) = (seen.before, seen.after)
                    && a > b
                {
                    raise(String::new(), format!("Grade fell {} → {}", b.as_str(), a.as_str()));
                }
            }
            Trigger::FindingOpened(least) => {
                for f in seen.opened.iter().filter(|f| f.severity >= least).take(MAX_PER_RULE) {
                    raise(
                        f.id.to_string(),
                        format!("{} finding opened: {} on {}", f.severity.as_str(), f.code, f.asset),
                    );
                }
            }
            Trigger::KevAppeared => {
                for cve in seen.new_kev.iter().take(MAX_PER_RULE) {
                    raise(cve.clone(), format!("{cve}, listed in CISA KEV, is on the company's software"));
                }
            }
            Trigger::RatingStale => {
                if seen.stale {
                    raise(String::new(), "The rating is stale: no scan has refreshed it".to_owned());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::{RiskVector, Severity};
    use serde_json::json;

    fn finding(id: i64, severity: Severity) -> Finding {
        let f =
            crate::testing::finding(RiskVector::OpenPorts, severity, "open_ports.rdp_exposed", "vpn.acme.example:3389");
        Finding { id, ..f }
    }

    fn rating(score: f64) -> Option<(Score, Grade)> {
        Some((Score::from_f64(score).unwrap(), crate::grade_of(score)))
    }

    #[test]
    fn each_rule_raises_on_its_change_and_tier() {
        let rules = AlertRules::parse(&json!({"rules": [
            {"id": "drop5", "kind": "score_drop", "points": 5, "tiers": [1]},
            {"id": "grade", "kind": "grade_drop"},
            {"id": "high", "kind": "finding_opened", "severity": "high"},
            {"id": "kev", "kind": "kev_appeared"},
            {"id": "stale", "kind": "rating_stale"}
        ]}))
        .unwrap();
        let opened = [finding(7, Severity::Critical), finding(8, Severity::Medium)];
        let kev = ["CVE-2021-44228".to_owned()];
        let seen = Observed { before: rating(82.0), after: rating(76.0), opened: &opened, new_kev: &kev, stale: false };
        let ids = |r: &[Raised]| r.iter().map(|a| (a.rule_id.clone(), a.subject.clone())).collect::<Vec<_>>();
        let tier1 = raised(&rules, Some(1), &seen);
        let s = |a: &str, b: &str| (a.to_owned(), b.to_owned());
        assert_eq!(ids(&tier1), [s("drop5", ""), s("grade", ""), s("high", "7"), s("kev", "CVE-2021-44228")]);
        assert_eq!(tier1[0].summary, "Score fell 6.0 points (82.0 → 76.0)");
        assert_eq!(tier1[1].summary, "Grade fell B → C");
        // Tier 2 is not covered by the score rule.
        assert_eq!(raised(&rules, Some(2), &seen).len(), 3);
        // A rise raises nothing; the first rating has nothing to fall from.
        let up = Observed { before: rating(70.0), after: rating(90.0), opened: &[], new_kev: &[], stale: false };
        assert!(raised(&rules, Some(1), &up).is_empty());
        let first = Observed { before: None, ..up };
        assert!(raised(&rules, Some(1), &first).is_empty());
        let stale = Observed { stale: true, ..first };
        assert_eq!(ids(&raised(&rules, None, &stale)), [s("stale", "")]);
        // Exactly the threshold raises.
        let five = Observed { before: rating(80.0), after: rating(75.0), ..up };
        assert_eq!(raised(&rules, Some(1), &five)[0].rule_id, "drop5");
    }
}
