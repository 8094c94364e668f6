//! The views, rendered from API answers, read into the API's own answer types
//! (`api::responses`), so a view reads each member by its name in the type and a renamed
//! member fails to compile. A section whose operation was refused shows the refusal (a
//! key without the scope sees why) and the rest of the page still renders. Everything
//! from an answer is escaped (maud).
//!
//! One part stays JSON ([`serde_json::Value`]), rendered field by field as the answer
//! has it: the free-form objects of an incident (its impact, affected entities,
//! response, data breach and ransomware, as the incident's record holds them).

use api::responses::{
    ApplicationsAssets, BenchmarkOut, CompanyHistory, CompanyInfo, CompanyScores, CompanySubScores, ComponentOut,
    CvssOut, DataLossPrediction, FindingOut, IncidentDetail, IncidentPrediction, InfrastructureAssets, LastScanned,
    ListSubsidiaries, PaginationOut, PeerBenchmarks, PredictionInputs, RatingOut, SbomPage, ScannedCompany,
    ScoreComponents, ScoreHistory, TailRiskOut, TailRiskPrediction, WhatIfOut,
};
use maud::{DOCTYPE, Markup, html};
use serde_json::Value;

use crate::Failure;
use crate::chart;

/// Whose view: an underwriter looks up any company; a monitored company sees its own,
/// with rescans, subsidiaries to manage and predictions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Audience {
    Underwriter,
    Monitor,
}

impl Audience {
    /// Whose view a request asks for: the company its `social_id` names, or the key's own
    /// company when it names none.
    pub fn of(social_id: &str) -> Audience {
        if social_id.is_empty() { Audience::Monitor } else { Audience::Underwriter }
    }

    /// The parameter that names the company to the API: `social_id` for an underwriter,
    /// none for a monitor (its company is the key's).
    pub fn naming(self, social_id: &str) -> Vec<(&'static str, &str)> {
        match self {
            Audience::Underwriter => vec![("social_id", social_id)],
            Audience::Monitor => Vec::new(),
        }
    }

    /// The path of a company resource's operation for this audience
    /// (`/underwriter-getimprovementplan`, `/monitor-getimprovementplan`).
    pub fn operation(self, resource: &str) -> String {
        match self {
            Audience::Underwriter => format!("/underwriter-{resource}"),
            Audience::Monitor => format!("/monitor-{resource}"),
        }
    }
}

/// The caller's disputes by finding, the latest of each: a monitor's view shows a
/// finding's dispute state (open, accepted, rejected and why); an underwriter's has none.
#[derive(Debug, Default)]
pub struct Disputes(std::collections::HashMap<i64, api::responses::DisputeOut>);

impl Disputes {
    /// From the disputes newest first (as `/monitor-getdisputes` lists them).
    pub fn of(list: Vec<api::responses::DisputeOut>) -> Disputes {
        let mut by = std::collections::HashMap::new();
        for d in list {
            if let Some(id) = d.finding_id {
                by.entry(id).or_insert(d);
            }
        }
        Disputes(by)
    }

    fn get(&self, finding: i64) -> Option<&api::responses::DisputeOut> {
        self.0.get(&finding)
    }
}

/// The member of the score object that holds one component.
pub type Member = fn(&ScoreComponents) -> &ComponentOut;

/// The twelve components in the order the spec lists them: their key (the member's
/// name in the answer), their names on screen, and the member.
pub const COMPONENTS: [(&str, &str, Member); 12] = [
    ("spf", "SPF", |s| &s.spf),
    ("dkim", "DKIM", |s| &s.dkim),
    ("dmarc", "DMARC", |s| &s.dmarc),
    ("certificate_info", "Certificate information", |s| &s.certificate_info),
    ("certificate_conf", "Certificate configuration", |s| &s.certificate_conf),
    ("certificate_cve", "Certificate CVEs", |s| &s.certificate_cve),
    ("open_ports", "Open ports", |s| &s.open_ports),
    ("web_headers", "Web headers", |s| &s.web_headers),
    ("it_standardization", "IT standardization", |s| &s.it_standardization),
    ("digitalization", "Digitalization", |s| &s.digitalization),
    ("vulnerabilities", "Vulnerabilities", |s| &s.vulnerabilities),
    ("sbom", "SBOM", |s| &s.sbom),
];

/// An optional text of an answer, empty when absent.
pub(crate) fn or_empty(s: &Option<String>) -> &str {
    s.as_deref().unwrap_or("")
}

/// A figure of an answer, when it is one (a rating not made has none).
pub(crate) fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|f| f.is_finite())
}

/// The CVSS metric a CVE's severity is computed from: its version, score and vector.
pub(crate) fn cvss(c: &CvssOut) -> Markup {
    html! {
        span.cvss title="The CVSS metric the severity is computed from" {
            "CVSS v" (c.version)
            @if let Some(s) = finite(Some(c.score)) { " " (format!("{s:.1}")) }
        }
        @if let Some(v) = &c.vector { " " code.cvss-vector { (v) } }
    }
}

/// A query string from pairs, encoded.
pub(crate) fn query(pairs: &[(&str, &str)]) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        q.append_pair(k, v);
    }
    q.finish()
}

pub(crate) fn grade_class(grade: &str) -> &'static str {
    match grade {
        "A" => "grade grade-a",
        "B" => "grade grade-b",
        "C" => "grade grade-c",
        "D" => "grade grade-d",
        "E" => "grade grade-e",
        "F" => "grade grade-f",
        _ => "grade grade-none",
    }
}

pub(crate) fn severity_class(severity: &str) -> &'static str {
    match severity.to_ascii_lowercase().as_str() {
        "critical" => "sev sev-critical",
        "high" => "sev sev-high",
        "medium" => "sev sev-medium",
        "low" => "sev sev-low",
        _ => "sev sev-info",
    }
}

/// The date part of an RFC 3339 time.
pub(crate) fn day(t: &str) -> &str {
    t.get(..10).unwrap_or(t)
}

/// An RFC 3339 time of an answer as people read it: `2026-12-03 13:20 UTC` (the text as
/// it came when it is not one).
pub(crate) fn when(t: &str) -> String {
    match model::timefmt::parse_datetime(t) {
        Some(at) => {
            let at = at.to_offset(time::UtcOffset::UTC);
            format!("{} {:02}:{:02} UTC", model::timefmt::format_date(at.date()), at.hour(), at.minute())
        }
        None => t.to_owned(),
    }
}

/// The host name of a finding's asset (`host`, `host:port`, or a URL).
pub(crate) fn asset_host(asset: &str) -> &str {
    let rest = asset.split_once("://").map_or(asset, |(_, r)| r);
    let rest = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    match rest.rsplit_once(':') {
        Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => rest,
    }
}

/// The whole document served at `/` and `/app/…`: the sign-in form and the frame each
/// view is put in. Its script and style are files of this server (no CDN).
pub fn shell() -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "Rampart" }
                link rel="icon" href="data:,";
                link rel="stylesheet" href="/assets/app.css";
                script src="/assets/app.js" defer {}
            }
            body {
                a.skip href="#view" { "Skip to content" }
                header.top {
                    a.brand href="/app/" { "Rampart" }
                    nav #nav aria-label="Main" hidden {
                        a href="/app/" { "Home" }
                        a #alerts-link href="/app/alerts" hidden { "Alerts " span #unread.badge aria-label="unread alerts" {} }
                        button #signout type="button" { "Sign out" }
                    }
                }
                div #status role="status" aria-live="polite" {}
                main #main {
                    section #signin hidden {
                        h1 { "Sign in" }
                        p { "Rampart's scorecard shows what your API key may see. The key stays in this tab (its session storage) and is sent only to this server, as the " code { "apikey" } " header." }
                        form #signin-form {
                            label for="apikey" { "API key" }
                            input #apikey name="apikey" type="password" autocomplete="off" required spellcheck="false";
                            button type="submit" { "Sign in" }
                        }
                        p #signin-error .error {}
                    }
                    div #view tabindex="-1" {}
                }
                noscript { p { "The scorecard needs JavaScript to send your key. The API answers without it: see " a href="/docs" { "/docs" } "." } }
            }
        }
    }
}

/// A refused or failed operation, in the place of what it would have shown.
pub fn failure(what: &str, f: &Failure) -> Markup {
    html! {
        p.error data-status=(f.status.as_u16()) {
            (what) ": " (f.message) " (" (f.status.as_u16()) ")"
        }
    }
}

/// A section from an answer that may have been refused.
pub(crate) fn section<T>(what: &str, answer: &Result<T, Failure>, body: impl FnOnce(&T) -> Markup) -> Markup {
    match answer {
        Ok(v) => body(v),
        Err(f) => failure(what, f),
    }
}

