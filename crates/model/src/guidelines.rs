//! Underwriting guidelines: an organisation's rules that refer or decline a company
//! (docs/API.md, "Underwriting guidelines"). A document is parsed once, at the edge,
//! into [`Guidelines`]; a malformed rule is refused with its place and id.

use serde::Serialize;
use serde_json::Value;

use crate::{Grade, RiskVector, Severity};

/// Most rules one document holds.
pub const MAX_RULES: usize = 100;

/// What a rule does to a company that breaks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Refer,
    Decline,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Refer => "refer",
            Action::Decline => "decline",
        }
    }
}

/// A service whose exposure a rule forbids, and the finding codes that show it
/// (docs/FINDINGS.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    Rdp,
    Smb,
    Database,
    Telnet,
    Ftp,
    Ssh,
}

impl Service {
    pub const ALL: [(&'static str, Service); 6] = [
        ("rdp", Service::Rdp),
        ("smb", Service::Smb),
        ("database", Service::Database),
        ("telnet", Service::Telnet),
        ("ftp", Service::Ftp),
        ("ssh", Service::Ssh),
    ];

    pub fn as_str(self) -> &'static str {
        Self::ALL.iter().find(|(_, s)| *s == self).map_or("", |(n, _)| n)
    }

    /// The finding codes that show the service exposed.
    pub fn codes(self) -> &'static [&'static str] {
        match self {
            Service::Rdp => &["open_ports.rdp_exposed"],
            Service::Smb => &["open_ports.smb_exposed"],
            Service::Database => &[
                "open_ports.mysql_exposed",
                "open_ports.postgresql_exposed",
                "open_ports.mongodb_exposed",
                "open_ports.redis_exposed",
                "open_ports.elasticsearch_exposed",
                "open_ports.memcached_exposed",
            ],
            Service::Telnet => &["open_ports.telnet_exposed"],
            Service::Ftp => &["open_ports.ftp_exposed"],
            Service::Ssh => &["open_ports.ssh_exposed"],
        }
    }
}

/// What a rule checks.
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    /// The global score is at least this.
    MinGlobalScore(f64),
    /// The global grade is at least this.
    MinGrade(Grade),
    /// A component's grade is at least this (a component not assessable passes: there
    /// is nothing of its kind to judge).
    MinComponentGrade(RiskVector, Grade),
    /// No open finding with this code.
    ForbiddenFinding(String),
    /// No open finding of this severity or worse.
    ForbiddenSeverity(Severity),
    /// No open finding about a CVE that CISA KEV lists.
    NoKevCve,
    /// No open finding that shows this service exposed.
    ExposedService(Service),
    /// At most `count` public incidents in the last `years` years.
    MaxIncidents { count: u32, years: u32 },
    /// The predicted probability of an incident in 12 months is at most this (0–1).
    MaxIncidentProbability(f64),
    /// The 1-in-100 loss over 12 months (the tail-risk VaR 99 %) is at most this, in US
    /// dollars.
    MaxLoss1In100(f64),
    /// The rating comes from a full scan, not a quick one.
    FullDepth,
    /// The rating is at most this many days old.
    MaxAgeDays(u32),
}

impl Check {
    /// The kind the document names it by ([`KINDS`]).
    pub fn kind(&self) -> &'static str {
        match self {
            Check::MinGlobalScore(_) => "min_global_score",
            Check::MinGrade(_) => "min_grade",
            Check::MinComponentGrade(..) => "min_component_grade",
            Check::ForbiddenFinding(_) => "forbidden_finding",
            Check::ForbiddenSeverity(_) => "forbidden_severity",
            Check::NoKevCve => "no_kev_cve",
            Check::ExposedService(_) => "exposed_service",
            Check::MaxIncidents { .. } => "max_incidents",
            Check::MaxIncidentProbability(_) => "max_incident_probability",
            Check::MaxLoss1In100(_) => "max_loss_1_in_100",
            Check::FullDepth => "min_depth",
            Check::MaxAgeDays(_) => "max_age_days",
        }
    }
}

/// One rule of a document.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub id: String,
    pub check: Check,
    pub action: Action,
}

/// A parsed document of rules.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Guidelines {
    pub rules: Vec<Rule>,
}

/// Why a document of rules (guidelines, alert rules) was refused: the rule (its place
/// from 1, and its id when it has one) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RulesError {
    #[error("the document must be an object with a `rules` array")]
    NotRules,
    #[error("at most {0} rules")]
    TooMany(usize),
    #[error("rule {place}{}: {why}", id.as_ref().map(|i| format!(" ({i})")).unwrap_or_default())]
    Rule { place: usize, id: Option<String>, why: String },
}

/// Why a guidelines document was refused.
pub type GuidelineError = RulesError;

