//! The views, rendered from API answers (JSON as the API sent it). A section whose
//! operation was refused shows the refusal (a key without the scope sees why) and the
//! rest of the page still renders. Everything from an answer is escaped (maud).

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

/// The twelve components in the order the spec lists them, with their names on screen.
pub const COMPONENTS: [(&str, &str); 12] = [
    ("spf", "SPF"),
    ("dkim", "DKIM"),
    ("dmarc", "DMARC"),
    ("certificate_info", "Certificate information"),
    ("certificate_conf", "Certificate configuration"),
    ("certificate_cve", "Certificate CVEs"),
    ("open_ports", "Open ports"),
    ("web_headers", "Web headers"),
    ("it_standardization", "IT standardization"),
    ("digitalization", "Digitalization"),
    ("vulnerabilities", "Vulnerabilities"),
    ("sbom", "SBOM"),
];

pub(crate) fn text(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

fn number(v: &Value) -> Option<f64> {
    v.as_f64().filter(|f| f.is_finite())
}

fn items(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// A query string from pairs, encoded.
pub(crate) fn query(pairs: &[(&str, &str)]) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        q.append_pair(k, v);
    }
    q.finish()
}

fn grade_class(grade: &str) -> &'static str {
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

fn severity_class(severity: &str) -> &'static str {
    match severity.to_ascii_lowercase().as_str() {
        "critical" => "sev sev-critical",
        "high" => "sev sev-high",
        "medium" => "sev sev-medium",
        "low" => "sev sev-low",
        _ => "sev sev-info",
    }
}

