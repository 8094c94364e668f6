//! Alert rules: what a portfolio's owners want to be told about its companies (a score
//! drop, a grade fall, a finding of a severity, a KEV-listed CVE, a stale rating), per
//! tier (docs/API.md, "Alerts"). A document is parsed once, at the edge, into
//! [`AlertRules`]; a malformed rule is refused with its place and id.

use serde_json::Value;

use crate::guidelines::{RulesError, number, rules_of, text};
use crate::{Severity, Tier};

/// Most rules one portfolio holds.
pub const MAX_RULES: usize = 50;

/// What a rule watches for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Trigger {
    /// The score fell by at least this many points from the rating before.
    ScoreDrop(f64),
    /// The grade fell (B to C …).
    GradeDrop,
    /// A finding of at least this severity opened (new, or back after closing).
    FindingOpened(Severity),
    /// A CVE listed in CISA KEV appeared on the company's software.
    KevAppeared,
    /// The rating became older than twice its rescan cadence.
    RatingStale,
}

/// The kinds a rule may be, as the document names them.
pub const KINDS: [&str; 5] = ["score_drop", "grade_drop", "finding_opened", "kev_appeared", "rating_stale"];

impl Trigger {
    pub fn kind(&self) -> &'static str {
        match self {
            Trigger::ScoreDrop(_) => KINDS[0],
            Trigger::GradeDrop => KINDS[1],
            Trigger::FindingOpened(_) => KINDS[2],
            Trigger::KevAppeared => KINDS[3],
            Trigger::RatingStale => KINDS[4],
        }
    }
}

/// One rule: its id, what it watches for, and the tiers it covers (none: every company;
/// `None` inside: the untiered).
#[derive(Debug, Clone, PartialEq)]
pub struct AlertRule {
    pub id: String,
    pub trigger: Trigger,
    pub tiers: Option<Vec<Option<u8>>>,
}

impl AlertRule {
    /// The rule covers a company of this tier.
    pub fn covers(&self, tier: Option<u8>) -> bool {
        self.tiers.as_ref().is_none_or(|t| t.contains(&tier))
    }
}

/// A portfolio's alert rules.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AlertRules {
    pub rules: Vec<AlertRule>,
}

/// Why a document of alert rules was refused.
pub type AlertRuleError = RulesError;

fn tiers(rule: &Value) -> Result<Option<Vec<Option<u8>>>, String> {
    let Some(raw) = rule.get("tiers") else { return Ok(None) };
    let bad = || "tiers must be an array of tiers 1 to 4 or null (the untiered)".to_owned();
    let list = raw.as_array().ok_or_else(bad)?;
    if list.is_empty() {
        return Err(bad());
    }
    let mut out = Vec::with_capacity(list.len());
    for t in list {
        let tier = match t {
            Value::Null => None,
            v => Some(v.as_i64().and_then(|n| Tier::new(n).ok()).map(Tier::get).ok_or_else(bad)?),
        };
        if !out.contains(&tier) {
            out.push(tier);
        }
    }
    Ok(Some(out))
}

fn trigger_of(rule: &Value, kind: &str) -> Result<Trigger, String> {
    Ok(match kind {
        "score_drop" => Trigger::ScoreDrop(number(rule, "points", 0.1..=100.0)?),
        "grade_drop" => Trigger::GradeDrop,
        "finding_opened" => Trigger::FindingOpened(
            Severity::parse(text(rule, "severity")?)
                .map_err(|_| "severity must be one of: critical, high, medium, low, info".to_owned())?,
        ),
        "kev_appeared" => Trigger::KevAppeared,
        "rating_stale" => Trigger::RatingStale,
        _ => return Err(format!("kind must be one of: {}", KINDS.join(", "))),
    })
}

impl AlertRules {
    /// Parses `{"rules": [{"id", "kind", "tiers"?, …}]}`: every rule needs a unique `id`
    /// and a `kind` of [`KINDS`] with its field (`points` for score_drop, `severity` for
    /// finding_opened).
    pub fn parse(doc: &Value) -> Result<AlertRules, AlertRuleError> {
        let rules = rules_of(doc, MAX_RULES, |rule, kind| Ok((trigger_of(rule, kind)?, tiers(rule)?)))?;
        Ok(AlertRules {
            rules: rules.into_iter().map(|(id, (trigger, tiers))| AlertRule { id, trigger, tiers }).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_kind_parses_with_its_fields_and_tiers() {
        let doc = json!({"rules": [
            {"id": "drop5", "kind": "score_drop", "points": 5, "tiers": [1, 2]},
            {"id": "grade", "kind": "grade_drop"},
            {"id": "high", "kind": "finding_opened", "severity": "high", "tiers": [null, 1, 1]},
            {"id": "kev", "kind": "kev_appeared"},
            {"id": "stale", "kind": "rating_stale"}
        ]});
        let r = AlertRules::parse(&doc).unwrap();
        assert_eq!(r.rules.len(), KINDS.len());
        assert_eq!(r.rules[0].trigger, Trigger::ScoreDrop(5.0));
        assert_eq!(r.rules[2].tiers, Some(vec![None, Some(1)]));
        assert!(r.rules[0].covers(Some(2)) && !r.rules[0].covers(Some(3)) && !r.rules[0].covers(None));
        assert!(r.rules[1].covers(None) && r.rules[2].covers(None));
        assert!(r.rules.iter().zip(KINDS).all(|(rule, k)| rule.trigger.kind() == k));
    }

    #[test]
    fn a_malformed_rule_is_named() {
        for (rules, said) in [
            (json!([{"id": "a", "kind": "score_drop"}]), "rule 1 (a): points is required"),
            (
                json!([{"id": "a", "kind": "score_drop", "points": 0}]),
                "rule 1 (a): points must be a number from 0.1 to 100",
            ),
            (
                json!([{"id": "a", "kind": "grade_drop"}, {"id": "a", "kind": "grade_drop"}]),
                "rule 2 (a): another rule has this id",
            ),
            (
                json!([{"id": "b", "kind": "finding_opened", "severity": "dire"}]),
                "rule 1 (b): severity must be one of: critical, high, medium, low, info",
            ),
            (
                json!([{"id": "c", "kind": "grade_drop", "tiers": [9]}]),
                "rule 1 (c): tiers must be an array of tiers 1 to 4 or null (the untiered)",
            ),
            (
                json!([{"id": "d", "kind": "weather"}]),
                "rule 1 (d): kind must be one of: score_drop, grade_drop, finding_opened, kev_appeared, rating_stale",
            ),
            (json!([{"kind": "grade_drop"}]), "rule 1: id is required: 1 to 64 letters, digits, -, _ or ."),
        ] {
            assert_eq!(AlertRules::parse(&json!({ "rules": rules })).unwrap_err().to_string(), said);
        }
        assert_eq!(AlertRules::parse(&json!([])).unwrap_err(), AlertRuleError::NotRules);
    }
}