/// What a key can do, found by asking the API.
pub struct Home {
    pub recent: Result<LastScanned, Failure>,
    pub own: Result<CompanyInfo, Failure>,
    /// The organisation's portfolios (refused to a key without the portfolio scope).
    pub portfolios: Result<api::responses::portfolio::PortfoliosOut, Failure>,
}

pub fn home(h: &Home) -> Markup {
    let underwriter = h.recent.is_ok();
    let monitor = !matches!(&h.own, Err(f) if f.status.as_u16() == 403);
    html! {
        h1 { "Rampart scorecard" }
        @match &h.portfolios {
            Ok(list) => (crate::portfolio::portfolios(list)),
            Err(f) if f.status.as_u16() == 403 => {},
            Err(f) => (failure("Your portfolios", f)),
        }
        @if monitor {
            section.card {
                h2 { "Your company" }
                @match &h.own {
                    Ok(info) => {
                        p { strong { (info.company_name) } " — " (info.website) }
                        p { a.button href="/app/monitor" { "Open your scorecard" } " " a.button href="/app/predictions" { "Predictions" } }
                    }
                    Err(f) => (failure("Your company", f)),
                }
            }
        }
        @if underwriter {
            section.card {
                h2 { "Find a company" }
                (search_form(""))
            }
            section.card {
                h2 { "Last companies scanned" }
                @if let Ok(recent) = &h.recent { (companies_table(&recent.data)) }
            }
        }
        @if !underwriter && !monitor {
            p.error { "This key has neither the underwriter nor the monitor scope: the scorecard has nothing to show it. The API's other operations are described at " a href="/docs" { "/docs" } "." }
        }
    }
}

pub(crate) fn search_form(q: &str) -> Markup {
    html! {
        form.search data-nav action="/app/search" role="search" {
            label for="q" { "Company name, domain or social_id" }
            input #q name="q" type="search" value=(q) required maxlength="200";
            button type="submit" { "Search" }
        }
    }
}

fn companies_table(rows: &[ScannedCompany]) -> Markup {
    html! {
        @if rows.is_empty() { p { "None yet." } } @else {
            table {
                thead { tr { th { "Company" } th { "Domain" } th.num { "Score" } th { "Scanned" } } }
                tbody {
                    @for c in rows {
                        tr {
                            td { a href={"/app/company?" (query(&[("social_id", &c.social_id)]))} { (c.company_name) } }
                            td { (or_empty(&c.domain)) }
                            td.num { (score_badge(c.score, c.grade.as_deref())) }
                            td { (day(or_empty(&c.scanned_at))) }
                        }
                    }
                }
            }
        }
    }
}

pub(crate) fn score_badge(score: Option<f64>, grade: Option<&str>) -> Markup {
    let grade = grade.unwrap_or("");
    html! {
        @match finite(score) {
            Some(s) => span class=(grade_class(grade)) { (format!("{s:.1}")) " " (grade) },
            None => span.grade.grade-none { "not rated" },
        }
    }
}

/// A company a search found: by what, and its rating when it has one.
pub struct Found {
    pub name: String,
    pub social_id: String,
    pub how: &'static str,
    pub score: Option<f64>,
    pub grade: Option<String>,
}

/// Search results: every company the name, domain or social_id search found.
pub fn search(q: &str, found: &[Found], refused: &[Failure]) -> Markup {
    html! {
        h1 { "Search: " (q) }
        (search_form(q))
        @if found.is_empty() { p { "No company matches." } }
        ul.results {
            @for c in found {
                li data-social-id=(c.social_id) {
                    (score_badge(c.score, c.grade.as_deref())) " "
                    a href={"/app/company?" (query(&[("social_id", &c.social_id)]))} { (c.name) } " " span.muted { (c.social_id) " · by " (c.how) }
                }
            }
        }
        @for f in refused { (failure("Search", f)) }
    }
}

/// The subsidiaries of a scorecard: an underwriter reads their scores
/// (`/underwriter-getcompanysubscores`), a monitor key lists its own
/// (`/monitor-listsubsidiaries`, records without a grade).
pub enum Subsidiaries {
    Scores(CompanySubScores),
    Listed(ListSubsidiaries),
}

/// Everything the scorecard shows, each as the API answered it.
pub struct Scorecard {
    pub scores: CompanyScores,
    /// The monitor key's disputes (none for an underwriter).
    pub disputes: Disputes,
    /// The organisation's guidelines applied (an underwriter of an organisation that
    /// has set them).
    pub evaluation: Option<api::responses::guidelines::EvaluationOut>,
    pub history: Result<ScoreHistory, Failure>,
    pub subsidiaries: Result<Subsidiaries, Failure>,
    pub applications: Result<ApplicationsAssets, Failure>,
    pub infrastructure: Result<InfrastructureAssets, Failure>,
    pub sbom: Result<SbomPage, Failure>,
    pub incidents: Result<CompanyHistory, Failure>,
}

pub fn scorecard(who: Audience, card: &Scorecard) -> Markup {
    let s = &card.scores;
    let sid = s.social_id.as_str();
    let report = match who {
        Audience::Underwriter => format!("/ui/report?{}", query(&[("social_id", sid)])),
        Audience::Monitor => "/ui/report".to_owned(),
    };
    let grade = or_empty(&s.grade);
    html! {
        article.scorecard data-social-id=(sid) {
            header.company {
                div {
                    h1 { (s.company_name) }
                    p.muted { (s.domain) " · " (s.industry) " · social_id " (sid) }
                    @if !s.description.is_empty() { p { (s.description) } }
                }
                div.global {
                    @match finite(s.global_score) {
                        Some(g) => {
                            span class={(grade_class(grade)) " big"} { (grade) }
                            span.score-figure { (format!("{g:.1}")) span.muted { " / 100" } }
                        }
                        None => span.grade.grade-none.big { "—" },
                    }
                    @if let Some(at) = &s.scanned_at { p.muted { "rated " (day(at)) } }
                    @if let Some(p) = &s.peer_benchmarks { (peers(p)) }
                }
            }
            nav.actions aria-label="Scorecard actions" {
                button type="button" data-report=(report) data-filename={"rampart-report-" (sid) ".html"} { "Download report" }
                @match who {
                    Audience::Underwriter => a.button href={"/app/predictions?" (query(&[("social_id", sid)]))} { "Predictions" },
                    Audience::Monitor => a.button href="/app/predictions" { "Predictions" },
                }
                @if let Some(next) = next_grade(grade) {
                    @let link = match who {
                        Audience::Underwriter => format!("/app/plan?{}", query(&[("social_id", sid), ("target_grade", next)])),
                        Audience::Monitor => format!("/app/plan?{}", query(&[("target_grade", next)])),
                    };
                    a.button href=(link) { "Plan to reach " (next) }
                }
            }
            @if let Some(e) = &card.evaluation { (guidelines(e)) }
            @if let Some(m) = &s.message { p.notice { (m) } }
            @if s.stale == Some(true) {
                p.notice.stale { strong { "Stale rating: " } (or_empty(&s.stale_reason)) ". Last successful scan " (day(or_empty(&s.last_successful_scan))) "." }
            }
            @if !s.scan_notes.is_empty() {
                div.notice { p { "What limited the last scan:" } ul { @for n in &s.scan_notes { li { (n) } } } }
            }
            section {
                h2 { "Components" }
                @if let Some(score) = &s.score {
                    ol.components { @for (key, name, member) in COMPONENTS { (component(who, sid, key, name, member(score), &card.disputes)) } }
                } @else { p { "No rating yet." } }
            }
            section {
                h2 { "Score history" }
                (section("Score history", &card.history, |v| history(v, false)))
            }
            section {
                h2 { "Subsidiaries" }
                (section("Subsidiaries", &card.subsidiaries, |v| subsidiaries(who, s, v)))
            }
            section {
                h2 { "Applications" }
                (section("Applications", &card.applications, |v| applications(v, &list_link(who, sid, AssetKind::Applications, 1))))
            }
            section {
                h2 { "Infrastructure" }
                (section("Infrastructure", &card.infrastructure, |v| infrastructure(v, &list_link(who, sid, AssetKind::Infrastructure, 1))))
            }
            section {
                h2 { "Software (SBOM) with CVEs" }
                (section("SBOM", &card.sbom, |v| sbom(v, &list_link(who, sid, AssetKind::Sbom, 1))))
            }
            section {
                h2 { "Incident history" }
                (section("Incident history", &card.incidents, |v| incidents(who, v)))
            }
        }
    }
}

/// Where the score stands among peers: a percentile, or why there is none.
fn peers(p: &PeerBenchmarks) -> Markup {
    let groups: [(&str, &BenchmarkOut); 2] = [("Among peers", &p.sector_and_size), ("Overall", &p.overall)];
    html! {
        ul.peers {
            @for (label, b) in groups {
                li {
                    (label) ": "
                    @match finite(b.percentile) {
                        Some(v) => { "percentile rank " strong { (format!("{v:.0}")) } " among " (b.peers) " · " }
                        None => { (or_empty(&b.note)) " · " }
                    }
                    span.muted { (b.group) }
                }
            }
        }
    }
}