/// The rules of a document `{"rules": [...]}`, at most `max`: each an object with a
/// unique `id` ([`rule_id`]) and a `kind`, the rest read by `read(rule, kind)`.
pub(crate) fn rules_of<T>(
    doc: &Value,
    max: usize,
    mut read: impl FnMut(&Value, &str) -> Result<T, String>,
) -> Result<Vec<(String, T)>, RulesError> {
    let rules = doc.get("rules").and_then(Value::as_array).ok_or(RulesError::NotRules)?;
    if rules.len() > max {
        return Err(RulesError::TooMany(max));
    }
    let mut out: Vec<(String, T)> = Vec::with_capacity(rules.len());
    for (i, rule) in rules.iter().enumerate() {
        let id = rule.get("id").and_then(Value::as_str).filter(|s| rule_id(s)).map(str::to_owned);
        let fail = |why: String| RulesError::Rule { place: i + 1, id: id.clone(), why };
        if !rule.is_object() {
            return Err(fail("a rule must be an object".into()));
        }
        let Some(rule_id) = id.clone() else {
            return Err(fail("id is required: 1 to 64 letters, digits, -, _ or .".into()));
        };
        if out.iter().any(|(r, _)| *r == rule_id) {
            return Err(fail("another rule has this id".into()));
        }
        let kind = text(rule, "kind").map_err(fail)?;
        let read = read(rule, kind).map_err(fail)?;
        out.push((rule_id, read));
    }
    Ok(out)
}

/// The kinds a rule may be, as the document names them.
pub const KINDS: [&str; 12] = [
    "min_global_score",
    "min_grade",
    "min_component_grade",
    "forbidden_finding",
    "forbidden_severity",
    "no_kev_cve",
    "exposed_service",
    "max_incidents",
    "max_incident_probability",
    "max_loss_1_in_100",
    "min_depth",
    "max_age_days",
];

pub(crate) fn text<'a>(rule: &'a Value, field: &str) -> Result<&'a str, String> {
    match rule.get(field) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim()),
        Some(_) => Err(format!("{field} must be a non-empty string")),
        None => Err(format!("{field} is required")),
    }
}

pub(crate) fn number(rule: &Value, field: &str, range: std::ops::RangeInclusive<f64>) -> Result<f64, String> {
    match rule.get(field).and_then(Value::as_f64) {
        Some(v) if range.contains(&v) => Ok(v),
        Some(_) | None if rule.get(field).is_some() => {
            Err(format!("{field} must be a number from {} to {}", range.start(), range.end()))
        }
        _ => Err(format!("{field} is required")),
    }
}

fn whole(rule: &Value, field: &str, range: std::ops::RangeInclusive<u32>) -> Result<u32, String> {
    match rule.get(field) {
        None => Err(format!("{field} is required")),
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| range.contains(n))
            .ok_or_else(|| format!("{field} must be a whole number from {} to {}", range.start(), range.end())),
    }
}

fn grade(rule: &Value, field: &str) -> Result<Grade, String> {
    Grade::parse(text(rule, field)?).map_err(|_| format!("{field} must be a grade, A to F"))
}

/// A rule id: 1–64 letters, digits, `-`, `_` and `.`.
pub(crate) fn rule_id(raw: &str) -> bool {
    (1..=64).contains(&raw.len()) && raw.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

fn check_of(rule: &Value, kind: &str) -> Result<Check, String> {
    Ok(match kind {
        "min_global_score" => Check::MinGlobalScore(number(rule, "value", 0.0..=100.0)?),
        "min_grade" => Check::MinGrade(grade(rule, "value")?),
        "min_component_grade" => {
            let component = text(rule, "component")?;
            let v = RiskVector::parse(component).map_err(|e| format!("component must be one of: {}", e.allowed))?;
            Check::MinComponentGrade(v, grade(rule, "value")?)
        }
        "forbidden_finding" => {
            let code = text(rule, "code")?;
            let ok = code.len() <= 100
                && code.contains('.')
                && code.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b));
            if !ok {
                return Err("code must be a finding code such as open_ports.rdp_exposed (docs/FINDINGS.md)".into());
            }
            Check::ForbiddenFinding(code.to_owned())
        }
        "forbidden_severity" => Check::ForbiddenSeverity(
            Severity::parse(text(rule, "severity")?)
                .map_err(|_| "severity must be one of: critical, high, medium, low, info".to_owned())?,
        ),
        "no_kev_cve" => Check::NoKevCve,
        "exposed_service" => {
            let name = text(rule, "service")?.to_ascii_lowercase();
            let names: Vec<&str> = Service::ALL.iter().map(|(n, _)| *n).collect();
            let service = Service::ALL
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, s)| *s)
                .ok_or_else(|| format!("service must be one of: {}", names.join(", ")))?;
            Check::ExposedService(service)
        }
        "max_incidents" => {
            Check::MaxIncidents { count: whole(rule, "value", 0..=1000)?, years: whole(rule, "years", 1..=50)? }
        }
        "max_incident_probability" => Check::MaxIncidentProbability(number(rule, "value", 0.0..=1.0)?),
        "max_loss_1_in_100" => Check::MaxLoss1In100(number(rule, "value", 0.0..=1e15)?),
        "min_depth" => match rule.get("value").and_then(Value::as_str) {
            Some("full") | None => Check::FullDepth,
            Some(_) => return Err("value must be full (a quick rating refers or declines)".into()),
        },
        "max_age_days" => Check::MaxAgeDays(whole(rule, "value", 1..=3650)?),
        _ => return Err(format!("kind must be one of: {}", KINDS.join(", "))),
    })
}

