//! The report: one self-contained HTML document (its style inline, its chart SVG, no
//! script) with the scorecard, the top findings with their remediation, the score
//! history and the methodology version — to send to a broker or a board, or to print to
//! PDF (`rampart report --format pdf` does, through headless Chromium).

use api::responses::guidelines::EvaluationOut;
use api::responses::{CompanyScores, ComponentOut, FindingOut, ImprovementPlanOut, ScoreHistory};
use maud::{DOCTYPE, Markup, PreEscaped, html};
use serde_json::Value;

use crate::pages::{self, Audience, COMPONENTS, or_empty};
use crate::{Api, Failure};

/// Findings the report lists, worst first.
pub const TOP_FINDINGS: usize = 10;

const STYLE: &str = include_str!("../assets/report.css");

/// A file name part from a social_id (its characters are safe already; this keeps a
/// name that is not one to letters, digits, `.`, `-` and `_`).
pub fn file_stem(social_id: &str) -> String {
    let stem: String =
        social_id.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')).take(100).collect();
    if stem.is_empty() { "company".to_owned() } else { stem }
}

/// The report of `social_id` (underwriter) or of the key's own company (monitor).
pub async fn document(api: &Api, who: Audience, social_id: &str) -> Result<String, Failure> {
    let sid = [("social_id", social_id)];
    let (scores_op, history_op, id): (&str, &str, &[(&str, &str)]) = match who {
        Audience::Underwriter => ("/underwriter-getcompanyscores", "/underwriter-getcompanyscore-history", &sid),
        Audience::Monitor => ("/monitor-getcompanyscores", "/monitor-getcompanyscore-history", &[]),
    };
    let scores: CompanyScores = api.get(scores_op, id).await?;
    let history = api.get(history_op, id).await;
    // The plan to the next grade up, when there is one and the key may ask for it.
    let plan_op = match who {
        Audience::Underwriter => "/underwriter-getimprovementplan",
        Audience::Monitor => "/monitor-getimprovementplan",
    };
    let plan = match pages::next_grade(or_empty(&scores.grade)) {
        Some(next) => {
            let mut at = id.to_vec();
            at.push(("target_grade", next));
            api.get::<ImprovementPlanOut>(plan_op, &at).await.ok()
        }
        None => None,
    };
    // The organisation's guidelines applied, for an underwriter of an organisation that
    // has set them (the API refuses the others).
    let evaluation = match who {
        Audience::Underwriter => api.get::<EvaluationOut>("/underwriter-evaluate-guidelines", &sid).await.ok(),
        Audience::Monitor => None,
    };
    let generated = model::timefmt::rfc3339(model::timefmt::now());
    let decisions = Decisions { plan: plan.as_ref(), evaluation: evaluation.as_ref() };
    Ok(render(&scores, &history, &decisions, &generated).into_string())
}

/// What the report prints beside the rating, when the key may ask for it: the plan to the
/// next grade up, and the organisation's guidelines applied.
#[derive(Debug, Default, Clone, Copy)]
pub struct Decisions<'a> {
    pub plan: Option<&'a ImprovementPlanOut>,
    pub evaluation: Option<&'a EvaluationOut>,
}

fn severity_rank(s: &str) -> u8 {
    match s.to_ascii_lowercase().as_str() {
        "critical" => 0,
        "high" => 1,
        "medium" => 2,
        "low" => 3,
        _ => 4,
    }
}

/// A scores answer whose findings the report ranks: the API's type, or its JSON as a
/// caller read it (the browser test, `crates/rampart/tests/web.rs`, does).
pub trait Findings {
    type Finding;
    /// Each finding with the place of its component in [`COMPONENTS`] and its severity.
    fn findings(&self) -> Vec<(usize, &str, &Self::Finding)>;
}

impl Findings for CompanyScores {
    type Finding = FindingOut;
    fn findings(&self) -> Vec<(usize, &str, &FindingOut)> {
        let Some(score) = &self.score else { return Vec::new() };
        COMPONENTS
            .iter()
            .enumerate()
            .flat_map(|(i, (_, _, member))| member(score).findings.iter().map(move |f| (i, f.severity.as_str(), f)))
            .collect()
    }
}

impl Findings for Value {
    type Finding = Value;
    fn findings(&self) -> Vec<(usize, &str, &Value)> {
        COMPONENTS
            .iter()
            .enumerate()
            .flat_map(|(i, (key, ..))| {
                let findings = self.get("score").and_then(|s| s.get(key)).and_then(|c| c.get("findings"));
                findings
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(move |f| (i, f.get("severity").and_then(Value::as_str).unwrap_or(""), f))
            })
            .collect()
    }
}