fn component(who: Audience, sid: &str, key: &str, name: &str, c: &ComponentOut, disputes: &Disputes) -> Markup {
    let score = finite(c.score);
    let findings = &c.findings;
    let count = u64::from(c.findings_count);
    let grade = or_empty(&c.grade);
    html! {
        li.component id={"component-" (key)} {
            div.component-head {
                span.component-name { (name) }
                @match score {
                    Some(v) => {
                        svg.bar viewBox="0 0 100 8" role="img" aria-label={(name) " " (format!("{v:.0}")) " of 100"} preserveAspectRatio="none" {
                            rect.track x="0" y="0" width="100" height="8" {}
                            rect class={"fill " (grade_class(grade))} x="0" y="0" width=(format!("{:.1}", v.clamp(0.0, 100.0))) height="8" {}
                        }
                        span class=(grade_class(grade)) { (grade) }
                        span.num { (format!("{v:.0}")) }
                    }
                    None => span.na { "not assessable" },
                }
                span.muted.weight { "weight " (format!("{:.1}", finite(Some(c.weight)).unwrap_or(0.0))) " %" }
                @if c.disputed { span.tag.disputed { "disputed" } }
            }
            @if let Some(why) = &c.not_assessable { p.muted { (why) } }
            @if !findings.is_empty() {
                details.findings {
                    summary { (count) " finding" @if count != 1 { "s" } @if (findings.len() as u64) < count { " (the " (findings.len()) " worst shown)" } }
                    ul { @for f in findings { li { (finding(who, f, disputes)) } } }
                    p { a href=(findings_link(who, sid, key)) { "All " (count) " of " (name) " (open and closed, with filters) →" } }
                }
            } @else if score.is_some() {
                p.muted { "No findings (" (c.assets_checked) " assets checked)." }
            }
        }
    }
}

/// The organisation's guidelines applied to the company: the outcome, and each rule that
/// refers or declines with what was observed.
fn guidelines(e: &api::responses::guidelines::EvaluationOut) -> Markup {
    let broken: Vec<_> = e.rules.iter().filter(|r| r.outcome != "pass").collect();
    html! {
        section.guidelines data-outcome=(e.outcome) aria-label="Underwriting guidelines" {
            p {
                "Underwriting guidelines (version " (e.guideline_version) "): "
                strong class={"outcome " (e.outcome)} { (e.outcome) }
                @if broken.is_empty() { " — every rule passes." } @else { " — " (broken.len()) " of " (e.rules.len()) " rules:" }
            }
            @if !broken.is_empty() {
                ul { @for r in &broken { li {
                    strong { (r.outcome) } " " code { (r.id) } " (" (r.kind) "): observed " (r.observed)
                    @if let Some(n) = &r.note { " — " (n) }
                    @if !r.findings.is_empty() { span.muted { " · " (r.findings.len()) " finding" @if r.findings.len() != 1 { "s" } } }
                } }
            } }
        }
    }
}

pub(crate) fn finding(who: Audience, f: &FindingOut, disputes: &Disputes) -> Markup {
    let id = f.id;
    let dispute = disputes.get(id);
    let open = f.disputed || dispute.is_some_and(|d| d.state == "open");
    let asset = f.asset.as_str();
    let last_seen = f.last_seen.as_str();
    html! {
        details.finding data-finding-id=(id) data-last-seen=(last_seen) {
            summary {
                span class=(severity_class(&f.severity)) { (f.severity) }
                " " (f.title) " " span.muted { "on " (asset) }
                @if f.disputed { " " span.tag.disputed { "disputed" } }
                @if f.compensating_control { " " span.tag { "compensating control: no weight" } }
            }
            dl {
                dt { "Check" } dd { code { (f.code) } }
                @if let Some(cve) = &f.cve { dt { "CVE" } dd { (cve) } }
                @if let Some(c) = &f.severity_cvss { dt { "CVSS" } dd { (cvss(c)) } }
                @if let Some(component) = &f.component { dt { "Software" } dd { (component) } }
                dt { "Evidence" } dd { pre { (f.evidence) } }
                dt { "Remediation" } dd { (f.remediation) }
                @if !f.references.is_empty() {
                    dt { "References" }
                    dd { ul { @for r in &f.references { li { (link(r)) } } } }
                }
                dt { "First seen" } dd { (f.first_seen) }
                dt { "Last seen" } dd { (last_seen) }
            }
            @if let Some(d) = dispute {
                p class={"dispute-state " (d.state)} {
                    @match d.state.as_str() {
                        "open" => { strong { "Dispute open" } " since " (day(&d.opened_at)) " (" (d.reason) "): " (d.explanation) }
                        state => {
                            strong { "Dispute " (state) } " " (d.decided_at.as_deref().map(day).unwrap_or_default())
                            @if let Some(by) = &d.decided_by { " by " (by) }
                            @if let Some(note) = &d.note { ": " (note) }
                        }
                    }
                }
            }
            @if who == Audience::Monitor {
                form.rescan data-action="/ui/monitor/rescan" data-then="watch" data-finding=(id) data-last-seen=(last_seen) {
                    input type="hidden" name="subdomain" value=(asset_host(asset));
                    input type="hidden" name="risk_vector_id" value=(f.risk_vector);
                    button type="submit" { "Rescan " (asset_host(asset)) " for " (f.risk_vector) }
                }
                @if !open {
                    details.dispute {
                        summary { @if dispute.is_some() { "Dispute it again" } @else { "Dispute this finding" } }
                        form data-action="/ui/monitor/dispute" data-then="reload" {
                            input type="hidden" name="finding_id" value=(id);
                            label { "Reason "
                                select name="reason" required {
                                    option value="fixed" { "Fixed (a rescan decides)" }
                                    option value="compensating_control" { "Compensating control" }
                                    option value="not_ours" { "Not our asset" }
                                    option value="incorrect" { "Incorrect finding" }
                                }
                            }
                            label { "Explanation " textarea name="explanation" maxlength="2000" required rows="3" {} }
                            button type="submit" { "Send dispute" }
                        }
                    }
                }
            }
        }
    }
}

/// The findings table of a company's component (an underwriter's names the company).
fn findings_link(who: Audience, sid: &str, key: &str) -> String {
    match who {
        Audience::Underwriter => format!("/app/findings?{}", query(&[("social_id", sid), ("risk_vector", key)])),
        Audience::Monitor => format!("/app/findings?{}", query(&[("risk_vector", key)])),
    }
}

/// The grade above `grade` (none above A): the report's and the scorecard's default target.
pub fn next_grade(grade: &str) -> Option<&'static str> {
    match grade {
        "F" => Some("E"),
        "E" => Some("D"),
        "D" => Some("C"),
        "C" => Some("B"),
        "B" => Some("A"),
        _ => None,
    }
}

/// The plan view: the target grade to choose, and the plan.
pub fn plan_view(who: Audience, p: &api::responses::ImprovementPlanOut) -> Markup {
    let back = match who {
        Audience::Underwriter => format!("/app/company?{}", query(&[("social_id", &p.social_id)])),
        Audience::Monitor => "/app/monitor".to_owned(),
    };
    html! {
        h1 { "Plan to reach grade " (p.target_grade) ": " (p.company_name) }
        nav.actions { a.button href=(back) { "← " (p.company_name) } }
        form.search data-nav action="/app/plan" {
            @if who == Audience::Underwriter { input type="hidden" name="social_id" value=(p.social_id); }
            label for="target-grade" { "Target grade" }
            select #target-grade name="target_grade" {
                @for g in ["A", "B", "C", "D", "E"] { option value=(g) selected[p.target_grade == g] { (g) } }
            }
            button type="submit" { "Plan" }
        }
        (plan(who, p))
    }
}

/// An improvement plan: the outcome, then each fix with the score after it, its
/// evidence and remediation (the web app's plan view and the report show it).
pub fn plan(who: Audience, p: &api::responses::ImprovementPlanOut) -> Markup {
    html! {
        section.plan data-outcome=(p.outcome) {
            p {
                "From " (score_badge(Some(p.score), Some(&p.grade))) " to grade " span class=(grade_class(&p.target_grade)) { (p.target_grade) }
                " (" (format!("{:.0}", p.target_score)) " or more): "
                @match p.outcome.as_str() {
                    "reached" => { strong { "reached already" } "; nothing needs fixing." }
                    "plan" => {
                        strong { (p.steps.len()) " fix" @if p.steps.len() != 1 { "es" } }
                        " — the fewest that reach it under methodology " (p.methodology) ", ending at "
                        (score_badge(p.score_after, p.grade_after.as_deref())) "."
                    }
                    _ => { strong { "not reachable by fixes alone" } ": " (or_empty(&p.why)) "." }
                }
            }
            @if !p.steps.is_empty() {
                ol.plan-steps {
                    @for s in &p.steps {
                        li data-finding-id=(s.finding.id) {
                            span.muted { "+" (format!("{:.1}", s.gain)) " alone · then " } (score_badge(Some(s.score_after), Some(&s.grade_after)))
                            @if let Some(cap) = &s.lifts_cap { " " span.tag { "lifts the cap of " (cap) } }
                            (finding(who, &s.finding, &Disputes::default()))
                        }
                    }
                }
            }
        }
    }
}