impl Guidelines {
    /// Parses a document `{"rules": [{"id", "kind", "action", …}]}`. Every rule needs a
    /// unique `id`, a `kind` of [`KINDS`] with its fields, and an `action` (`refer` or
    /// `decline`).
    pub fn parse(doc: &Value) -> Result<Guidelines, GuidelineError> {
        let rules = rules_of(doc, MAX_RULES, |rule, kind| {
            let check = check_of(rule, kind)?;
            let action = match rule.get("action").and_then(Value::as_str) {
                Some("refer") => Action::Refer,
                Some("decline") => Action::Decline,
                _ => return Err("action must be refer or decline".into()),
            };
            Ok((check, action))
        })?;
        Ok(Guidelines { rules: rules.into_iter().map(|(id, (check, action))| Rule { id, check, action }).collect() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_issue_s_document_parses() {
        let doc = json!({"rules": [
            {"id": "min-score", "kind": "min_global_score", "value": 80, "action": "refer"},
            {"id": "no-rdp", "kind": "forbidden_finding", "code": "open_ports.rdp_exposed", "action": "decline"},
            {"id": "no-kev", "kind": "no_kev_cve", "action": "decline"},
            {"id": "dmarc", "kind": "min_component_grade", "component": "dmarc", "value": "B", "action": "refer"}
        ]});
        let g = Guidelines::parse(&doc).unwrap();
        assert_eq!(g.rules.len(), 4);
        assert_eq!(g.rules[0].check, Check::MinGlobalScore(80.0));
        assert_eq!(g.rules[3].check, Check::MinComponentGrade(RiskVector::Dmarc, Grade::B));
        assert_eq!(g.rules[1].action, Action::Decline);
    }

    #[test]
    fn every_kind_parses_with_its_fields() {
        let rules = json!([
            {"id": "a", "kind": "min_grade", "value": "C", "action": "refer"},
            {"id": "b", "kind": "forbidden_severity", "severity": "critical", "action": "decline"},
            {"id": "c", "kind": "exposed_service", "service": "Database", "action": "decline"},
            {"id": "d", "kind": "max_incidents", "value": 1, "years": 3, "action": "refer"},
            {"id": "e", "kind": "max_incident_probability", "value": 0.3, "action": "refer"},
            {"id": "f", "kind": "max_loss_1_in_100", "value": 5000000, "action": "refer"},
            {"id": "g", "kind": "min_depth", "value": "full", "action": "refer"},
            {"id": "h", "kind": "max_age_days", "value": 30, "action": "refer"}
        ]);
        let g = Guidelines::parse(&json!({ "rules": rules })).unwrap();
        assert_eq!(g.rules.len(), KINDS.len() - 4);
        assert_eq!(g.rules[2].check, Check::ExposedService(Service::Database));
        assert_eq!(g.rules[3].check, Check::MaxIncidents { count: 1, years: 3 });
        // Each kind is named back as the document names it.
        assert!(g.rules.iter().all(|r| KINDS.contains(&r.check.kind())));
    }

    #[test]
    fn a_malformed_rule_is_named() {
        let cases = [
            (
                json!({"rules": [{"id": "x", "kind": "min_global_score", "value": 180, "action": "refer"}]}),
                "rule 1 (x): value must be a number from 0 to 100",
            ),
            (
                json!({"rules": [{"id": "x", "kind": "colour", "action": "refer"}]}),
                "rule 1 (x): kind must be one of: min_global_score",
            ),
            (json!({"rules": [{"kind": "no_kev_cve", "action": "refer"}]}), "rule 1: id is required"),
            (
                json!({"rules": [{"id": "k", "kind": "no_kev_cve", "action": "refer"}, {"id": "k", "kind": "no_kev_cve", "action": "decline"}]}),
                "rule 2 (k): another rule has this id",
            ),
            (
                json!({"rules": [{"id": "x", "kind": "no_kev_cve", "action": "ignore"}]}),
                "rule 1 (x): action must be refer or decline",
            ),
            (
                json!({"rules": [{"id": "x", "kind": "forbidden_finding", "action": "decline"}]}),
                "rule 1 (x): code is required",
            ),
            (
                json!({"rules": [{"id": "x", "kind": "min_component_grade", "component": "dns", "value": "B", "action": "refer"}]}),
                "rule 1 (x): component must be one of",
            ),
            (
                json!({"rules": [{"id": "x", "kind": "max_incidents", "value": 1, "action": "refer"}]}),
                "rule 1 (x): years is required",
            ),
            (json!({"rules": "all"}), "the document must be an object with a `rules` array"),
        ];
        for (doc, said) in cases {
            let e = Guidelines::parse(&doc).unwrap_err().to_string();
            assert!(e.starts_with(said), "{e} / {said}");
        }
    }
}