/// The date part of an RFC 3339 time.
fn day(t: &str) -> &str {
    t.get(..10).unwrap_or(t)
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
fn section(what: &str, answer: &Result<Value, Failure>, body: impl FnOnce(&Value) -> Markup) -> Markup {
    match answer {
        Ok(v) => body(v),
        Err(f) => failure(what, f),
    }
}

/// What a key can do, found by asking the API.
pub struct Home {
    pub recent: Result<Value, Failure>,
    pub own: Result<Value, Failure>,
}

pub fn home(h: &Home) -> Markup {
    let underwriter = h.recent.is_ok();
    let monitor = !matches!(&h.own, Err(f) if f.status.as_u16() == 403);
    html! {
        h1 { "Rampart scorecard" }
        @if monitor {
            section.card {
                h2 { "Your company" }
                @match &h.own {
                    Ok(info) => {
                        p { strong { (text(&info["company_name"])) } " — " (text(&info["website"])) }
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
                @if let Ok(recent) = &h.recent { (companies_table(items(&recent["data"]))) }
            }
        }
        @if !underwriter && !monitor {
            p.error { "This key has neither the underwriter nor the monitor scope: the scorecard has nothing to show it. The API's other operations are described at " a href="/docs" { "/docs" } "." }
        }
    }
}

fn search_form(q: &str) -> Markup {
    html! {
        form.search data-nav action="/app/search" role="search" {
            label for="q" { "Company name, domain or social_id" }
            input #q name="q" type="search" value=(q) required maxlength="200";
            button type="submit" { "Search" }
        }
    }
}

fn companies_table(rows: &[Value]) -> Markup {
    html! {
        @if rows.is_empty() { p { "None yet." } } @else {
            table {
                thead { tr { th { "Company" } th { "Domain" } th.num { "Score" } th { "Scanned" } } }
                tbody {
                    @for c in rows {
                        tr {
                            td { a href={"/app/company?" (query(&[("social_id", text(&c["social_id"]))]))} { (text(&c["company_name"])) } }
                            td { (text(&c["domain"])) }
                            td.num { (score_badge(&c["score"], &c["grade"])) }
                            td { (day(text(&c["scanned_at"]))) }
                        }
                    }
                }
            }
        }
    }
}

fn score_badge(score: &Value, grade: &Value) -> Markup {
    html! {
        @match number(score) {
            Some(s) => span class=(grade_class(text(grade))) { (format!("{s:.1}")) " " (text(grade)) },
            None => span.grade.grade-none { "not rated" },
        }
    }
}

/// Search results: every company the name, domain or social_id search found.
pub fn search(q: &str, found: &[(String, String, &'static str)], refused: &[Failure]) -> Markup {
    html! {
        h1 { "Search: " (q) }
        (search_form(q))
        @if found.is_empty() { p { "No company matches." } }
        ul.results {
            @for (name, sid, how) in found {
                li { a href={"/app/company?" (query(&[("social_id", sid)]))} { (name) } " " span.muted { (sid) " · by " (how) } }
            }
        }
        @for f in refused { (failure("Search", f)) }
    }
}

/// Everything the scorecard shows, each as the API answered it.
pub struct Scorecard {
    pub scores: Value,
    pub history: Result<Value, Failure>,
    pub subsidiaries: Result<Value, Failure>,
    pub applications: Result<Value, Failure>,
    pub infrastructure: Result<Value, Failure>,
    pub sbom: Result<Value, Failure>,
    pub incidents: Result<Value, Failure>,
}

pub fn scorecard(who: Audience, card: &Scorecard) -> Markup {
    let s = &card.scores;
    let sid = text(&s["social_id"]);
    let report = match who {
        Audience::Underwriter => format!("/ui/report?{}", query(&[("social_id", sid)])),
        Audience::Monitor => "/ui/report".to_owned(),
    };
    html! {
        article.scorecard data-social-id=(sid) {
            header.company {
                div {
                    h1 { (text(&s["company_name"])) }
                    p.muted { (text(&s["domain"])) " · " (text(&s["industry"])) " · social_id " (sid) }
                    @if !text(&s["description"]).is_empty() { p { (text(&s["description"])) } }
                }
                div.global {
                    @match number(&s["global_score"]) {
                        Some(g) => {
                            span class={(grade_class(text(&s["grade"]))) " big"} { (text(&s["grade"])) }
                            span.score-figure { (format!("{g:.1}")) span.muted { " / 100" } }
                        }
                        None => span.grade.grade-none.big { "—" },
                    }
                    @if let Some(at) = s["scanned_at"].as_str() { p.muted { "rated " (day(at)) } }
                    @if s["peer_benchmarks"].is_object() { (peers(&s["peer_benchmarks"])) }
                }
            }
            nav.actions aria-label="Scorecard actions" {
                button type="button" data-report=(report) data-filename={"rampart-report-" (sid) ".html"} { "Download report" }
                @if who == Audience::Monitor { a.button href="/app/predictions" { "Predictions" } }
            }
            @if let Some(m) = s["message"].as_str() { p.notice { (m) } }
            @if s["stale"].as_bool() == Some(true) {
                p.notice.stale { strong { "Stale rating: " } (text(&s["stale_reason"])) ". Last successful scan " (day(text(&s["last_successful_scan"]))) "." }
            }
            @let notes = items(&s["scan_notes"]);
            @if !notes.is_empty() {
                div.notice { p { "What limited the last scan:" } ul { @for n in notes { li { (text(n)) } } } }
            }
            section {
                h2 { "Components" }
                @if s["score"].is_object() {
                    ol.components { @for (key, name) in COMPONENTS { (component(who, key, name, &s["score"][key])) } }
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
fn peers(p: &Value) -> Markup {
    html! {
        ul.peers {
            @for (label, b) in [("Among peers", &p["sector_and_size"]), ("Overall", &p["overall"])] {
                li {
                    (label) ": "
                    @match number(&b["percentile"]) {
                        Some(v) => { "percentile rank " strong { (format!("{v:.0}")) } " among " (b["peers"].as_u64().unwrap_or(0)) " · " }
                        None => { (text(&b["note"])) " · " }
                    }
                    span.muted { (text(&b["group"])) }
                }
            }
        }
    }
}

fn component(who: Audience, key: &str, name: &str, c: &Value) -> Markup {
    let score = number(&c["score"]);
    let findings = items(&c["findings"]);
    let count = c["findings_count"].as_u64().unwrap_or(findings.len() as u64);
    html! {
        li.component id={"component-" (key)} {
            div.component-head {
                span.component-name { (name) }
                @match score {
                    Some(v) => {
                        svg.bar viewBox="0 0 100 8" role="img" aria-label={(name) " " (format!("{v:.0}")) " of 100"} preserveAspectRatio="none" {
                            rect.track x="0" y="0" width="100" height="8" {}
                            rect class={"fill " (grade_class(text(&c["grade"])))} x="0" y="0" width=(format!("{:.1}", v.clamp(0.0, 100.0))) height="8" {}
                        }
                        span class=(grade_class(text(&c["grade"]))) { (text(&c["grade"])) }
                        span.num { (format!("{v:.0}")) }
                    }
                    None => span.na { "not assessable" },
                }
                span.muted.weight { "weight " (format!("{:.1}", number(&c["weight"]).unwrap_or(0.0))) " %" }
                @if c["disputed"] == true { span.tag.disputed { "disputed" } }
            }
            @if let Some(why) = c["not_assessable"].as_str() { p.muted { (why) } }
            @if !findings.is_empty() {
                details.findings {
                    summary { (count) " finding" @if count != 1 { "s" } @if (findings.len() as u64) < count { " (the " (findings.len()) " worst shown)" } }
                    ul { @for f in findings { li { (finding(who, f)) } } }
                }
            } @else if score.is_some() {
                p.muted { "No findings (" (c["assets_checked"].as_u64().unwrap_or(0)) " assets checked)." }
            }
        }
    }
}

fn finding(who: Audience, f: &Value) -> Markup {
    let id = f["id"].as_i64().unwrap_or(0);
    let asset = text(&f["asset"]);
    let last_seen = text(&f["last_seen"]);
    html! {
        details.finding data-finding-id=(id) data-last-seen=(last_seen) {
            summary {
                span class=(severity_class(text(&f["severity"]))) { (text(&f["severity"])) }
                " " (text(&f["title"])) " " span.muted { "on " (asset) }
                @if f["disputed"] == true { " " span.tag.disputed { "disputed" } }
                @if f["compensating_control"] == true { " " span.tag { "compensating control: no weight" } }
            }
            dl {
                dt { "Check" } dd { code { (text(&f["code"])) } }
                @if let Some(cve) = f["cve"].as_str() { dt { "CVE" } dd { (cve) } }
                @if let Some(component) = f["component"].as_str() { dt { "Software" } dd { (component) } }
                dt { "Evidence" } dd { pre { (text(&f["evidence"])) } }
                dt { "Remediation" } dd { (text(&f["remediation"])) }
                @let refs = items(&f["references"]);
                @if !refs.is_empty() {
                    dt { "References" }
                    dd { ul { @for r in refs { li { (link(text(r))) } } } }
                }
                dt { "First seen" } dd { (text(&f["first_seen"])) }
                dt { "Last seen" } dd { (last_seen) }
            }
            @if who == Audience::Monitor {
                form.rescan data-action="/ui/monitor/rescan" data-then="watch" data-finding=(id) data-last-seen=(last_seen) {
                    input type="hidden" name="subdomain" value=(asset_host(asset));
                    input type="hidden" name="risk_vector_id" value=(text(&f["risk_vector"]));
                    button type="submit" { "Rescan " (asset_host(asset)) " for " (text(&f["risk_vector"])) }
                }
                @if f["disputed"] != true {
                    details.dispute {
                        summary { "Dispute this finding" }
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
pub fn history(v: &Value, open: bool) -> Markup {
    let mut points: Vec<(f64, f64, &Value)> = items(&v["data"])
        .iter()
        .filter_map(|r| {
            let at = model::timefmt::parse_datetime(text(&r["scanned_at"]))?;
            Some((at.unix_timestamp() as f64, number(&r["score"])?, r))
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
                            td { (text(&r["scanned_at"])) }
                            td.num { (format!("{score:.1}")) }
                            td { (text(&r["grade"])) }
                            td { (r["reason"].as_str().unwrap_or("imported")) }
                            td { (text(&r["methodology"])) }
                        }
                    }
                }
            }
        }
    }
}

fn subsidiaries(who: Audience, parent: &Value, v: &Value) -> Markup {
    // underwriter-getcompanysubscores: subsidiaries_scores; monitor-listsubsidiaries:
    // subsidiaries_list.
    let list = if v["subsidiaries_scores"].is_array() {
        items(&v["subsidiaries_scores"])
    } else {
        items(&v["subsidiaries_list"])
    };
    html! {
        ul.tree {
            li {
                span { (text(&parent["company_name"])) " " (score_badge(&parent["global_score"], &parent["grade"])) }
                @if list.is_empty() { p.muted { "No subsidiaries." } } @else {
                    ul {
                        @for c in list {
                            li {
                                @if who == Audience::Underwriter {
                                    a href={"/app/company?" (query(&[("social_id", text(&c["social_id"]))]))} { (text(&c["company_name"])) }
                                } @else { (text(&c["company_name"])) }
                                " " span.muted { (text(&c["social_id"])) }
                                " " (score_badge(&c["score"], &c["grade"]))
                                @if who == Audience::Monitor {
                                    form.inline data-action="/ui/monitor/subsidiary/remove" data-then="reload" {
                                        input type="hidden" name="subsidiary_id" value=(text(&c["social_id"]));
                                        button type="submit" aria-label={"Remove " (text(&c["company_name"]))} { "Remove" }
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
                    input type="hidden" name="parent_social_id" value=(text(&parent["social_id"]));
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

fn paging_note(v: &Value, shown: usize, all: &str) -> Markup {
    let total = v["pagination"]["total_items"].as_u64().unwrap_or(shown as u64);
    html! { @if total > shown as u64 { p { "The first " (shown) " of " (total) ". " a href=(all) { "All " (total) " →" } } } }
}

/// One page of a list, with the links to the others.
pub fn asset_list(who: Audience, kind: AssetKind, social_id: &str, v: &Value) -> Markup {
    let p = &v["pagination"];
    let (current, pages) = (p["current_page"].as_u64().unwrap_or(1), p["total_pages"].as_u64().unwrap_or(1));
    let name = [v["company_name"].as_str().unwrap_or(""), social_id]
        .into_iter()
        .find(|n| !n.is_empty())
        .unwrap_or("the scorecard");
    let back = match who {
        Audience::Underwriter => format!("/app/company?{}", query(&[("social_id", social_id)])),
        Audience::Monitor => "/app/monitor".to_owned(),
    };
    let none = String::new();
    html! {
        h1 { (kind.title()) }
        p { a href=(back) { "← " (name) } " · page " (current) " of " (pages.max(1)) " · " (p["total_items"].as_u64().unwrap_or(0)) " in all" }
        @match kind {
            AssetKind::Applications => (applications(v, &none)),
            AssetKind::Infrastructure => (infrastructure(v, &none)),
            AssetKind::Sbom => (sbom(v, &none)),
        }
        nav.pager aria-label="Pages" {
            @if current > 1 { a href=(list_link(who, social_id, kind, current - 1)) rel="prev" { "← Previous" } }
            @if current < pages { a href=(list_link(who, social_id, kind, current + 1)) rel="next" { "Next →" } }
        }
    }
}

fn applications(v: &Value, all: &str) -> Markup {
    let rows = items(&v["applications"]);
    html! {
        @if rows.is_empty() { p { "No applications detected." } } @else {
            div.scroll { table {
                thead { tr { th { "Application" } th { "Version" } th { "Host" } th { "Categories" } th { "Why" } } }
                tbody { @for a in rows { tr {
                    td { (text(&a["name"])) }
                    td { (a["version"].as_str().unwrap_or("—")) }
                    td { (text(&a["host"])) }
                    td { (items(&a["categories"]).iter().map(text).collect::<Vec<_>>().join(", ")) }
                    td { (text(&a["evidence"])) @if let Some(c) = a["confidence"].as_u64() { span.muted { " (confidence " (c) " %)" } } }
                } } }
            } }
            @if !all.is_empty() { (paging_note(v, rows.len(), all)) }
        }
    }
}

fn infrastructure(v: &Value, all: &str) -> Markup {
    let rows = items(&v["network_endpoints"]);
    html! {
        @if rows.is_empty() { p { "No network endpoints found." } } @else {
            div.scroll { table {
                thead { tr { th { "Endpoint" } th { "Host" } th { "Service" } th { "Attributed because" } } }
                tbody { @for e in rows { tr {
                    td { code { (text(&e["ip"])) ":" (e["port"].as_u64().unwrap_or(0)) "/" (text(&e["protocol"])) } }
                    td { (e["host"].as_str().unwrap_or("—")) }
                    td { (e["service"].as_str().unwrap_or("")) " " (e["product"].as_str().unwrap_or("")) " " (e["version"].as_str().unwrap_or("")) }
                    td { strong { (text(&e["attribution"]["source"])) } ": " (text(&e["attribution"]["evidence"])) }
                } } }
            } }
            @if !all.is_empty() { (paging_note(v, rows.len(), all)) }
        }
    }
}

fn sbom(v: &Value, all: &str) -> Markup {
    let rows = items(&v["data"]);
    html! {
        @if let Some(m) = v["message"].as_str() { p.muted { (m) } }
        @if rows.is_empty() { p { "No software components with CVEs." } } @else {
            div.scroll { table {
                thead { tr { th { "Component" } th { "Hosts" } th { "End of life" } th { "CVEs (CVSS · KEV · EPSS)" } } }
                tbody { @for c in rows { tr {
                    td { (text(&c["name"])) " " (c["version"].as_str().unwrap_or("")) }
                    td { (items(&c["hosts"]).iter().map(text).collect::<Vec<_>>().join(", ")) }
                    td { @match c["end_of_life"].as_bool() { Some(true) => span.sev.sev-high { "yes" }, Some(false) => "no", None => "unknown" }
                         @if let Some(l) = c["latest_version"].as_str() { span.muted { " (latest " (l) ")" } } }
                    td { ul.cves { @for cve in items(&c["cves"]) { li {
                        strong { (text(&cve["id"])) }
                        @if let Some(s) = number(&cve["cvss"]) { " · " (format!("{s:.1}")) }
                        @if cve["kev"].as_bool() == Some(true) { " · " span.sev.sev-critical title="In CISA's Known Exploited Vulnerabilities catalogue" { "KEV" } }
                        @if let Some(e) = number(&cve["epss"]) { " · EPSS " (chart::percent(e)) }
                    } } } }
                } } }
            } }
            @if !all.is_empty() { (paging_note(v, rows.len(), all)) }
        }
    }
}

fn incidents(who: Audience, v: &Value) -> Markup {
    let rows = items(&v["incidents"]);
    html! {
        @if rows.is_empty() { p { "No public incidents on record." } } @else {
            ul.incidents { @for i in rows { li {
                @if who == Audience::Underwriter {
                    a href={"/app/incident?" (query(&[("incident_id", text(&i["incident_id"]))]))} { (text(&i["title"])) }
                } @else { strong { (text(&i["title"])) } }
                br;
                span.muted { (i["date_detected"].as_str().unwrap_or("date unknown")) " · " (text(&i["type"])) " · " (text(&i["attack_vector"])) " · " (text(&i["threat_actor"])) " · " (text(&i["investigation_status"])) }
            } } }
        }
    }
}

/// One incident in full.
pub fn incident(v: &Value) -> Markup {
    let d = &v["data"];
    html! {
        h1 { (text(&d["title"])) }
        p.muted { "Incident " (text(&v["incident_id"])) }
        p { (text(&d["description"])) }
        dl.wide {
            @for (label, key) in [("Detected", "date_detected"), ("Disclosed", "date_publicly_disclosed"), ("Type", "type"), ("Attack vector", "attack_vector"), ("Threat actor", "threat_actor"), ("Motivation", "motivation"), ("Investigation", "investigation_status"), ("Stakeholder advisories", "stakeholder_advisories"), ("Customer advisories", "customer_advisories")] {
                dt { (label) } dd { (d[key].as_str().unwrap_or("—")) }
            }
            @for (label, key) in [("Impact", "impact"), ("Affected", "affected_entities"), ("Response", "response"), ("Data breach", "data_breach"), ("Ransomware", "ransomware"), ("References", "references")] {
                dt { (label) } dd { (value(&d[key], 0)) }
            }
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

/// The three predictions of the key's company, with their inputs.
pub fn predictions(
    period: u32,
    notice: Option<&str>,
    incident: &Result<Value, Failure>,
    loss: &Result<Value, Failure>,
    tail: &Result<Value, Failure>,
) -> Markup {
    html! {
        article.predictions {
        h1 { "Predictions" }
        @if let Some(n) = notice { p.notice { (n) } }
        form.inline data-nav action="/app/predictions" {
            label for="period" { "Horizon in months" }
            input #period name="period" type="number" min="1" max="60" value=(period);
            button type="submit" { "Show" }
        }
        section {
            h2 { "Incident probability by month" }
            (section("Incident prediction", incident, |v| by_month(v, &MonthFigures {
                probability: ("probability", "Probability", "probability of an incident"),
                chart: "Probability of at least one incident within each horizon (months)",
                count: ("expected_incidents", "Expected incidents", 3),
            })))
        }
        section {
            h2 { "Loss exceedance" }
            (section("Tail risk estimation", tail, |v| {
                let t = &v["data"][0];
                let curve: Vec<(f64, f64)> = items(&t["exceedance"]).iter().filter_map(|p| Some((number(&p["threshold_usd"])?, number(&p["probability"])?))).collect();
                let money = |k: &str| number(&t[k]).unwrap_or(f64::NAN);
                html! {
                    @if let Some(msg) = v["message"].as_str() { p.notice { (msg) } }
                    (chart::exceedance("Probability that losses over the horizon exceed each amount", &curve, &[("VaR 95", money("var95_usd")), ("VaR 99", money("var99_usd")), ("TVaR 95", money("tvar95_usd"))]))
                    dl.figures {
                        dt { "Probability of any loss" } dd { (chart::percent(money("probability_of_loss"))) }
                        dt { "Expected loss" } dd { (chart::usd(money("expected_loss_usd"))) }
                        dt { "VaR 95 %" } dd { (chart::usd(money("var95_usd"))) }
                        dt { "VaR 99 %" } dd { (chart::usd(money("var99_usd"))) }
                        dt { "TVaR 95 %" } dd { (chart::usd(money("tvar95_usd"))) }
                        dt { "Loss per event, median / 95th percentile" } dd { (chart::usd(money("loss_given_event_p50_usd"))) " / " (chart::usd(money("loss_given_event_p95_usd"))) }
                        dt { "Simulated paths" } dd { (t["paths"].as_u64().unwrap_or(0)) " (seed " (t["seed"].as_u64().unwrap_or(0)) ")" }
                    }
                    (what_if(v, money("expected_loss_usd"), "expected loss", chart::usd))
                    @if t.is_object() { (inputs(t)) }
                }
            }))
        }
        section {
            h2 { "Data-loss estimate" }
            (section("Data-loss prediction", loss, |v| by_month(v, &MonthFigures {
                probability: ("breach_probability", "Breach probability", "probability of a breach"),
                chart: "Probability of at least one data breach within each horizon (months)",
                count: ("expected_records", "Expected records lost", 0),
            })))
        }
        }
    }
}

/// What a by-month prediction shows: its probability (field, column, what-if label), its
/// chart's title, and its expected count (field, column, decimals).
struct MonthFigures {
    probability: (&'static str, &'static str, &'static str),
    chart: &'static str,
    count: (&'static str, &'static str, usize),
}

/// A prediction with one item per month (incidents, data loss): bars of the probability,
/// the what-if of each finding, the table, the inputs.
fn by_month(v: &Value, f: &MonthFigures) -> Markup {
    let rows = items(&v["data"]);
    let (key, column, what) = f.probability;
    let (count_key, count_column, decimals) = f.count;
    let bars: Vec<(String, f64)> =
        rows.iter().filter_map(|m| Some((m["month"].as_u64()?.to_string(), number(&m[key])?))).collect();
    let top = bars.iter().map(|b| b.1).fold(0.0_f64, f64::max).max(0.01);
    let now = rows.last().and_then(|m| number(&m[key])).unwrap_or(f64::NAN);
    html! {
        @if let Some(msg) = v["message"].as_str() { p.notice { (msg) } }
        (chart::bars(f.chart, &bars, top, chart::percent))
        (what_if(v, now, what, chart::percent))
        table {
            thead { tr { th { "Within months" } th.num { (column) } th.num { (count_column) } } }
            tbody { @for m in rows { tr {
                td { (m["month"].as_u64().unwrap_or(0)) }
                td.num { (chart::percent(number(&m[key]).unwrap_or(f64::NAN))) }
                td.num { (format!("{:.*}", decimals, number(&m[count_key]).unwrap_or(0.0))) }
            } } }
        }
        @if let Some(first) = rows.first() { (inputs(first)) }
    }
}

/// The prediction with each triggering finding fixed (the answer's `what_if`).
fn what_if(v: &Value, now: f64, label: &str, fmt: impl Fn(f64) -> String) -> Markup {
    let rows = items(&v["what_if"]);
    html! {
        @if !rows.is_empty() {
            table.what-if {
                caption { "What fixing each finding would do (" (label) " now: " (fmt(now)) ")" }
                thead { tr { th { "Finding" } th { "Asset" } th.num { "With it fixed" } } }
                tbody { @for w in rows { tr {
                    td { code { (text(&w["code"])) } }
                    td { (text(&w["asset"])) }
                    td.num { (fmt(number(&w["at_period"]).unwrap_or(f64::NAN))) }
                } } }
            }
        }
    }
}

/// What a prediction was computed from, and its method.
fn inputs(item: &Value) -> Markup {
    html! {
        details.inputs {
            summary { "Inputs and method" }
            (value(&item["inputs"], 0))
            @if let Some(m) = item["units"].as_str() { p.muted { "Units: " (m) } }
            @if let Some(m) = item["methodology"].as_str() { p.muted { "Method: " (m) } }
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

    proptest::proptest! {
        /// Whatever an answer holds, every view renders (no panic) and escapes it.
        #[test]
        fn any_answer_renders(v in any_json(), w in any_json()) {
            let card = Scorecard {
                scores: v.clone(),
                history: Ok(w.clone()),
                subsidiaries: Ok(w.clone()),
                applications: Ok(v.clone()),
                infrastructure: Ok(w.clone()),
                sbom: Ok(v.clone()),
                incidents: Ok(w.clone()),
            };
            for who in [Audience::Underwriter, Audience::Monitor] {
                let html = scorecard(who, &card).into_string();
                proptest::prop_assert!(!html.contains("<script"));
            }
            let _ = predictions(12, None, &Ok(v.clone()), &Ok(w.clone()), &Ok(v.clone())).into_string();
            let _ = incident(&v).into_string();
            let _ = asset_list(Audience::Underwriter, AssetKind::Sbom, "x", &w).into_string();
            let _ = crate::report::render(&v, &Ok(w), "now").into_string();
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

    fn scores() -> Value {
        json!({
            "social_id": "acme", "company_name": "Acme <b>Corp</b>", "domain": "acme.test", "industry": "Retail",
            "description": "", "subsidiaries_number": 0, "global_score": 71.5, "grade": "C",
            "scanned_at": "2026-11-01T10:00:00Z",
            "score": {
                "dmarc": {"score": 40.0, "grade": "E", "weight": 9.0, "assets_checked": 1, "findings_count": 1, "methodology": "1",
                    "findings": [{"id": 7, "risk_vector": "dmarc", "asset": "acme.test", "severity": "high", "code": "DMARC_NONE",
                        "title": "DMARC policy is none", "evidence": "v=DMARC1; p=none", "remediation": "Set p=reject",
                        "references": ["https://www.rfc-editor.org/rfc/rfc7489", "RFC 7489"], "cve": null, "component": null,
                        "first_seen": "2026-10-01T00:00:00Z", "last_seen": "2026-11-01T10:00:00Z"}]},
                "dkim": {"score": null, "grade": null, "weight": 0.0, "assets_checked": 0, "findings_count": 0, "methodology": "1",
                    "not_assessable": "no DKIM selector found", "findings": []}
            }
        })
    }

    fn card(scores: Value) -> Scorecard {
        let refused = || Err(Failure::new(axum::http::StatusCode::FORBIDDEN, "not allowed"));
        Scorecard {
            scores,
            history: Ok(
                json!({"data": [{"scanned_at": "2026-11-01T10:00:00Z", "score": 71.5, "grade": "C", "methodology": "1", "components": {}, "reason": "scan"}]}),
            ),
            subsidiaries: Ok(
                json!({"subsidiaries_scores": [{"social_id": "acme-sub", "company_name": "Acme Sub", "score": 90.0, "grade": "A"}]}),
            ),
            applications: refused(),
            infrastructure: Ok(json!({"network_endpoints": [], "pagination": {"total_items": 0}})),
            sbom: Ok(
                json!({"data": [{"name": "openssh", "version": "6.6", "hosts": ["ssh.acme.test"], "cves": [{"id": "CVE-2016-0777", "cvss": 6.5, "kev": true, "epss": 0.5}]}]}),
            ),
            incidents: Ok(json!({"incidents": [{"incident_id": "INC-1", "title": "Breach", "type": "breach"}]})),
        }
    }

    /// A stale rating says so, with why and when the last scan succeeded (docs/API.md,
    /// `stale` on the score answers).
    #[test]
    fn a_stale_rating_is_marked_on_the_scorecard() {
        let fresh = scorecard(Audience::Underwriter, &card(scores())).into_string();
        assert!(!fresh.contains("Stale rating"));
        let mut s = scores();
        s["stale"] = json!(true);
        s["stale_reason"] = json!("the last scan failed at 2026-11-03T10:00:00Z: acme.test: REFUSED");
        s["last_successful_scan"] = json!("2026-11-01T10:00:00Z");
        let html = scorecard(Audience::Underwriter, &card(s)).into_string();
        assert!(html.contains("Stale rating"), "{html}");
        assert!(html.contains("the last scan failed at 2026-11-03T10:00:00Z: acme.test: REFUSED"));
    }

    #[test]
    fn an_underwriter_scorecard_shows_every_part_and_escapes_the_answers() {
        let html = scorecard(Audience::Underwriter, &card(scores())).into_string();
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
        // Twelve components, even those the answer lacks.
        assert_eq!(html.matches("class=\"component\"").count(), 12);
        // An underwriter cannot rescan.
        assert!(!html.contains("/ui/monitor/rescan"));
        assert!(
            html.contains(r#"href="https://www.rfc-editor.org/rfc/rfc7489""#) && html.contains("<li>RFC 7489</li>")
        );
    }

    #[test]
    fn a_monitor_scorecard_offers_a_rescan_of_each_finding_and_subsidiary_forms() {
        let html = scorecard(Audience::Monitor, &card(scores())).into_string();
        assert!(html.contains(r#"data-action="/ui/monitor/rescan""#));
        assert!(html.contains(r#"name="subdomain" value="acme.test""#));
        assert!(html.contains(r#"name="risk_vector_id" value="dmarc""#));
        assert!(html.contains(r#"data-finding-id="7""#));
        assert!(html.contains("/ui/monitor/subsidiary/remove") && html.contains("Add a subsidiary"));
        assert!(html.contains("/app/predictions"));
    }

    #[test]
    fn disputes_and_peers_are_shown_and_a_monitor_may_dispute() {
        let mut v = scores();
        v["score"]["dmarc"]["disputed"] = json!(true);
        v["score"]["dmarc"]["findings"][0]["disputed"] = json!(true);
        v["peer_benchmarks"] = json!({
            "sector_and_size": {"group": "NAICS 44-45 Retail Trade, 50-249 employees", "peers": 14, "percentile": 71.4},
            "overall": {"group": "all rated companies", "peers": 3, "percentile": null, "note": "fewer than 10 rated peers"}
        });
        let html = scorecard(Audience::Underwriter, &card(v.clone())).into_string();
        assert_eq!(html.matches("tag disputed").count(), 2, "the component and its finding");
        assert!(html.contains("percentile rank <strong>71</strong> among 14"), "{html}");
        assert!(html.contains("NAICS 44-45 Retail Trade") && html.contains("fewer than 10 rated peers"));
        assert!(!html.contains("/ui/monitor/dispute"), "an underwriter cannot dispute");
        // A disputed finding is not offered a second dispute; an undisputed one is.
        let monitor = scorecard(Audience::Monitor, &card(v)).into_string();
        assert!(!monitor.contains("/ui/monitor/dispute"));
        let mut w = scores();
        w["score"]["dmarc"]["findings"][0]["compensating_control"] = json!(true);
        let monitor = scorecard(Audience::Monitor, &card(w)).into_string();
        assert!(
            monitor.contains(r#"data-action="/ui/monitor/dispute""#)
                && monitor.contains(r#"name="finding_id" value="7""#)
        );
        assert!(monitor.contains("compensating control: no weight"));
    }

    #[test]
    fn a_long_list_links_to_its_pages() {
        let page = |n: u64| {
            json!({"company_name": "Acme", "applications": [{"name": "nginx", "host": "a.test"}],
            "pagination": {"current_page": n, "page_size": 1, "total_pages": 3, "total_items": 3}})
        };
        // On the scorecard: the first page, and a link to all of them.
        let html =
            applications(&page(1), &list_link(Audience::Underwriter, "acme", AssetKind::Applications, 1)).into_string();
        assert!(html.contains(r#"href="/app/assets?kind=applications&amp;social_id=acme&amp;page=1""#), "{html}");
        // A middle page links both ways; a monitor key's pages name no company.
        let html = asset_list(Audience::Monitor, AssetKind::Applications, "", &page(2)).into_string();
        assert!(html.contains(r#"href="/app/assets?kind=applications&amp;page=1" rel="prev""#), "{html}");
        assert!(html.contains(r#"href="/app/assets?kind=applications&amp;page=3" rel="next""#), "{html}");
        assert!(html.contains("page 2 of 3") && html.contains(r#"href="/app/monitor""#));
        let last = asset_list(Audience::Underwriter, AssetKind::Applications, "acme", &page(3)).into_string();
        assert!(!last.contains("rel=\"next\"") && last.contains("rel=\"prev\""));
    }

    #[test]
    fn predictions_draw_three_charts_with_their_inputs() {
        let item = |k: &str| json!({"month": 1, k: 0.1, "expected_incidents": 0.1, "expected_records": 1000.0, "inputs": {"score": 71.5, "rate_factors": {"size": 1.2}}, "methodology": "docs/PREDICTIONS.md"});
        let tail = json!({"data": [{"exceedance": [{"threshold_usd": 10000.0, "probability": 0.2}, {"threshold_usd": 1e6, "probability": 0.01}],
            "var95_usd": 50000.0, "var99_usd": 400000.0, "tvar95_usd": 300000.0, "probability_of_loss": 0.2, "inputs": {"score": 71.5}}]});
        let html = predictions(
            12,
            None,
            &Ok(json!({"data": [item("probability")]})),
            &Ok(json!({"data": [item("breach_probability")]})),
            &Ok(tail),
        )
        .into_string();
        assert_eq!(html.matches("<svg").count(), 3, "{html}");
        assert!(html.contains("VaR 95") && html.contains("TVaR 95") && html.contains("rate factors"));
        assert!(html.contains("$300k"));
        assert!(!html.contains("What fixing"), "no what-if without triggering findings");
        let with = json!({"data": [item("probability")], "what_if": [{"finding_id": 9, "code": "open_ports.rdp_exposed", "asset": "remote.acme.test:3389", "at_period": 0.05}]});
        let html = predictions(
            12,
            Some("The horizon is 1 to 60 months: showing 12."),
            &Ok(with),
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
    }
}