/// A reference: a link when it is a web address, text otherwise.
fn link(r: &str) -> Markup {
    html! {
        @if r.starts_with("https://") || r.starts_with("http://") {
            a href=(r) rel="noreferrer noopener" { (r) }
        } @else { (r) }
    }
}

/// The score history chart (oldest to newest) and its figures.
/// `open`: the table of figures shown (a printed report), not folded.
pub fn history(v: &ScoreHistory, open: bool) -> Markup {
    let mut points: Vec<(f64, f64, &RatingOut)> = v
        .data
        .iter()
        .filter_map(|r| {
            let at = model::timefmt::parse_datetime(&r.scanned_at)?;
            Some((at.unix_timestamp() as f64, finite(Some(r.score))?, r))
        })
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let xy: Vec<(f64, f64)> = points.iter().map(|(x, y, _)| (*x, *y)).collect();
    let date = |x: f64| {
        time::OffsetDateTime::from_unix_timestamp(x as i64)
            .map(|t| model::timefmt::format_date(t.date()))
            .unwrap_or_default()
    };
    html! {
        (chart::line("Global score by rating date", &xy, (0.0, 100.0), date, |y| format!("{y:.0}")))
        details open[open] {
            summary { (points.len()) @if points.len() == 1 { " rating" } @else { " ratings" } }
            table {
                thead { tr { th { "Rated" } th.num { "Score" } th { "Grade" } th { "Why" } th { "Methodology" } } }
                tbody {
                    @for (_, score, r) in points.iter().rev() {
                        tr {
                            td { (r.scanned_at) }
                            td.num { (format!("{score:.1}")) }
                            td { (r.grade) }
                            td { (r.reason.as_deref().unwrap_or("imported")) }
                            td { (r.methodology) }
                        }
                    }
                }
            }
        }
    }
}

/// One subsidiary as the tree shows it.
struct Subsidiary<'a> {
    social_id: &'a str,
    company_name: &'a str,
    score: Option<f64>,
    grade: Option<&'a str>,
}