/// The worst findings across the components: by severity, then in component order.
pub fn top_findings<S: Findings>(scores: &S) -> Vec<(&'static str, &S::Finding)> {
    let mut all: Vec<(u8, usize, &S::Finding)> =
        scores.findings().into_iter().map(|(i, severity, f)| (severity_rank(severity), i, f)).collect();
    all.sort_by_key(|(rank, i, _)| (*rank, *i));
    all.into_iter().take(TOP_FINDINGS).map(|(_, i, f)| (COMPONENTS[i].1, f)).collect()
}

/// The components in the order of [`COMPONENTS`], with their names; none without a rating.
fn components(scores: &CompanyScores) -> [(&'static str, Option<&ComponentOut>); 12] {
    COMPONENTS.map(|(_, name, member)| (name, scores.score.as_ref().map(member)))
}

/// The methodology version of the rating (the components carry it).
fn methodology(scores: &CompanyScores) -> String {
    components(scores).iter().find_map(|(_, c)| c.map(|c| c.methodology.as_str())).unwrap_or("unknown").to_owned()
}

pub fn render(
    scores: &CompanyScores,
    history: &Result<ScoreHistory, Failure>,
    decisions: &Decisions<'_>,
    generated: &str,
) -> Markup {
    let plan = decisions.plan;
    let name = scores.company_name.as_str();
    let top = top_findings(scores);
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { "Rampart scorecard — " (name) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                header {
                    p.kicker { "Rampart cyber-risk scorecard" }
                    h1 { (name) }
                    p.muted { (scores.domain) " · " (scores.industry) " · social_id " (scores.social_id) }
                }
                section.summary {
                    @match scores.global_score {
                        Some(g) => p.global { span.grade { (or_empty(&scores.grade)) } " " (format!("{g:.1}")) " / 100" },
                        None => p.global { "Not rated" },
                    }
                    p { "Rated " (or_empty(&scores.scanned_at)) ". Methodology version " strong.methodology { (methodology(scores)) } " (docs/METHODOLOGY.md). Report made " (generated) "." }
                    @if scores.stale == Some(true) {
                        p.stale { strong { "Stale rating: " } (or_empty(&scores.stale_reason)) ". Last successful scan " (or_empty(&scores.last_successful_scan)) "." }
                    }
                }
                @if let Some(e) = decisions.evaluation {
                    section.guidelines {
                        h2 { "Underwriting guidelines" }
                        p { "Outcome: " strong.outcome { (e.outcome) } " under guideline version " (e.guideline_version) ", evaluated " (e.evaluated_at) "." }
                        table {
                            thead { tr { th { "Rule" } th { "Kind" } th { "Action" } th { "Outcome" } th { "Observed" } } }
                            tbody { @for r in &e.rules { tr {
                                td { (r.id) } td { (r.kind) } td { (r.action) } td { (r.outcome) }
                                td { (r.observed) @if let Some(n) = &r.note { " — " (n) } }
                            } } }
                        }
                    }
                }
                section {
                    h2 { "Components" }
                    table {
                        thead { tr { th { "Component" } th.num { "Score" } th { "Grade" } th.num { "Weight" } th.num { "Findings" } th { "Note" } } }
                        tbody {
                            @for (label, c) in components(scores) {
                                tr {
                                    td { (label) }
                                    td.num { @match c.and_then(|c| c.score) { Some(s) => (format!("{s:.0}")), None => "—" } }
                                    td { (c.and_then(|c| c.grade.as_deref()).unwrap_or("—")) }
                                    td.num { (format!("{:.1} %", c.map_or(0.0, |c| c.weight))) }
                                    td.num { (c.map_or(0, |c| c.findings_count)) }
                                    td { (c.and_then(|c| c.not_assessable.as_deref()).unwrap_or("")) }
                                }
                            }
                        }
                    }
                }
                section {
                    h2 { "Top findings" }
                    @if top.is_empty() { p { "No open findings." } }
                    ol.findings {
                        @for (component, f) in &top {
                            li {
                                p { strong { (f.title) } " — " (f.severity) ", " (component) ", on " (f.asset) }
                                p.evidence { "Evidence: " (f.evidence) }
                                @if let Some(c) = &f.severity_cvss { p { (f.cve.as_deref().unwrap_or("CVE")) ": " (pages::cvss(c)) } }
                                p { "Remediation: " (f.remediation) }
                            }
                        }
                    }
                }
                @if let Some(p) = plan {
                    section.plan {
                        h2 { "Plan to reach grade " (p.target_grade) }
                        @match p.outcome.as_str() {
                            "plan" => {
                                p { "The fewest fixes that take the score from " (format!("{:.1}", p.score)) " to " (format!("{:.0}", p.target_score)) " or more under methodology " (p.methodology) ", each with the score once it and those above it are fixed:" }
                                ol.findings {
                                    @for s in &p.steps {
                                        li {
                                            p { strong { (s.finding.title) } " — " (s.finding.severity) ", on " (s.finding.asset) " → " (format!("{:.1}", s.score_after)) " (" (s.grade_after) ")"
                                                @if let Some(cap) = &s.lifts_cap { "; lifts the cap of " (cap) } }
                                            p { "Remediation: " (s.finding.remediation) }
                                        }
                                    }
                                }
                            }
                            "reached" => p { "The rating is at grade " (p.target_grade) " already." },
                            _ => p { "Not reachable by fixes alone: " (or_empty(&p.why)) "." },
                        }
                    }
                }
                section {
                    h2 { "Score history" }
                    @match history {
                        Ok(h) => (pages::history(h, true)),
                        Err(f) => (pages::failure("Score history", f)),
                    }
                }
                footer {
                    p.muted { "Every score and finding above comes from non-intrusive observation of the company's internet-facing assets. The scoring method, with its weights and caps, is published in docs/METHODOLOGY.md (version " (methodology(scores)) ")." }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{self, components, finding, parse};
    use serde_json::json;

    fn scores() -> Value {
        json!({
            "social_id": "acme", "company_name": "Acme", "website": "https://www.acme.test", "domain": "acme.test",
            "industry": "Retail", "description": "", "subsidiaries_number": 0,
            "global_score": 64.2, "grade": "D", "scanned_at": "2026-11-01T10:00:00Z",
            "score": components(json!({
                "spf": {"score": 80.0, "grade": "B", "weight": 8.0, "assets_checked": 1, "findings_count": 1, "methodology": "2026.11",
                    "findings": [finding(1, "spf", "low", "SPF softfail")]},
                "open_ports": {"score": 20.0, "grade": "F", "weight": 10.0, "assets_checked": 1, "findings_count": 1, "methodology": "2026.11",
                    "findings": [finding(2, "open_ports", "critical", "RDP open to the internet")]}
            }), "2026.11")
        })
    }

    #[test]
    fn the_report_holds_the_name_score_first_finding_history_and_method() {
        let scores: CompanyScores = parse(scores());
        let history = Ok(parse(json!({"social_id": "acme", "company_name": "Acme", "data": [
            {"scanned_at": "2026-11-01T10:00:00Z", "score": 64.2, "grade": "D", "methodology": "2026.11", "components": {}},
            {"scanned_at": "2026-10-01T10:00:00Z", "score": 70.0, "grade": "C", "methodology": "2026.11", "components": {}}
        ], "pagination": fixtures::pagination(1, 100, 1, 2)})));
        let html = render(&scores, &history, &Decisions::default(), "2026-11-02T00:00:00Z").into_string();
        assert!(html.contains("<h1>Acme</h1>") && html.contains("64.2"));
        // Worst first, whatever the component order.
        let rdp = html.find("RDP open to the internet").unwrap();
        assert!(rdp < html.find("SPF softfail").unwrap());
        assert!(html.contains("2026.11") && html.contains("<svg"));
        assert!(!html.contains("<script"), "a report runs nothing");
        assert_eq!(html.matches("<tr>").count(), (1 + 12) + (1 + 2), "components and history, each with a header row");
        assert!(!html.contains("Stale rating"));
        // A stale rating says so (docs/API.md: `stale` on the score answers).
        let mut stale = scores;
        stale.stale = Some(true);
        stale.stale_reason = Some("rated 9 d ago, more than twice its rescan cadence of 24 h".to_owned());
        stale.last_successful_scan = Some("2026-11-01T10:00:00Z".to_owned());
        let html = render(&stale, &history, &Decisions::default(), "2026-11-10T00:00:00Z").into_string();
        assert!(html.contains("Stale rating") && html.contains("more than twice its rescan cadence of 24 h"), "{html}");
    }

    /// The answer's JSON ranks as its type does (the browser test ranks the JSON).
    #[test]
    fn the_top_findings_of_the_answer_and_of_its_json_are_the_same() {
        for json in [scores(), fixtures::scores(), fixtures::scores_in_full(), fixtures::unrated()] {
            let typed: CompanyScores = parse(json.clone());
            let of_type: Vec<(&str, i64)> = top_findings(&typed).into_iter().map(|(c, f)| (c, f.id)).collect();
            let of_json: Vec<(&str, i64)> = top_findings(&json)
                .into_iter()
                .map(|(c, f)| (c, f.get("id").and_then(Value::as_i64).unwrap_or(0)))
                .collect();
            assert_eq!(of_type, of_json);
        }
        let typed: CompanyScores = parse(scores());
        let ranked: Vec<&str> = top_findings(&typed).iter().map(|(_, f)| f.title.as_str()).collect();
        assert_eq!(ranked, ["RDP open to the internet", "SPF softfail"]);
    }

    /// The organisation's guidelines applied: the outcome, its version and every rule.
    #[test]
    fn the_report_prints_the_guideline_outcome() {
        let evaluation: EvaluationOut = parse(serde_json::json!({
            "social_id": "acme", "company_name": "Acme", "outcome": "decline", "guideline_version": 3,
            "evaluated_at": "2026-11-02T00:00:00Z", "score": 72.0, "grade": "C",
            "rules": [{"id": "no-rdp", "kind": "forbidden_finding", "action": "decline", "outcome": "decline",
                       "observed": "1 finding", "note": null, "findings": []},
                      {"id": "min-score", "kind": "min_global_score", "action": "refer", "outcome": "refer",
                       "observed": "72.0", "note": "below 80", "findings": []}]
        }));
        let decisions = Decisions { evaluation: Some(&evaluation), ..Default::default() };
        let html = render(&parse(scores()), &Ok(parse(fixtures::history())), &decisions, "now").into_string();
        assert!(html.contains("<h2>Underwriting guidelines</h2>"), "{html}");
        assert!(
            html.contains(r#"Outcome: <strong class="outcome">decline</strong> under guideline version 3"#),
            "{html}"
        );
        assert!(html.contains("<td>no-rdp</td>") && html.contains("72.0 — below 80"), "{html}");
        let none =
            render(&parse(scores()), &Ok(parse(fixtures::history())), &Decisions::default(), "now").into_string();
        assert!(!none.contains("Underwriting guidelines"));
    }

    /// The plan to the next grade: each fix with the score after it and its remediation.
    #[test]
    fn the_report_prints_the_plan_to_the_next_grade() {
        let plan = parse(fixtures::plan());
        let html = render(
            &parse(scores()),
            &Ok(parse(fixtures::history())),
            &Decisions { plan: Some(&plan), ..Default::default() },
            "2026-11-02T00:00:00Z",
        )
        .into_string();
        assert!(html.contains("<h2>Plan to reach grade B</h2>"), "{html}");
        assert!(html.contains("→ 76.0 (C); lifts the cap of a critical finding"), "{html}");
        assert!(html.contains("→ 81.0 (B)</p><p>Remediation: fix it</p>"), "{html}");
    }

    /// A top finding about a CVE shows the CVSS metric its severity is computed from, with
    /// its version and vector.
    #[test]
    fn a_cve_finding_shows_its_cvss_version_and_vector() {
        let mut v = scores();
        v["score"]["vulnerabilities"] = json!({"score": 10.0, "grade": "F", "weight": 10.0, "assets_checked": 1,
            "findings_count": 1, "methodology": "2026.11", "findings": [fixtures::cve_finding(3)]});
        let html = render(&parse(v), &Ok(parse(fixtures::history())), &Decisions::default(), "2026-11-02T00:00:00Z")
            .into_string();
        assert!(html.contains("CVE-2022-26134: <span class=\"cvss\""), "{html}");
        assert!(
            html.contains(
                ">CVSS v3.1 9.8</span> <code class=\"cvss-vector\">CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H</code>"
            ),
            "{html}"
        );
        let plain =
            render(&parse(scores()), &Ok(parse(fixtures::history())), &Decisions::default(), "2026-11-02T00:00:00Z")
                .into_string();
        assert!(!plain.contains("<code class=\"cvss-vector\">"));
    }

    #[test]
    fn file_names_keep_safe_characters_only() {
        assert_eq!(file_stem("acme-robotics"), "acme-robotics");
        assert_eq!(file_stem("a\"b/../c"), "ab..c");
        assert_eq!(file_stem(""), "company");
    }
}
