//! The report: one self-contained HTML document (its style inline, its chart SVG, no
//! script) with the scorecard, the top findings with their remediation, the score
//! history and the methodology version — to send to a broker or a board, or to print to
//! PDF (`rampart report --format pdf` does, through headless Chromium).

use maud::{DOCTYPE, Markup, PreEscaped, html};
use serde_json::Value;

use crate::pages::{self, Audience, COMPONENTS, text};
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
    let scores = api.get(scores_op, id).await?;
    let history = api.get(history_op, id).await;
    let generated = model::timefmt::rfc3339(model::timefmt::now());
    Ok(render(&scores, &history, &generated).into_string())
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

/// The worst findings across the components: by severity, then in component order.
pub fn top_findings(scores: &Value) -> Vec<(&'static str, &Value)> {
    let mut all: Vec<(u8, usize, &'static str, &Value)> = Vec::new();
    for (i, (key, name)) in COMPONENTS.iter().enumerate() {
        for f in scores["score"][key]["findings"].as_array().into_iter().flatten() {
            all.push((severity_rank(text(&f["severity"])), i, name, f));
        }
    }
    all.sort_by_key(|(rank, i, _, _)| (*rank, *i));
    all.into_iter().take(TOP_FINDINGS).map(|(_, _, name, f)| (name, f)).collect()
}

/// The methodology version of the rating (the components carry it).
fn methodology(scores: &Value) -> String {
    COMPONENTS.iter().find_map(|(key, _)| scores["score"][key]["methodology"].as_str()).unwrap_or("unknown").to_owned()
}

pub fn render(scores: &Value, history: &Result<Value, Failure>, generated: &str) -> Markup {
    let name = text(&scores["company_name"]);
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
                    p.muted { (text(&scores["domain"])) " · " (text(&scores["industry"])) " · social_id " (text(&scores["social_id"])) }
                }
                section.summary {
                    @match scores["global_score"].as_f64() {
                        Some(g) => p.global { span.grade { (text(&scores["grade"])) } " " (format!("{g:.1}")) " / 100" },
                        None => p.global { "Not rated" },
                    }
                    p { "Rated " (text(&scores["scanned_at"])) ". Methodology version " strong.methodology { (methodology(scores)) } " (docs/METHODOLOGY.md). Report made " (generated) "." }
                    @if scores["stale"].as_bool() == Some(true) {
                        p.stale { strong { "Stale rating: " } (text(&scores["stale_reason"])) ". Last successful scan " (text(&scores["last_successful_scan"])) "." }
                    }
                }
                section {
                    h2 { "Components" }
                    table {
                        thead { tr { th { "Component" } th.num { "Score" } th { "Grade" } th.num { "Weight" } th.num { "Findings" } th { "Note" } } }
                        tbody {
                            @for (key, label) in COMPONENTS {
                                @let c = &scores["score"][key];
                                tr {
                                    td { (label) }
                                    td.num { @match c["score"].as_f64() { Some(s) => (format!("{s:.0}")), None => "—" } }
                                    td { (c["grade"].as_str().unwrap_or("—")) }
                                    td.num { (format!("{:.1} %", c["weight"].as_f64().unwrap_or(0.0))) }
                                    td.num { (c["findings_count"].as_u64().unwrap_or(0)) }
                                    td { (c["not_assessable"].as_str().unwrap_or("")) }
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
                                p { strong { (text(&f["title"])) } " — " (text(&f["severity"])) ", " (component) ", on " (text(&f["asset"])) }
                                p.evidence { "Evidence: " (text(&f["evidence"])) }
                                p { "Remediation: " (text(&f["remediation"])) }
                            }
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
    use serde_json::json;

    #[test]
    fn the_report_holds_the_name_score_first_finding_history_and_method() {
        let f = |id: i64, sev: &str, title: &str| json!({"id": id, "severity": sev, "title": title, "asset": "a.test", "evidence": "seen", "remediation": "fix it"});
        let scores = json!({
            "social_id": "acme", "company_name": "Acme", "domain": "acme.test", "industry": "Retail",
            "global_score": 64.2, "grade": "D", "scanned_at": "2026-11-01T10:00:00Z",
            "score": {
                "spf": {"score": 80.0, "grade": "B", "weight": 8.0, "findings_count": 1, "methodology": "2026.11", "findings": [f(1, "low", "SPF softfail")]},
                "open_ports": {"score": 20.0, "grade": "F", "weight": 10.0, "findings_count": 1, "methodology": "2026.11", "findings": [f(2, "critical", "RDP open to the internet")]}
            }
        });
        let history = Ok(
            json!({"data": [{"scanned_at": "2026-11-01T10:00:00Z", "score": 64.2, "grade": "D"}, {"scanned_at": "2026-10-01T10:00:00Z", "score": 70.0, "grade": "C"}]}),
        );
        let html = render(&scores, &history, "2026-11-02T00:00:00Z").into_string();
        assert!(html.contains("<h1>Acme</h1>") && html.contains("64.2"));
        // Worst first, whatever the component order.
        let rdp = html.find("RDP open to the internet").unwrap();
        assert!(rdp < html.find("SPF softfail").unwrap());
        assert!(html.contains("2026.11") && html.contains("<svg"));
        assert!(!html.contains("<script"), "a report runs nothing");
        assert_eq!(html.matches("<tr>").count(), (1 + 12) + (1 + 2), "components and history, each with a header row");
        assert!(!html.contains("Stale rating"));
        // A stale rating says so (docs/API.md: `stale` on the score answers).
        let mut stale = scores.clone();
        stale["stale"] = json!(true);
        stale["stale_reason"] = json!("rated 9 d ago, more than twice its rescan cadence of 24 h");
        stale["last_successful_scan"] = json!("2026-11-01T10:00:00Z");
        let html = render(&stale, &history, "2026-11-10T00:00:00Z").into_string();
        assert!(html.contains("Stale rating") && html.contains("more than twice its rescan cadence of 24 h"), "{html}");
    }

    #[test]
    fn file_names_keep_safe_characters_only() {
        assert_eq!(file_stem("acme-robotics"), "acme-robotics");
        assert_eq!(file_stem("a\"b/../c"), "ab..c");
        assert_eq!(file_stem(""), "company");
    }
}