fn subsidiaries(who: Audience, parent: &CompanyScores, v: &Subsidiaries) -> Markup {
    let list: Vec<Subsidiary<'_>> = match v {
        Subsidiaries::Scores(s) => s
            .subsidiaries_scores
            .iter()
            .map(|c| Subsidiary {
                social_id: &c.social_id,
                company_name: &c.company_name,
                score: c.score,
                grade: c.grade.as_deref(),
            })
            .collect(),
        Subsidiaries::Listed(l) => l
            .subsidiaries_list
            .iter()
            .map(|c| Subsidiary { social_id: &c.social_id, company_name: &c.company_name, score: c.score, grade: None })
            .collect(),
    };
    html! {
        ul.tree {
            li {
                span { (parent.company_name) " " (score_badge(parent.global_score, parent.grade.as_deref())) }
                @if list.is_empty() { p.muted { "No subsidiaries." } } @else {
                    ul {
                        @for c in &list {
                            li {
                                @if who == Audience::Underwriter {
                                    a href={"/app/company?" (query(&[("social_id", c.social_id)]))} { (c.company_name) }
                                } @else { (c.company_name) }
                                " " span.muted { (c.social_id) }
                                " " (score_badge(c.score, c.grade))
                                @if who == Audience::Monitor {
                                    form.inline data-action="/ui/monitor/subsidiary/remove" data-then="reload" {
                                        input type="hidden" name="subsidiary_id" value=(c.social_id);
                                        button type="submit" aria-label={"Remove " (c.company_name)} { "Remove" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        @if who == Audience::Monitor {
            details.add {
                summary { "Add a subsidiary" }
                form.stack data-action="/ui/monitor/subsidiary" data-then="reload" {
                    input type="hidden" name="parent_social_id" value=(parent.social_id);
                    label for="sub-name" { "Name" } input #sub-name name="name" required maxlength="200";
                    label for="sub-website" { "Website" } input #sub-website name="website" required maxlength="300" placeholder="https://www.example.com";
                    label for="sub-sid" { "social_id" } input #sub-sid name="social_id" required maxlength="100" pattern="[A-Za-z0-9][A-Za-z0-9._\\-]{0,99}";
                    label for="sub-industry" { "Industry" } input #sub-industry name="industry" maxlength="200";
                    label for="sub-employees" { "Employees" } input #sub-employees name="employees" type="number" min="0" max="10000000";
                    button type="submit" { "Add subsidiary" }
                }
            }
        }
    }
}

/// The lists a scorecard shows the first page of, each with a page of its own.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AssetKind {
    Applications,
    Infrastructure,
    Sbom,
}

impl AssetKind {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "applications" => Some(Self::Applications),
            "infrastructure" => Some(Self::Infrastructure),
            "sbom" => Some(Self::Sbom),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Applications => "applications",
            Self::Infrastructure => "infrastructure",
            Self::Sbom => "sbom",
        }
    }
    fn title(self) -> &'static str {
        match self {
            Self::Applications => "Applications",
            Self::Infrastructure => "Infrastructure",
            Self::Sbom => "Software (SBOM) with CVEs",
        }
    }
    /// The operation that lists it, for an underwriter or a monitor key.
    pub fn operation(self, who: Audience) -> &'static str {
        match (who, self) {
            (Audience::Underwriter, Self::Applications) => "/underwriter-getcompanyapplicationsassets",
            (Audience::Underwriter, Self::Infrastructure) => "/underwriter-getcompanyinfrastructureassets",
            (Audience::Underwriter, Self::Sbom) => "/underwriter-getcompanysbomcve",
            (Audience::Monitor, Self::Applications) => "/monitor-getcompanyapplicationsassets",
            (Audience::Monitor, Self::Infrastructure) => "/monitor-getcompanyinfrastructureassets",
            (Audience::Monitor, Self::Sbom) => "/monitor-getcompanysbomcve",
        }
    }
}

/// One page of a list, as its operation answered it.
pub enum AssetPage {
    Applications(ApplicationsAssets),
    Infrastructure(InfrastructureAssets),
    Sbom(SbomPage),
}

impl AssetPage {
    pub fn kind(&self) -> AssetKind {
        match self {
            Self::Applications(_) => AssetKind::Applications,
            Self::Infrastructure(_) => AssetKind::Infrastructure,
            Self::Sbom(_) => AssetKind::Sbom,
        }
    }
    fn pagination(&self) -> &PaginationOut {
        match self {
            Self::Applications(a) => &a.pagination,
            Self::Infrastructure(i) => &i.pagination,
            Self::Sbom(s) => &s.pagination,
        }
    }
    /// The company's name (an SBOM page does not say it).
    fn company_name(&self) -> &str {
        match self {
            Self::Applications(a) => &a.company_name,
            Self::Infrastructure(i) => &i.company_name,
            Self::Sbom(_) => "",
        }
    }
}

/// The page of one list (an underwriter's names the company; a monitor key's is its own).
fn list_link(who: Audience, social_id: &str, kind: AssetKind, page: u64) -> String {
    let page = page.to_string();
    match who {
        Audience::Underwriter => {
            format!("/app/assets?{}", query(&[("kind", kind.as_str()), ("social_id", social_id), ("page", &page)]))
        }
        Audience::Monitor => format!("/app/assets?{}", query(&[("kind", kind.as_str()), ("page", &page)])),
    }
}

fn paging_note(p: &PaginationOut, shown: usize, all: &str) -> Markup {
    let total = p.total_items;
    html! { @if total > shown as u64 { p { "The first " (shown) " of " (total) ". " a href=(all) { "All " (total) " →" } } } }
}

/// One page of a list, with the links to the others.
pub fn asset_list(who: Audience, social_id: &str, v: &AssetPage) -> Markup {
    let kind = v.kind();
    let p = v.pagination();
    let (current, pages) = (p.current_page, p.total_pages);
    let name = [v.company_name(), social_id].into_iter().find(|n| !n.is_empty()).unwrap_or("the scorecard");
    let back = match who {
        Audience::Underwriter => format!("/app/company?{}", query(&[("social_id", social_id)])),
        Audience::Monitor => "/app/monitor".to_owned(),
    };
    let none = String::new();
    html! {
        h1 { (kind.title()) }
        p { a href=(back) { "← " (name) } " · page " (current) " of " (pages.max(1)) " · " (p.total_items) " in all" }
        @match v {
            AssetPage::Applications(a) => (applications(a, &none)),
            AssetPage::Infrastructure(i) => (infrastructure(i, &none)),
            AssetPage::Sbom(s) => (sbom(s, &none)),
        }
        (pager(p, |n| list_link(who, social_id, kind, n)))
    }
}

/// The previous and next pages of a paged answer, each a link made by `link`.
pub(crate) fn pager(p: &PaginationOut, link: impl Fn(u64) -> String) -> Markup {
    let (current, pages) = (p.current_page, p.total_pages);
    html! {
        nav.pager aria-label="Pages" {
            @if current > 1 { a href=(link(current - 1)) rel="prev" { "← Previous" } }
            @if current < pages { a href=(link(current + 1)) rel="next" { "Next →" } }
        }
    }
}

fn applications(v: &ApplicationsAssets, all: &str) -> Markup {
    let rows = &v.applications;
    html! {
        @if rows.is_empty() { p { "No applications detected." } } @else {
            div.scroll { table {
                thead { tr { th { "Application" } th { "Version" } th { "Host" } th { "Categories" } th { "Why" } } }
                tbody { @for a in rows { tr {
                    td { (a.name) }
                    td { (a.version.as_deref().unwrap_or("—")) }
                    td { (a.host) }
                    td { (a.categories.join(", ")) }
                    td { (a.evidence) @if let Some(c) = a.confidence { span.muted { " (confidence " (c) " %)" } } }
                } } }
            } }
            @if !all.is_empty() { (paging_note(&v.pagination, rows.len(), all)) }
        }
    }
}

fn infrastructure(v: &InfrastructureAssets, all: &str) -> Markup {
    let rows = &v.network_endpoints;
    html! {
        @if rows.is_empty() { p { "No network endpoints found." } } @else {
            div.scroll { table {
                thead { tr { th { "Endpoint" } th { "Host" } th { "Service" } th { "Attributed because" } } }
                tbody { @for e in rows { tr {
                    td { code { (e.ip) ":" (e.port) "/" (e.protocol) } }
                    td { (e.host.as_deref().unwrap_or("—")) }
                    td { (or_empty(&e.service)) " " (or_empty(&e.product)) " " (or_empty(&e.version)) }
                    td { strong { (e.attribution.source) } ": " (e.attribution.evidence) }
                } } }
            } }
            @if !all.is_empty() { (paging_note(&v.pagination, rows.len(), all)) }
        }
    }
}

fn sbom(v: &SbomPage, all: &str) -> Markup {
    let rows = &v.data;
    html! {
        @if let Some(m) = &v.message { p.muted { (m) } }
        @if rows.is_empty() { p { "No software components with CVEs." } } @else {
            div.scroll { table {
                thead { tr { th { "Component" } th { "Hosts" } th { "End of life" } th { "CVEs (CVSS · KEV · EPSS)" } } }
                tbody { @for c in rows { tr {
                    td { (c.name) " " (or_empty(&c.version)) }
                    td { (c.hosts.join(", ")) }
                    td { @match c.end_of_life { Some(true) => span.sev.sev-high { "yes" }, Some(false) => "no", None => "unknown" }
                         @if let Some(l) = &c.latest_version { span.muted { " (latest " (l) ")" } } }
                    td { ul.cves { @for cve in c.cves.as_deref().unwrap_or_default() { li.muted[!cve.scored] {
                        strong { (cve.id) }
                        @if !cve.scored { " · " span title="Listed, not scored: NVD does not say this version is affected" { (cve.basis) } }
                        @if let Some(c) = &cve.severity_cvss { " · " (cvss(c)) }
                        @if cve.kev { " · " span.sev.sev-critical title="In CISA's Known Exploited Vulnerabilities catalogue" { "KEV" } }
                        @if let Some(e) = finite(cve.epss) { " · EPSS " (chart::percent(e)) }
                    } } } }
                } } }
            } }
            @if !all.is_empty() { (paging_note(&v.pagination, rows.len(), all)) }
        }
    }
}

fn incidents(who: Audience, v: &CompanyHistory) -> Markup {
    let rows = &v.incidents;
    html! {
        @if rows.is_empty() { p { "No public incidents on record." } } @else {
            ul.incidents { @for i in rows { li {
                @if who == Audience::Underwriter {
                    a href={"/app/incident?" (query(&[("incident_id", &i.incident_id)]))} { (i.title) }
                } @else { strong { (i.title) } }
                br;
                span.muted { (i.date_detected.as_deref().unwrap_or("date unknown")) " · " (i.kind) " · " (i.attack_vector) " · " (i.threat_actor) " · " (i.investigation_status) }
            } } }
        }
    }
}

/// One incident in full. Its impact, affected entities, response, data breach and
/// ransomware are objects of the incident's record, free-form: shown member by member.
pub fn incident(v: &IncidentDetail) -> Markup {
    let d = &v.data;
    let texts: [(&str, Option<&str>); 9] = [
        ("Detected", d.date_detected.as_deref()),
        ("Disclosed", d.date_publicly_disclosed.as_deref()),
        ("Type", Some(&d.kind)),
        ("Attack vector", Some(&d.attack_vector)),
        ("Threat actor", Some(&d.threat_actor)),
        ("Motivation", Some(&d.motivation)),
        ("Investigation", Some(&d.investigation_status)),
        ("Stakeholder advisories", Some(&d.stakeholder_advisories)),
        ("Customer advisories", Some(&d.customer_advisories)),
    ];
    let records: [(&str, &Value); 5] = [
        ("Impact", &d.impact),
        ("Affected", &d.affected_entities),
        ("Response", &d.response),
        ("Data breach", &d.data_breach),
        ("Ransomware", &d.ransomware),
    ];
    html! {
        h1 { (d.title) }
        p.muted { "Incident " (v.incident_id) }
        p { (d.description) }
        dl.wide {
            @for (label, t) in texts {
                dt { (label) } dd { (t.unwrap_or("—")) }
            }
            @for (label, r) in records {
                dt { (label) } dd { (value(r, 0)) }
            }
            dt { "References" }
            dd { @if d.references.is_empty() { "—" } @else { ul { @for r in &d.references { li { (link(r)) } } } } }
        }
    }
}

/// Any JSON value, readably: objects as lists of fields, arrays as lists.
fn value(v: &Value, depth: u8) -> Markup {
    if depth > 4 {
        return html! { "…" };
    }
    html! {
        @match v {
            Value::Null => "—",
            Value::Bool(b) => (if *b { "yes" } else { "no" }),
            Value::Number(n) => (n),
            Value::String(s) => (link(s)),
            Value::Array(a) => @if a.is_empty() { "—" } @else { ul { @for x in a { li { (value(x, depth + 1)) } } } },
            Value::Object(o) => dl { @for (k, x) in o { dt { (k.replace('_', " ")) } dd { (value(x, depth + 1)) } } },
        }
    }
}

/// The three predictions of a company (the one an underwriter names, or the key's own),
/// with their inputs.
pub fn predictions(
    who: Audience,
    social_id: &str,
    period: u32,
    notice: Option<&str>,
    incident: &Result<IncidentPrediction, Failure>,
    loss: &Result<DataLossPrediction, Failure>,
    tail: &Result<TailRiskPrediction, Failure>,
) -> Markup {
    html! {
        article.predictions {
        @match who {
            Audience::Underwriter => {
                h1 { "Predictions: " (social_id) }
                nav.actions { a.button href={"/app/company?" (query(&[("social_id", social_id)]))} { "← Scorecard" } }
            }
            Audience::Monitor => { h1 { "Predictions" } }
        }
        @if let Some(n) = notice { p.notice { (n) } }
        form.inline data-nav action="/app/predictions" {
            @if who == Audience::Underwriter { input type="hidden" name="social_id" value=(social_id); }
            label for="period" { "Horizon in months" }
            input #period name="period" type="number" min="1" max="60" value=(period);
            button type="submit" { "Show" }
        }
        section {
            h2 { "Incident probability by month" }
            (section("Incident prediction", incident, |v| {
                let rows: Vec<Month> = v.data.iter().map(|m| Month {
                    month: m.month, probability: m.probability, count: m.expected_incidents,
                    inputs: &m.inputs, units: &m.units, methodology: &m.methodology,
                }).collect();
                by_month(v.message.as_deref(), &rows, &v.what_if, &MonthFigures {
                    probability: ("Probability", "probability of an incident"),
                    chart: "Probability of at least one incident within each horizon (months)",
                    count: ("Expected incidents", 3),
                })
            }))
        }
        section {
            h2 { "Loss exceedance" }
            (section("Tail risk estimation", tail, |v| html! {
                @if let Some(msg) = &v.message { p.notice { (msg) } }
                @if let Some(t) = v.data.first() { (tail_risk(t, &v.what_if)) }
            }))
        }
        section {
            h2 { "Data-loss estimate" }
            (section("Data-loss prediction", loss, |v| {
                let rows: Vec<Month> = v.data.iter().map(|m| Month {
                    month: m.month, probability: m.breach_probability, count: m.expected_records,
                    inputs: &m.inputs, units: &m.units, methodology: &m.methodology,
                }).collect();
                by_month(v.message.as_deref(), &rows, &v.what_if, &MonthFigures {
                    probability: ("Breach probability", "probability of a breach"),
                    chart: "Probability of at least one data breach within each horizon (months)",
                    count: ("Expected records lost", 0),
                })
            }))
        }
        }
    }
}

/// The loss over the horizon: the exceedance curve, the figures, the what-if, the inputs.
fn tail_risk(t: &TailRiskOut, what_ifs: &[WhatIfOut]) -> Markup {
    let curve: Vec<(f64, f64)> = t.exceedance.iter().map(|p| (p.threshold_usd, p.probability)).collect();
    let marks = [("VaR 95", t.var95_usd), ("VaR 99", t.var99_usd), ("TVaR 95", t.tvar95_usd)];
    html! {
        (chart::exceedance("Probability that losses over the horizon exceed each amount", &curve, &marks))
        dl.figures {
            dt { "Probability of any loss" } dd { (chart::percent(t.probability_of_loss)) }
            dt { "Expected loss" } dd { (chart::usd(t.expected_loss_usd)) }
            dt { "VaR 95 %" } dd { (chart::usd(t.var95_usd)) }
            dt { "VaR 99 %" } dd { (chart::usd(t.var99_usd)) }
            dt { "TVaR 95 %" } dd { (chart::usd(t.tvar95_usd)) }
            dt { "Loss per event, median / 95th percentile" } dd { (chart::usd(t.loss_given_event_p50_usd)) " / " (chart::usd(t.loss_given_event_p95_usd)) }
            dt { "Simulated paths" } dd { (t.paths) " (seed " (t.seed) ")" }
        }
        (what_if(what_ifs, t.expected_loss_usd, "expected loss", chart::usd))
        (inputs(&t.inputs, &t.units, &t.methodology))
    }
}

/// One month of a by-month prediction (incidents or data loss), as the view reads it.
struct Month<'a> {
    month: u32,
    probability: f64,
    count: f64,
    inputs: &'a PredictionInputs,
    units: &'a str,
    methodology: &'a str,
}

/// What a by-month prediction shows: its probability (column, what-if label), its
/// chart's title, and its expected count (column, decimals).
struct MonthFigures {
    probability: (&'static str, &'static str),
    chart: &'static str,
    count: (&'static str, usize),
}

/// A prediction with one item per month (incidents, data loss): bars of the probability,
/// the what-if of each finding, the table, the inputs.
fn by_month(message: Option<&str>, rows: &[Month], what_ifs: &[WhatIfOut], f: &MonthFigures) -> Markup {
    let (column, what) = f.probability;
    let (count_column, decimals) = f.count;
    let bars: Vec<(String, f64)> = rows.iter().map(|m| (m.month.to_string(), m.probability)).collect();
    let top = bars.iter().map(|b| b.1).fold(0.0_f64, f64::max).max(0.01);
    let now = rows.last().map_or(f64::NAN, |m| m.probability);
    html! {
        @if let Some(msg) = message { p.notice { (msg) } }
        (chart::bars(f.chart, &bars, top, chart::percent))
        (what_if(what_ifs, now, what, chart::percent))
        table {
            thead { tr { th { "Within months" } th.num { (column) } th.num { (count_column) } } }
            tbody { @for m in rows { tr {
                td { (m.month) }
                td.num { (chart::percent(m.probability)) }
                td.num { (format!("{:.*}", decimals, m.count)) }
            } } }
        }
        @if let Some(first) = rows.first() { (inputs(first.inputs, first.units, first.methodology)) }
    }
}

/// The prediction with each triggering finding fixed (the answer's `what_if`).
fn what_if(rows: &[WhatIfOut], now: f64, label: &str, fmt: impl Fn(f64) -> String) -> Markup {
    html! {
        @if !rows.is_empty() {
            table.what-if {
                caption { "What fixing each finding would do (" (label) " now: " (fmt(now)) ")" }
                thead { tr { th { "Finding" } th { "Asset" } th.num { "With it fixed" } th { "Why" } } }
                tbody { @for w in rows { tr {
                    td { code { (w.code) } }
                    td { (w.asset) }
                    td class={"num" @if w.change > 0.0 { " rises" }} { (fmt(w.at_period)) }
                    td.why { (w.why) }
                } } }
            }
        }
    }
}

/// What a prediction was computed from (every input, by its name), and its method.
fn inputs(inputs: &PredictionInputs, units: &str, methodology: &str) -> Markup {
    let all = serde_json::to_value(inputs).unwrap_or_default();
    html! {
        details.inputs {
            summary { "Inputs and method" }
            (value(&all, 0))
            p.muted { "Units: " (units) }
            p.muted { "Method: " (methodology) }
        }
    }
}

/// A short answer to an action (rescan queued, subsidiary added).
pub fn message(ok: bool, text: &str) -> Markup {
    html! { p class=(if ok { "ok" } else { "error" }) { (text) } }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{self, parse};
    use serde_json::json;

    /// Any JSON value, nested a few levels.
    fn any_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
            any::<i64>().prop_map(|i| Value::Number(i.into())),
            ".{0,40}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                proptest::collection::btree_map(
                    prop_oneof![
                        Just("score".to_owned()),
                        Just("findings".to_owned()),
                        Just("data".to_owned()),
                        Just("grade".to_owned()),
                        Just("global_score".to_owned()),
                        Just("what_if".to_owned()),
                        Just("pagination".to_owned()),
                        Just("exceedance".to_owned()),
                        "[a-z_]{1,12}",
                    ],
                    inner,
                    0..8,
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Texts an answer may hold: any, markup, times and addresses.
    fn any_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            ".{0,40}",
            Just("<script>alert(1)</script>".to_owned()),
            Just("2026-11-01T10:00:00Z".to_owned()),
            Just("https://x.test:8443/<script>".to_owned()),
            Just(String::new()),
        ]
    }

    /// What proptest drew, put in the place of every text, fraction and list length of
    /// an answer: its shape, so the type it reads as, stays.
    struct Draws {
        texts: Vec<String>,
        numbers: Vec<f64>,
        lengths: Vec<usize>,
        at: usize,
    }

    impl Draws {
        fn next<T: Clone>(&mut self, from: fn(&Self) -> &Vec<T>) -> T {
            self.at += 1;
            let list = from(self);
            list[self.at % list.len()].clone()
        }
        fn mutate(&mut self, v: &mut Value) {
            match v {
                Value::String(s) => *s = self.next(|d| &d.texts),
                Value::Number(n) if n.is_f64() => {
                    if let Some(x) = serde_json::Number::from_f64(self.next(|d| &d.numbers)) {
                        *n = x;
                    }
                }
                Value::Array(a) => {
                    a.iter_mut().for_each(|x| self.mutate(x));
                    let len = self.next(|d| &d.lengths);
                    if !a.is_empty() {
                        *a = (0..len).map(|i| a[i % a.len()].clone()).collect();
                    }
                }
                Value::Object(o) => o.values_mut().for_each(|x| self.mutate(x)),
                _ => {}
            }
        }
        fn parse<T: serde::de::DeserializeOwned>(&mut self, mut v: Value) -> T {
            self.mutate(&mut v);
            parse(v)
        }
    }

    proptest::proptest! {
        /// Whatever an answer holds, every view renders (no panic) and escapes it.
        #[test]
        fn any_answer_renders(
            texts in proptest::collection::vec(any_text(), 1..12),
            numbers in proptest::collection::vec(proptest::num::f64::ANY, 1..12),
            lengths in proptest::collection::vec(0usize..6, 1..12),
            w in any_json(),
        ) {
            let mut d = Draws { texts, numbers, lengths, at: 0 };
            for scores in [fixtures::scores(), fixtures::scores_in_full(), fixtures::unrated()] {
                for who in [Audience::Underwriter, Audience::Monitor] {
                    let card = Scorecard {
                        scores: d.parse(scores.clone()),
                        disputes: Disputes::default(),
                        evaluation: None,
                        history: Ok(d.parse(fixtures::history())),
                        subsidiaries: Ok(match who {
                            Audience::Underwriter => Subsidiaries::Scores(d.parse(fixtures::subscores())),
                            Audience::Monitor => Subsidiaries::Listed(d.parse(fixtures::listed_subsidiaries())),
                        }),
                        applications: Ok(d.parse(fixtures::applications(1))),
                        infrastructure: Ok(d.parse(fixtures::infrastructure())),
                        sbom: Ok(d.parse(fixtures::sbom())),
                        incidents: Ok(d.parse(fixtures::incidents())),
                    };
                    let html = scorecard(who, &card).into_string();
                    proptest::prop_assert!(!html.contains("<script"), "{html}");
                    for page in [
                        AssetPage::Applications(d.parse(fixtures::applications(2))),
                        AssetPage::Infrastructure(d.parse(fixtures::infrastructure())),
                        AssetPage::Sbom(d.parse(fixtures::sbom())),
                    ] {
                        let html = asset_list(who, "x", &page).into_string();
                        proptest::prop_assert!(!html.contains("<script"), "{html}");
                    }
                }
                let planned = d.parse(fixtures::plan());
                let html = crate::report::render(&d.parse(scores), &Ok(d.parse(fixtures::history())), &crate::report::Decisions { plan: Some(&planned), ..Default::default() }, "now").into_string();
                proptest::prop_assert!(!html.contains("<script"), "{html}");
                let html = plan(Audience::Monitor, &planned).into_string();
                proptest::prop_assert!(!html.contains("<script"), "{html}");
            }
            let html = incident(&d.parse(fixtures::incident())).into_string();
            proptest::prop_assert!(!html.contains("<script"), "{html}");
            let html = home(&Home {
                recent: Ok(d.parse(fixtures::last_scanned())),
                own: Ok(d.parse(fixtures::company_info())),
                portfolios: Ok(d.parse(fixtures::portfolios())),
            })
            .into_string();
            proptest::prop_assert!(!html.contains("<script"), "{html}");
            for html in crate::portfolio::every_view(&mut |mut v| { d.mutate(&mut v); v }) {
                proptest::prop_assert!(!html.contains("<script"), "{html}");
            }
            let incident = d.parse(fixtures::month_prediction("probability", "expected_incidents", json!([])));
            let loss = d.parse(fixtures::month_prediction("breach_probability", "expected_records", json!([])));
            let html = predictions(Audience::Monitor, "", 12, None, &Ok(incident), &Ok(loss), &Ok(d.parse(fixtures::tail_risk()))).into_string();
            proptest::prop_assert!(!html.contains("<script"), "{html}");
            let _ = crate::report::top_findings(&w);
        }

        /// The host of an asset is always a part of it.
        #[test]
        fn an_asset_host_is_part_of_the_asset(asset in ".{0,80}") {
            proptest::prop_assert!(asset.contains(asset_host(&asset)));
        }
    }

    #[test]
    fn the_host_of_an_asset() {
        assert_eq!(asset_host("mail.example.test:25"), "mail.example.test");
        assert_eq!(asset_host("https://www.example.test:8443/login"), "www.example.test");
        assert_eq!(asset_host("example.test"), "example.test");
        assert_eq!(asset_host("[2001:db8::1]"), "[2001:db8::1]");
    }

    fn scores() -> CompanyScores {
        parse(fixtures::scores())
    }

    fn card(who: Audience, scores: CompanyScores) -> Scorecard {
        let refused = || Err(Failure::new(axum::http::StatusCode::FORBIDDEN, "not allowed"));
        Scorecard {
            scores,
            disputes: Disputes::default(),
            evaluation: None,
            history: Ok(parse(fixtures::history())),
            subsidiaries: Ok(match who {
                Audience::Underwriter => Subsidiaries::Scores(parse(fixtures::subscores())),
                Audience::Monitor => Subsidiaries::Listed(parse(fixtures::listed_subsidiaries())),
            }),
            applications: refused(),
            infrastructure: Ok(parse(fixtures::infrastructure())),
            sbom: Ok(parse(fixtures::sbom())),
            incidents: Ok(parse(fixtures::incidents())),
        }
    }

    /// The scores answer's component, by its member.
    fn dmarc(s: &mut CompanyScores) -> &mut ComponentOut {
        &mut s.score.as_mut().expect("a rating").dmarc
    }

    /// A stale rating says so, with why and when the last scan succeeded (docs/API.md,
    /// `stale` on the score answers).
    #[test]
    fn a_stale_rating_is_marked_on_the_scorecard() {
        let fresh = scorecard(Audience::Underwriter, &card(Audience::Underwriter, scores())).into_string();
        assert!(!fresh.contains("Stale rating"));
        let mut s = scores();
        s.stale = Some(true);
        s.stale_reason = Some("the last scan failed at 2026-11-03T10:00:00Z: acme.test: REFUSED".to_owned());
        s.last_successful_scan = Some("2026-11-01T10:00:00Z".to_owned());
        let html = scorecard(Audience::Underwriter, &card(Audience::Underwriter, s)).into_string();
        assert!(html.contains("Stale rating"), "{html}");
        assert!(html.contains("the last scan failed at 2026-11-03T10:00:00Z: acme.test: REFUSED"));
    }

    #[test]
    fn an_underwriter_scorecard_shows_every_part_and_escapes_the_answers() {
        let html = scorecard(Audience::Underwriter, &card(Audience::Underwriter, scores())).into_string();
        assert!(html.contains("Acme &lt;b&gt;Corp&lt;/b&gt;"), "escaped name");
        assert!(!html.contains("<b>Corp"));
        for part in [
            "71.5",
            "DMARC policy is none",
            "Set p=reject",
            "no DKIM selector found",
            "Acme Sub",
            "CVE-2016-0777",
            "KEV",
            "EPSS 50.0 %",
            "Breach",
            "/app/incident?incident_id=INC-1",
            "Applications: not allowed (403)",
            "rampart-report-acme.html",
        ] {
            assert!(html.contains(part), "{part} missing");
        }
        // Twelve components, those not assessable too.
        assert_eq!(html.matches("class=\"component\"").count(), 12);
        // An underwriter cannot rescan.
        assert!(!html.contains("/ui/monitor/rescan"));
        assert!(
            html.contains(r#"href="https://www.rfc-editor.org/rfc/rfc7489""#) && html.contains("<li>RFC 7489</li>")
        );
    }

    #[test]
    fn a_monitor_scorecard_offers_a_rescan_of_each_finding_and_subsidiary_forms() {
        let html = scorecard(Audience::Monitor, &card(Audience::Monitor, scores())).into_string();
        assert!(html.contains(r#"data-action="/ui/monitor/rescan""#));
        assert!(html.contains(r#"name="subdomain" value="acme.test""#));
        assert!(html.contains(r#"name="risk_vector_id" value="dmarc""#));
        assert!(html.contains(r#"data-finding-id="7""#));
        assert!(html.contains("/ui/monitor/subsidiary/remove") && html.contains("Add a subsidiary"));
        assert!(html.contains(r#"name="subsidiary_id" value="acme-sub""#), "{html}");
        assert!(html.contains("/app/predictions"));
    }

    #[test]
    fn disputes_and_peers_are_shown_and_a_monitor_may_dispute() {
        let mut v = scores();
        dmarc(&mut v).disputed = true;
        dmarc(&mut v).findings[0].disputed = true;
        v.peer_benchmarks = Some(parse(json!({
            "sector_and_size": {"group": "NAICS 44-45 Retail Trade, 50-249 employees", "peers": 14, "percentile": 71.4},
            "overall": {"group": "all rated companies", "peers": 3, "percentile": null, "note": "fewer than 10 rated peers"}
        })));
        let html = scorecard(Audience::Underwriter, &card(Audience::Underwriter, scores_like(&v))).into_string();
        assert_eq!(html.matches("tag disputed").count(), 2, "the component and its finding");
        assert!(html.contains("percentile rank <strong>71</strong> among 14"), "{html}");
        assert!(html.contains("NAICS 44-45 Retail Trade") && html.contains("fewer than 10 rated peers"));
        assert!(!html.contains("/ui/monitor/dispute"), "an underwriter cannot dispute");
        // A disputed finding is not offered a second dispute; an undisputed one is.
        let monitor = scorecard(Audience::Monitor, &card(Audience::Monitor, v)).into_string();
        assert!(!monitor.contains("/ui/monitor/dispute"));
        let mut w = scores();
        dmarc(&mut w).findings[0].compensating_control = true;
        let monitor = scorecard(Audience::Monitor, &card(Audience::Monitor, w)).into_string();
        assert!(
            monitor.contains(r#"data-action="/ui/monitor/dispute""#)
                && monitor.contains(r#"name="finding_id" value="7""#)
        );
        assert!(monitor.contains("compensating control: no weight"));
    }

    /// An underwriter whose organisation set guidelines sees the outcome on the
    /// scorecard, with the rules that refer or decline.
    #[test]
    fn the_scorecard_shows_the_guideline_outcome() {
        let mut c = card(Audience::Underwriter, scores());
        c.evaluation = Some(parse(json!({
            "social_id": "acme", "company_name": "Acme", "outcome": "refer", "guideline_version": 2,
            "evaluated_at": "2026-11-02T00:00:00Z", "score": 72.0, "grade": "C",
            "rules": [{"id": "min-score", "kind": "min_global_score", "action": "refer", "outcome": "refer",
                       "observed": "72.0", "note": null, "findings": []},
                      {"id": "no-kev", "kind": "no_kev_cve", "action": "decline", "outcome": "pass",
                       "observed": "0 CVEs", "note": null, "findings": []}]
        })));
        let html = scorecard(Audience::Underwriter, &c).into_string();
        assert!(html.contains(r#"<strong class="outcome refer">refer</strong> — 1 of 2 rules:"#), "{html}");
        assert!(html.contains("<code>min-score</code> (min_global_score): observed 72.0") && !html.contains("no-kev"));
    }

    /// A monitor sees each finding's dispute: an open one (and no second form), a
    /// rejected one with why (and a form to dispute it again).
    #[test]
    fn a_finding_shows_its_dispute_open_or_rejected() {
        let dispute = |state: &str, note: Option<&str>| {
            parse::<api::responses::DisputeOut>(json!({
                "id": 3, "social_id": "acme", "finding_id": 7, "asset": "acme.example", "risk_vector": "dmarc",
                "code": "dmarc.policy_none", "title": "t", "reason": "fixed", "explanation": "We set p=reject.",
                "state": state, "opened_at": "2026-11-02T10:00:00Z", "opened_by": "key 4",
                "decided_at": note.map(|_| "2026-11-03T10:00:00Z"), "decided_by": note.map(|_| "rescan"), "note": note
            }))
        };
        let with = |d| {
            let mut c = card(Audience::Monitor, scores());
            c.disputes = Disputes::of(vec![d]);
            scorecard(Audience::Monitor, &c).into_string()
        };
        let open = with(dispute("open", None));
        assert!(open.contains("Dispute open</strong> since 2026-11-02 (fixed): We set p=reject."), "{open}");
        assert!(!open.contains(r#"name="finding_id" value="7""#), "no second dispute while one is open");
        let rejected = with(dispute("rejected", Some("the rescan still saw p=none")));
        assert!(
            rejected.contains("Dispute rejected</strong> 2026-11-03 by rescan: the rescan still saw p=none"),
            "{rejected}"
        );
        assert!(rejected.contains("Dispute it again") && rejected.contains(r#"name="finding_id" value="7""#));
    }

    /// Where a CVE's severity shows, so does the CVSS metric it is computed from, with its
    /// version and vector: each CVE of the SBOM (v2.0 where the record has nothing newer,
    /// v3.0 here) and a vulnerabilities finding (v3.1).
    #[test]
    fn cves_show_the_cvss_version_and_vector_their_severity_is_computed_from() {
        let mut s = scores();
        s.score.as_mut().expect("a rating").vulnerabilities.findings.push(parse(fixtures::cve_finding(11)));
        let html = scorecard(Audience::Underwriter, &card(Audience::Underwriter, s)).into_string();
        let sbom = &html[html.find("Software (SBOM) with CVEs").expect("the SBOM section")..];
        for part in [
            "CVE-2016-0777</strong>",
            ">CVSS v2.0 6.5</span> <code class=\"cvss-vector\">AV:N/AC:L/Au:S/C:P/I:P/A:P</code>",
            ">CVSS v3.0 8.1</span> <code class=\"cvss-vector\">CVSS:3.0/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:H/A:H</code>",
        ] {
            assert!(sbom.contains(part), "{part} missing from the SBOM: {sbom}");
        }
        let finding = &html[html.find("data-finding-id=\"11\"").expect("the finding")..];
        assert!(
            finding.contains(
                "<dt>CVSS</dt><dd><span class=\"cvss\" title=\"The CVSS metric the severity is computed from\">CVSS v3.1 9.8</span> \
                 <code class=\"cvss-vector\">CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H</code></dd>"
            ),
            "{finding}"
        );
        // A finding without a CVE (or of a record without CVSS) has no CVSS row.
        let plain = scorecard(Audience::Underwriter, &card(Audience::Underwriter, scores())).into_string();
        assert!(!plain.contains("<dt>CVSS</dt>"));
    }

    /// A copy of a scores answer (the API's types are not `Clone`): what it writes, read.
    fn scores_like(s: &CompanyScores) -> CompanyScores {
        parse(serde_json::to_value(s).expect("a scores answer writes"))
    }

    #[test]
    fn a_long_list_links_to_its_pages() {
        let page = |n: u64| -> ApplicationsAssets { parse(fixtures::applications(n)) };
        // On the scorecard: the first page, and a link to all of them.
        let html =
            applications(&page(1), &list_link(Audience::Underwriter, "acme", AssetKind::Applications, 1)).into_string();
        assert!(html.contains(r#"href="/app/assets?kind=applications&amp;social_id=acme&amp;page=1""#), "{html}");
        // A middle page links both ways; a monitor key's pages name no company.
        let html = asset_list(Audience::Monitor, "", &AssetPage::Applications(page(2))).into_string();
        assert!(html.contains(r#"href="/app/assets?kind=applications&amp;page=1" rel="prev""#), "{html}");
        assert!(html.contains(r#"href="/app/assets?kind=applications&amp;page=3" rel="next""#), "{html}");
        assert!(html.contains("page 2 of 3") && html.contains(r#"href="/app/monitor""#));
        let last = asset_list(Audience::Underwriter, "acme", &AssetPage::Applications(page(3))).into_string();
        assert!(!last.contains("rel=\"next\"") && last.contains("rel=\"prev\""));
        // An SBOM page does not name the company: its social_id does.
        let sbom = asset_list(Audience::Underwriter, "acme", &AssetPage::Sbom(parse(fixtures::sbom()))).into_string();
        assert!(sbom.contains("← acme</a> · page 1 of 2 · 3 in all"), "{sbom}");
    }

    /// An incident's record: its texts, its free-form objects member by member, its
    /// references as links.
    #[test]
    fn an_incident_shows_its_record() {
        let html = incident(&parse(fixtures::incident())).into_string();
        assert!(html.contains("<h1>Ransomware &lt;i&gt;attack&lt;/i&gt;</h1>"), "{html}");
        assert!(html.contains("<dt>Disclosed</dt><dd>—</dd>") && html.contains("<dt>Type</dt><dd>ransomware</dd>"));
        assert!(
            html.contains("<dt>overall rating</dt><dd>major</dd>") && html.contains("<dt>family</dt><dd>LockBit</dd>")
        );
        assert!(html.contains(r#"<a href="https://news.example/acme" rel="noreferrer noopener">"#));
        assert!(html.contains("<li>court filing 12/2025</li>"));
    }

    #[test]
    fn predictions_draw_three_charts_with_their_inputs() {
        let incident = |what_if| parse(fixtures::month_prediction("probability", "expected_incidents", what_if));
        let html = predictions(
            Audience::Monitor,
            "",
            12,
            None,
            &Ok(incident(json!([]))),
            &Ok(parse(fixtures::month_prediction("breach_probability", "expected_records", json!([])))),
            &Ok(parse(fixtures::tail_risk())),
        )
        .into_string();
        assert_eq!(html.matches("<svg").count(), 3, "{html}");
        assert!(html.contains("VaR 95") && html.contains("TVaR 95") && html.contains("rate factors"));
        assert!(html.contains("$300k") && html.contains("RDP open to the internet"), "{html}");
        assert!(!html.contains("What fixing"), "no what-if without triggering findings");
        let with = json!([{"finding_id": 9, "code": "open_ports.rdp_exposed", "asset": "remote.acme.test:3389",
            "annual_event_rate": 0.06, "at_period": 0.05, "change": 0.01,
            "why": "Fixing it lowers the event rate. Net: the incident probability rises (+25.0 %)."}]);
        let html = predictions(
            Audience::Underwriter,
            "acme",
            12,
            Some("The horizon is 1 to 60 months: showing 12."),
            &Ok(incident(with)),
            &Err(Failure::new(axum::http::StatusCode::FORBIDDEN, "no")),
            &Err(Failure::new(axum::http::StatusCode::FORBIDDEN, "no")),
        )
        .into_string();
        assert!(
            html.contains("showing 12")
                && html.contains("What fixing each finding would do")
                && html.contains("open_ports.rdp_exposed")
                && html.contains("5.0 %")
        );
        // Why the figure moves, and a rise marked; an underwriter's form keeps the company.
        assert!(
            html.contains("Net: the incident probability rises") && html.contains(r#"class="num rises""#),
            "{html}"
        );
        assert!(html.contains("Predictions: acme") && html.contains(r#"name="social_id" value="acme""#), "{html}");
    }
}
