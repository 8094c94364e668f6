//! Underwriting guidelines applied to a company: each rule of an organisation's document
//! (`model::guidelines`) against what is known of the company — its rating, open findings,
//! KEV CVEs, public incidents, predictions, the depth and age of its rating. Pure: the
//! API gathers the facts, this judges them.
//!
//! The outcome is the strongest action of the rules broken: `decline` over `refer` over
//! `pass`. A rule that cannot be judged (no prediction could be made) refers, whatever
//! its action: the underwriter decides, with the reason.

use std::collections::{BTreeMap, BTreeSet};

use model::guidelines::{Action, Check, Guidelines};
use model::{Finding, Grade, RiskVector};
use time::OffsetDateTime;

use crate::grade_floor;

/// What is known of the company.
#[derive(Debug, Clone)]
pub struct Facts<'a> {
    pub score: f64,
    pub grade: Grade,
    /// Each assessable component's score and grade (absent: not assessable).
    pub components: &'a BTreeMap<RiskVector, (f64, Grade)>,
    /// The open findings the rating judges.
    pub findings: &'a [Finding],
    /// The CVEs among them that CISA KEV lists.
    pub kev: &'a BTreeSet<String>,
    /// When each public incident of the company happened (detected, else disclosed).
    pub incidents: &'a [OffsetDateTime],
    /// The 12-month incident probability and 1-in-100 loss (USD), when predicted.
    pub incident_probability: Option<f64>,
    pub loss_1_in_100: Option<f64>,
    /// The rating is from a full scan (not a quick one).
    pub full_depth: bool,
    pub rated_at: OffsetDateTime,
    pub now: OffsetDateTime,
}

/// One rule's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleOutcome {
    pub id: String,
    pub kind: &'static str,
    pub action: Action,
    /// `pass`, or the action taken: `refer` or `decline`.
    pub outcome: &'static str,
    /// What was observed, as text (`72.4`, `grade C`, `2 findings`, `unknown`).
    pub observed: String,
    /// The findings behind a broken rule (indices into the facts' findings).
    pub findings: Vec<usize>,
    /// Why it could not be judged, or what it measured.
    pub note: Option<String>,
}

/// All rules' outcomes and the company's.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// `pass`, `refer` or `decline`.
    pub outcome: &'static str,
    pub rules: Vec<RuleOutcome>,
}

fn at_least(g: Grade, min: Grade) -> bool {
    grade_floor(g) >= grade_floor(min)
}

fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// Judges the company's facts against every rule, in the document's order.
pub fn evaluate(g: &Guidelines, f: &Facts<'_>) -> Evaluation {
    let matching = |p: &dyn Fn(&Finding) -> bool| -> Vec<usize> {
        f.findings.iter().enumerate().filter(|(_, x)| p(x)).map(|(i, _)| i).collect()
    };
    let rules: Vec<RuleOutcome> = g
        .rules
        .iter()
        .map(|r| {
            // (passed, observed, findings, note); passed none: cannot be judged.
            let (passed, observed, findings, note): (Option<bool>, String, Vec<usize>, Option<String>) = match &r.check
            {
                Check::MinGlobalScore(v) => (Some(f.score >= *v), format!("{:.1}", f.score), vec![], None),
                Check::MinGrade(min) => {
                    (Some(at_least(f.grade, *min)), format!("grade {}", f.grade.as_str()), vec![], None)
                }
                Check::MinComponentGrade(v, min) => match f.components.get(v) {
                    Some((s, g)) => {
                        let behind = matching(&|x| x.risk_vector == *v);
                        let ok = at_least(*g, *min);
                        (Some(ok), format!("grade {} ({s:.0})", g.as_str()), if ok { vec![] } else { behind }, None)
                    }
                    None => (Some(true), "not assessable".into(), vec![], Some("nothing of its kind was found".into())),
                },
                Check::ForbiddenFinding(code) => {
                    let hit = matching(&|x| x.code == *code);
                    (Some(hit.is_empty()), count(hit.len(), "finding"), hit, None)
                }
                Check::ForbiddenSeverity(s) => {
                    let hit = matching(&|x| x.severity >= *s);
                    (Some(hit.is_empty()), count(hit.len(), "finding"), hit, None)
                }
                Check::NoKevCve => {
                    let hit = matching(&|x| x.cve.as_ref().is_some_and(|c| f.kev.contains(c.as_str())));
                    (Some(hit.is_empty()), count(hit.len(), "finding"), hit, None)
                }
                Check::ExposedService(s) => {
                    let codes = s.codes();
                    let hit = matching(&|x| codes.contains(&x.code.as_str()));
                    (Some(hit.is_empty()), count(hit.len(), "finding"), hit, None)
                }
                Check::MaxIncidents { count: max, years } => {
                    let since = f.now - time::Duration::days(365 * i64::from(*years));
                    let n = f.incidents.iter().filter(|t| **t >= since).count();
                    (Some(n <= *max as usize), count(n, "incident"), vec![], Some(format!("in the last {years} years")))
                }
                Check::MaxIncidentProbability(max) => match f.incident_probability {
                    Some(p) => (Some(p <= *max), format!("{:.1} %", p * 100.0), vec![], Some("over 12 months".into())),
                    None => (None, "unknown".into(), vec![], Some("no incident prediction could be made".into())),
                },
                Check::MaxLoss1In100(max) => match f.loss_1_in_100 {
                    Some(l) => {
                        (Some(l <= *max), format!("${l:.0}"), vec![], Some("1-in-100 loss over 12 months".into()))
                    }
                    None => (None, "unknown".into(), vec![], Some("no loss prediction could be made".into())),
                },
                Check::FullDepth => (
                    Some(f.full_depth),
                    if f.full_depth { "full" } else { "quick" }.into(),
                    vec![],
                    (!f.full_depth).then(|| "a quick rating: its full scan is queued".into()),
                ),
                Check::MaxAgeDays(max) => {
                    let days = (f.now - f.rated_at).whole_days().max(0);
                    (Some(days <= i64::from(*max)), count(days.unsigned_abs() as usize, "day"), vec![], None)
                }
            };
            let outcome = match passed {
                Some(true) => "pass",
                Some(false) => r.action.as_str(),
                None => Action::Refer.as_str(),
            };
            RuleOutcome { id: r.id.clone(), kind: r.check.kind(), action: r.action, outcome, observed, findings, note }
        })
        .collect();
    let outcome = if rules.iter().any(|r| r.outcome == "decline") {
        "decline"
    } else if rules.iter().any(|r| r.outcome == "refer") {
        "refer"
    } else {
        "pass"
    };
    Evaluation { outcome, rules }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::{CveId, OffsetDateTimeText, Severity};
    use serde_json::json;

    fn finding(v: RiskVector, code: &str, severity: Severity, cve: Option<&str>) -> Finding {
        Finding {
            id: 0,
            risk_vector: v,
            asset: "a.test".into(),
            severity,
            code: code.into(),
            title: String::new(),
            evidence: String::new(),
            remediation: String::new(),
            references: vec![],
            cve: cve.and_then(|c| CveId::parse(c).ok()),
            component: None,
            first_seen: OffsetDateTimeText(OffsetDateTime::UNIX_EPOCH),
            last_seen: OffsetDateTimeText(OffsetDateTime::UNIX_EPOCH),
            disputed: false,
            no_weight: false,
        }
    }

    fn doc(rules: serde_json::Value) -> Guidelines {
        Guidelines::parse(&json!({ "rules": rules })).unwrap()
    }

    fn judge(g: &Guidelines, findings: &[Finding], incident_probability: Option<f64>) -> Evaluation {
        let components: BTreeMap<RiskVector, (f64, Grade)> =
            [(RiskVector::Dmarc, (65.0, Grade::D)), (RiskVector::Spf, (100.0, Grade::A))].into();
        let kev: BTreeSet<String> = ["CVE-2021-41773".to_owned()].into();
        let now = OffsetDateTime::UNIX_EPOCH + time::Duration::days(4000);
        let incidents = [now - time::Duration::days(100), now - time::Duration::days(3000)];
        evaluate(
            g,
            &Facts {
                score: 78.5,
                grade: Grade::C,
                components: &components,
                findings,
                kev: &kev,
                incidents: &incidents,
                incident_probability,
                loss_1_in_100: Some(2_500_000.0),
                full_depth: true,
                rated_at: now - time::Duration::days(3),
                now,
            },
        )
    }

    #[test]
    fn the_strongest_broken_rule_decides_and_each_says_why() {
        let g = doc(json!([
            {"id": "min-score", "kind": "min_global_score", "value": 80, "action": "refer"},
            {"id": "no-rdp", "kind": "forbidden_finding", "code": "open_ports.rdp_exposed", "action": "decline"},
            {"id": "no-kev", "kind": "no_kev_cve", "action": "decline"},
            {"id": "dmarc", "kind": "min_component_grade", "component": "dmarc", "value": "B", "action": "refer"},
            {"id": "incidents", "kind": "max_incidents", "value": 0, "years": 3, "action": "refer"},
            {"id": "fresh", "kind": "max_age_days", "value": 7, "action": "refer"}
        ]));
        let findings = [
            finding(RiskVector::OpenPorts, "open_ports.rdp_exposed", Severity::High, None),
            finding(RiskVector::Dmarc, "dmarc.policy_none", Severity::Medium, None),
            finding(RiskVector::Vulnerabilities, "vulnerabilities.cve", Severity::Critical, Some("CVE-2021-41773")),
        ];
        let e = judge(&g, &findings, Some(0.2));
        assert_eq!(e.outcome, "decline");
        let by: BTreeMap<&str, &RuleOutcome> = e.rules.iter().map(|r| (r.id.as_str(), r)).collect();
        assert_eq!((by["min-score"].outcome, by["min-score"].observed.as_str()), ("refer", "78.5"));
        assert_eq!((by["no-rdp"].outcome, &by["no-rdp"].findings), ("decline", &vec![0]));
        assert_eq!(by["no-kev"].findings, vec![2]);
        assert_eq!(
            (by["dmarc"].outcome, by["dmarc"].observed.as_str(), &by["dmarc"].findings),
            ("refer", "grade D (65)", &vec![1])
        );
        // One incident in the last three years (the other is eight years old).
        assert_eq!((by["incidents"].outcome, by["incidents"].observed.as_str()), ("refer", "1 incident"));
        assert_eq!(by["fresh"].outcome, "pass");

        // Without the RDP and the KEV CVE, the refer rules decide.
        let e = judge(&g, &findings[1..2], Some(0.2));
        assert_eq!(e.outcome, "refer");
        // A document of rules the company keeps passes.
        let ok = doc(json!([{"id": "c", "kind": "min_grade", "value": "C", "action": "decline"}]));
        assert_eq!(judge(&ok, &[], None).outcome, "pass");
    }

    #[test]
    fn what_cannot_be_judged_refers_even_a_decline_rule() {
        let g = doc(json!([{"id": "p", "kind": "max_incident_probability", "value": 0.1, "action": "decline"}]));
        let e = judge(&g, &[], None);
        assert_eq!((e.outcome, e.rules[0].observed.as_str()), ("refer", "unknown"));
        assert_eq!(judge(&g, &[], Some(0.05)).outcome, "pass");
        assert_eq!(judge(&g, &[], Some(0.5)).outcome, "decline");
    }

    #[test]
    fn exposed_services_and_severities_match_their_findings() {
        let g = doc(json!([
            {"id": "db", "kind": "exposed_service", "service": "database", "action": "decline"},
            {"id": "high", "kind": "forbidden_severity", "severity": "high", "action": "refer"}
        ]));
        let findings = [
            finding(RiskVector::OpenPorts, "open_ports.redis_exposed", Severity::Critical, None),
            finding(RiskVector::Spf, "spf.softfail", Severity::Low, None),
        ];
        let e = judge(&g, &findings, None);
        assert_eq!((e.rules[0].findings.clone(), e.rules[1].findings.clone()), (vec![0], vec![0]));
        assert_eq!(judge(&g, &findings[1..], None).outcome, "pass");
    }
}
