//! The underwriter's views of an organisation's portfolios: the portfolio table (sorted,
//! filtered, paged, downloaded as CSV), its summary (grades, tiers, movers, KEV), adding
//! companies by their domains with each row's status followed until it lands, vendor
//! records edited in place, the findings tables (a company's, a portfolio's) and the
//! compare view. Each is made from the Portfolio group's answers (docs/API.md
//! "Portfolios"), called in-process with the browser's key like every other view.

use std::collections::HashMap;

use api::responses::portfolio::{
    AddCompaniesOut, AddedRowOut, FindingsOut, MemberOut, MoverOut, PortfolioCompaniesOut, PortfolioCompanyOut,
    PortfolioOut, PortfolioSummaryOut, PortfoliosOut, SeverityCounts,
};
use api::responses::{CompanyScores, ScoreHistory};
use axum::body::Bytes;
use axum::extract::{Query, RawQuery};
use axum::http::{Method, StatusCode};
use axum::response::Response;
use maud::{Markup, html};
use serde::Serialize;

use crate::pages::{
    self, Audience, COMPONENTS, failure, finite, grade_class, or_empty, query, score_badge, severity_class,
};
use crate::{Api, Caller, Failure, Params, answered, chart, form, fragment, param, refused};

/// The parameters of the portfolio table that a link keeps (its filters and its order).
const LIST_KEPT: [&str; 6] = ["sort", "grade", "tier", "tag", "q", "status"];

/// The parameters of a findings table that a link keeps.
const FINDINGS_KEPT: [&str; 6] = ["severity", "risk_vector", "code", "host", "status", "disputed"];

/// The columns of the portfolio table that sort: their key in `sort` and their heading.
const SORTED_BY: [(&str, &str); 11] = [
    ("name", "Company"),
    ("score", "Score"),
    ("change_7d", "7 d"),
    ("change_30d", "30 d"),
    ("change_90d", "90 d"),
    ("tier", "Tier · tags"),
    ("industry", "Industry"),
    ("findings", "Open findings"),
    ("last_scan", "Last scan"),
    ("depth", "Depth"),
    ("stale", "Stale"),
];

/// Companies a compare view puts side by side.
const COMPARED: std::ops::RangeInclusive<usize> = 2..=4;

/// Rows of an add-companies request the page follows until they land (the API's
/// `social_id` filter names at most this many).
const FOLLOWED: usize = api::MAX_NAMED;

const GRADES: [&str; 6] = ["A", "B", "C", "D", "E", "F"];

/// The given parameters among `names`, in that order.
pub(crate) fn kept<'a>(q: &'a HashMap<String, String>, names: &[&'static str]) -> Vec<(&'static str, &'a str)> {
    names.iter().filter_map(|n| Some((*n, param(q, n))).filter(|(_, v)| !v.is_empty())).collect()
}

/// A link to `view` with `base` and `kept`, `set` replacing (or, empty, removing) one.
pub(crate) fn link(view: &str, base: &[(&str, &str)], kept: &[(&str, &str)], set: (&str, &str)) -> String {
    let mut pairs: Vec<(&str, &str)> = base.to_vec();
    pairs.extend(kept.iter().filter(|(k, _)| *k != set.0 && *k != "page"));
    if !set.1.is_empty() {
        pairs.push(set);
    }
    format!("{view}?{}", query(&pairs))
}

// --- The organisation's portfolios (the underwriter's home) ----------------------------

/// The portfolios section of the home page: each with its size, and a form to make one.
pub(crate) fn portfolios(list: &PortfoliosOut) -> Markup {
    html! {
        section.card #portfolios {
            h2 { "Your portfolios" }
            @if list.portfolios.is_empty() { p { "No portfolio yet: make one, then add companies to it by their domains." } } @else {
                table {
                    thead { tr { th { "Portfolio" } th.num { "Companies" } th { "Changed" } } }
                    tbody {
                        @for p in &list.portfolios { (portfolio_row(p)) }
                    }
                }
            }
            form.search data-action="/ui/portfolio/create" data-then="reload" {
                label for="new-portfolio" { "New portfolio" }
                input #new-portfolio name="name" required maxlength="100" placeholder="Cyber book 2027";
                button type="submit" { "Create" }
            }
        }
    }
}

fn portfolio_row(p: &PortfolioOut) -> Markup {
    let id = p.portfolio_id.to_string();
    html! {
        tr {
            td { a href={"/app/portfolio?" (query(&[("portfolio_id", &id)]))} { (p.name) } }
            td.num { (p.companies) }
            td { (pages::when(&p.updated_at)) }
        }
    }
}

pub(crate) async fn create(Caller(api): Caller, body: Bytes) -> Response {
    let f = form(&body);
    #[derive(Serialize)]
    struct New<'a> {
        name: &'a str,
    }
    let made = api.post::<PortfolioOut>("/portfolio-create", &New { name: param(&f, "name") }).await;
    answered(made.map(|p| format!("Portfolio “{}” created.", p.name)))
}

// --- One portfolio ---------------------------------------------------------------------

pub(crate) async fn portfolio(Caller(api): Caller, Query(q): Params) -> Response {
    let id = param(&q, "portfolio_id");
    let kept = kept(&q, &LIST_KEPT);
    let mut at = vec![("portfolio_id", id)];
    at.extend(kept.iter().copied());
    let page = param(&q, "page");
    if !page.is_empty() {
        at.push(("page", page));
    }
    let of = [("portfolio_id", id)];
    let (summary, list) = tokio::join!(
        api.get::<PortfolioSummaryOut>("/portfolio-getsummary", &of),
        api.get::<PortfolioCompaniesOut>("/portfolio-getcompanies", &at),
    );
    match summary {
        Ok(s) => fragment(StatusCode::OK, portfolio_view(&s, &list, &kept)),
        Err(f) => refused("Portfolio", &f),
    }
}

fn portfolio_view(
    s: &PortfolioSummaryOut,
    list: &Result<PortfolioCompaniesOut, Failure>,
    kept: &[(&str, &str)],
) -> Markup {
    let id = s.portfolio_id.to_string();
    let base = [("portfolio_id", id.as_str())];
    let csv = link("/ui/portfolio/csv", &base, kept, ("format", "csv"));
    let grades: Vec<(String, f64)> =
        GRADES.iter().map(|g| ((*g).to_owned(), s.grades.get(*g).copied().unwrap_or(0) as f64)).collect();
    // The axis in whole companies: its top a multiple of four (its ticks are quarters).
    let most = (grades.iter().map(|(_, n)| *n).fold(4.0, f64::max) / 4.0).ceil() * 4.0;
    html! {
        article.portfolio data-portfolio-id=(id) {
            h1 { (s.name) }
            p.muted {
                (s.companies) " companies · " (s.rated) " rated"
                @if let Some(avg) = finite(s.average_score) { " · average score " (format!("{avg:.1}")) }
                @if s.stale > 0 { " · " (s.stale) " stale" }
            }
            nav.actions aria-label="Portfolio actions" {
                a.button href="/app/" { "All portfolios" }
                a.button href={"/app/findings?" (query(&base))} { "Findings" }
                button type="button" data-report=(csv) data-filename={"portfolio-" (id) ".csv"} { "Download CSV" }
            }
            div.columns {
                section {
                    h2 { "Grades" }
                    (chart::bars("Companies by grade", &grades, most, |y| format!("{y:.0}")))
                    p.chips {
                        "Tier: "
                        @for t in &s.tiers {
                            @let value = t.tier.map_or("none".to_owned(), |n| n.to_string());
                            a.chip href=(link("/app/portfolio", &base, kept, ("tier", &value))) {
                                @match t.tier { Some(n) => { "Tier " (n) }, None => "No tier" } " · " (t.companies)
                            }
                        }
                    }
                }
                section {
                    h2 { "Movers over 30 days" }
                    (movers("Down", &s.movers_down))
                    (movers("Up", &s.movers_up))
                    @if !s.kev_companies.is_empty() {
                        h3 { "With a KEV-listed CVE" }
                        ul.kev { @for k in &s.kev_companies {
                            li { a href=(company_link(&k.social_id)) { (k.name) } " · " (k.kev_findings) " finding" @if k.kev_findings != 1 { "s" } }
                        } }
                    }
                }
            }
            (add_form(&id, s.companies == 0))
            section #companies {
                h2 { "Companies" }
                (filters(&id, kept))
                @match list {
                    Ok(l) => (companies_table(l, kept)),
                    Err(f) => (failure("Companies", f)),
                }
            }
        }
    }
}

pub(crate) fn company_link(social_id: &str) -> String {
    format!("/app/company?{}", query(&[("social_id", social_id)]))
}

fn change(v: Option<f64>) -> Markup {
    html! {
        @match finite(v) {
            Some(c) if c > 0.0 => span.up { "+" (format!("{c:.1}")) },
            Some(c) if c < 0.0 => span.down { (format!("{c:.1}")) },
            Some(_) => span.muted { "0" },
            None => span.muted { "—" },
        }
    }
}

fn movers(label: &str, list: &[MoverOut]) -> Markup {
    html! {
        h3 { (label) }
        @if list.is_empty() { p.muted { "None." } } @else {
            ol.movers { @for m in list {
                li { a href=(company_link(&m.social_id)) { (m.name) } " " (score_badge(Some(m.score), Some(&m.grade))) " " (change(Some(m.change_30d))) }
            } }
        }
    }
}

/// The filters of the table, and a chip for each one set (a click removes it).
fn filters(id: &str, kept: &[(&str, &str)]) -> Markup {
    let get = |k: &str| kept.iter().find(|(n, _)| *n == k).map_or("", |(_, v)| *v);
    let base = [("portfolio_id", id)];
    html! {
        form.filters data-nav action="/app/portfolio" role="search" aria-label="Filter the companies" {
            input type="hidden" name="portfolio_id" value=(id);
            @if !get("sort").is_empty() { input type="hidden" name="sort" value=(get("sort")); }
            label { "Text " input name="q" type="search" value=(get("q")) maxlength="100" placeholder="name, domain, id"; }
            label { "Grade "
                select name="grade" {
                    option value="" { "any" }
                    @for g in GRADES { option value=(g) selected[get("grade") == g] { (g) } }
                }
            }
            label { "Tier "
                select name="tier" {
                    option value="" { "any" }
                    @for t in ["1", "2", "3", "4", "none"] { option value=(t) selected[get("tier") == t] { (t) } }
                }
            }
            label { "Tag " input name="tag" value=(get("tag")) maxlength="40" size="10"; }
            label { "Status "
                select name="status" {
                    option value="" { "any" }
                    @for st in ["rated", "queued", "pending", "refused"] { option value=(st) selected[get("status") == st] { (st) } }
                }
            }
            button type="submit" { "Filter" }
        }
        @let set: Vec<&(&str, &str)> = kept.iter().filter(|(k, _)| *k != "sort").collect();
        @if !set.is_empty() {
            p.chips {
                @for (k, v) in set {
                    a.chip.active href=(link("/app/portfolio", &base, kept, (k, ""))) aria-label={"Remove the filter " (k) " " (v)} { (k) ": " (v) " ×" }
                }
            }
        }
    }
}

fn companies_table(l: &PortfolioCompaniesOut, kept: &[(&str, &str)]) -> Markup {
    let id = l.portfolio_id.to_string();
    let base = [("portfolio_id", id.as_str())];
    let sort = kept.iter().find(|(k, _)| *k == "sort").map_or("", |(_, v)| *v);
    let p = &l.pagination;
    let here: Vec<(&str, &str)> = kept.to_vec();
    html! {
        p.muted { (p.total_items) " compan" @if p.total_items == 1 { "y" } @else { "ies" } " · page " (p.current_page) " of " (p.total_pages.max(1)) }
        form #compare data-nav action="/app/compare" {
            button type="submit" { "Compare the ticked companies (2–4)" }
        }
        div.scroll { table.portfolio-table {
            thead { tr {
                th { span.visually-hidden { "Compare" } }
                @for (key, heading) in SORTED_BY {
                    @let (next, state) = match sort.strip_prefix('-') {
                        Some(k) if k == key => (key.to_owned(), "descending"),
                        _ if sort == key => (format!("-{key}"), "ascending"),
                        _ => (if key == "score" || key.starts_with("change") { format!("-{key}") } else { key.to_owned() }, "none"),
                    };
                    th aria-sort=(state) class=(if matches!(key, "score" | "change_7d" | "change_30d" | "change_90d") { "num" } else { "" }) {
                        a href=(link("/app/portfolio", &base, &here, ("sort", &next))) data-sort=(key) {
                            (heading) @match state { "ascending" => " ▲", "descending" => " ▼", _ => "" }
                        }
                    }
                }
                th { "Status" }
            } }
            tbody {
                @for c in &l.companies { (company_row(&id, c, &base, &here)) }
            }
        } }
        @if l.companies.is_empty() { p { "No company matches." } }
        (pages::pager(p, |n| { let n = n.to_string(); let mut k = here.clone(); k.push(("page", &n)); format!("/app/portfolio?{}", query(&[&base[..], &k[..]].concat())) }))
    }
}

fn company_row(id: &str, c: &PortfolioCompanyOut, base: &[(&str, &str)], kept: &[(&str, &str)]) -> Markup {
    let tier = c.record.tier.map(|t| t.to_string()).unwrap_or_default();
    html! {
        tr data-social-id=(c.social_id) data-status=(c.status) {
            td { input type="checkbox" name="social_id" value=(c.social_id) form="compare" aria-label={"Compare " (c.name)}; }
            td {
                a href=(company_link(&c.social_id)) { (c.name) }
                @if c.name_derived { " " span.tag title="Named from what its site says, or from its domain" { "derived name" } }
                br; span.muted { (or_empty(&c.domain)) }
            }
            td.num { @if c.status == "rated" { (score_badge(c.score, c.grade.as_deref())) } @else { span.muted { "—" } } }
            td.num { (change(c.change_7d)) }
            td.num { (change(c.change_30d)) }
            td.num { (change(c.change_90d)) }
            td {
                form.record data-action="/ui/portfolio/member" data-then="reload" aria-label={"Tier and tags of " (c.name)} {
                    input type="hidden" name="portfolio_id" value=(id);
                    input type="hidden" name="social_id" value=(c.social_id);
                    select name="tier" aria-label="Tier" {
                        option value="" selected[tier.is_empty()] { "—" }
                        @for t in ["1", "2", "3", "4"] { option value=(t) selected[tier == t] { "Tier " (t) } }
                    }
                    input name="tags" value=(c.record.tags.join(", ")) maxlength="400" size="12" aria-label="Tags, comma-separated";
                    button type="submit" { "Save" }
                }
                @for t in &c.record.tags {
                    a.chip href=(link("/app/portfolio", base, kept, ("tag", t))) { (t) }
                }
            }
            td { (c.industry) }
            td { (severities(&c.findings)) @if c.kev_findings > 0 { " " span.tag.kev { (c.kev_findings) " KEV" } } }
            td { @if let Some(at) = &c.last_scan { time datetime=(at) title=(pages::when(at)) { (pages::day(at)) } } }
            td { (or_empty(&c.depth)) }
            td { @if c.stale { span.tag.stale { "stale" } } }
            td { span class={"status status-" (c.status)} { (c.status) } @if let Some(m) = &c.status_message { @if c.status != "rated" || c.stale { br; span.muted { (m) } } } }
        }
    }
}

/// Open findings by severity, worst first, as chips (none shown for a zero).
fn severities(s: &SeverityCounts) -> Markup {
    let all = [("critical", s.critical), ("high", s.high), ("medium", s.medium), ("low", s.low), ("info", s.info)];
    html! {
        @if s.total() == 0 { span.muted { "none" } }
        @for (name, n) in all { @if n > 0 { span class=(severity_class(name)) title=(name) { (n) " " (name) } " " } }
    }
}

pub(crate) async fn download(Caller(api): Caller, Query(q): Params) -> Response {
    let id = param(&q, "portfolio_id");
    let mut at = vec![("portfolio_id", id), ("format", "csv")];
    at.extend(kept(&q, &LIST_KEPT));
    match api.forward("/portfolio-getcompanies", &at).await {
        Ok(r) => r,
        Err(f) => refused("Download", &f),
    }
}

// --- Adding companies --------------------------------------------------------------------

fn add_form(id: &str, open: bool) -> Markup {
    html! {
        details.add #add-companies open[open] {
            summary { "Add companies" }
            form.add data-action="/ui/portfolio/add" data-then="land" {
                input type="hidden" name="portfolio_id" value=(id);
                label for="domains" { "Domains, one per line (or a CSV with a header row: domain, name, tier, tags, custom_id …)" }
                textarea #domains name="companies" rows="6" required placeholder="example.com\nwww.example.org" {}
                label { "or a CSV file " input type="file" accept=".csv,text/csv,text/plain" data-into="domains"; }
                label { "Tier for these "
                    select name="tier" { option value="" { "—" } @for t in ["1", "2", "3", "4"] { option value=(t) { "Tier " (t) } } }
                }
                label { "Tags for these " input name="tags" maxlength="400" placeholder="renewal, eu"; }
                button type="submit" { "Add" }
            }
        }
    }
}

/// The body of `/portfolio-add-companies` made of pasted domains.
#[derive(Serialize)]
struct AddBody<'a> {
    portfolio_id: i64,
    companies: Vec<AddRow<'a>>,
}

#[derive(Serialize)]
struct AddRow<'a> {
    domain: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tier: Option<u8>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tags: Vec<&'a str>,
}

/// Whether pasted text is a CSV with a header row (its first line names a `domain`
/// column among others), rather than domains one per line.
fn is_csv(text: &str) -> bool {
    let first = text.lines().next().unwrap_or("").to_ascii_lowercase();
    first.contains(',') && first.split(',').any(|c| c.trim().trim_matches('"') == "domain")
}

pub(crate) async fn add(Caller(api): Caller, body: Bytes) -> Response {
    let f = form(&body);
    let Ok(portfolio_id) = param(&f, "portfolio_id").parse::<i64>() else {
        return fragment(StatusCode::BAD_REQUEST, pages::message(false, "portfolio_id is not valid"));
    };
    let text = f.get("companies").map_or("", String::as_str);
    let answer = if is_csv(text) {
        // A CSV goes to the API as it is, its rows read by their header there; the
        // portfolio by the query.
        let path = format!("/portfolio-add-companies?{}", query(&[("portfolio_id", &portfolio_id.to_string())]));
        api.post_text::<AddCompaniesOut>(&path, "text/csv", text.to_owned()).await
    } else {
        let tier = match tier_of(&f) {
            Ok(t) => t,
            Err(why) => return fragment(StatusCode::BAD_REQUEST, pages::message(false, why)),
        };
        let tags: Vec<&str> = param(&f, "tags").split(',').map(str::trim).filter(|t| !t.is_empty()).collect();
        let companies: Vec<AddRow<'_>> = text
            .split(['\n', ',', ';', ' ', '\t'])
            .map(|d| d.trim().trim_matches('\r'))
            .filter(|d| !d.is_empty())
            .map(|domain| AddRow { domain, tier, tags: tags.clone() })
            .collect();
        if companies.is_empty() {
            return fragment(StatusCode::BAD_REQUEST, pages::message(false, "Paste at least one domain"));
        }
        api.post::<AddCompaniesOut>("/portfolio-add-companies", &AddBody { portfolio_id, companies }).await
    };
    match answer {
        Ok(a) => fragment(StatusCode::OK, added(&a)),
        Err(f) => fragment(f.status, pages::message(false, &f.to_string())),
    }
}

fn added(a: &AddCompaniesOut) -> Markup {
    let count = |s: &str| a.counts.get(s).copied().unwrap_or(0);
    html! {
        section.landing data-portfolio=(a.portfolio_id) {
            p.ok {
                (a.results.len()) " row" @if a.results.len() != 1 { "s" } ": "
                (count("rated")) " rated, " (count("queued")) " queued, " (count("pending")) " pending, " (count("refused")) " refused"
                " · " (a.added) " new to the portfolio."
            }
            p.muted.landing-note { "Queued companies get a quick rating first (in seconds), then the full scan. This table follows them." }
            div.scroll { table.added {
                thead { tr { th { "Domain" } th { "Company" } th { "Status" } th { "Score" } th { "Message" } } }
                tbody { @for r in &a.results { (added_row(r)) } }
            } }
        }
    }
}

fn added_row(r: &AddedRowOut) -> Markup {
    let sid = or_empty(&r.social_id);
    html! {
        tr data-social-id=(sid) data-status=(r.status) {
            td { (r.domain) }
            td { @if sid.is_empty() { "—" } @else { a href=(company_link(sid)) { (sid) } @if r.created { " " span.tag { "new" } } } }
            td { span class={"status status-" (r.status)} { (r.status) } @if let Some(d) = &r.depth { " " span.muted { (d) } } }
            td { span.muted { "—" } }
            td { (r.message) }
        }
    }
}

/// The rows of an add-companies answer that were queued, as they stand now: the page
/// asks for them every few seconds until each is rated (or refused).
pub(crate) async fn landing(Caller(api): Caller, Query(q): Params) -> Response {
    let id = param(&q, "portfolio_id");
    let ids: Vec<&str> = param(&q, "social_id").split(',').filter(|s| !s.is_empty()).take(FOLLOWED).collect();
    let joined = ids.join(",");
    let mut rows: Vec<PortfolioCompanyOut> = Vec::new();
    // The API's pages are of ten: read as many as the rows followed need.
    for page in 1..=ids.len().div_ceil(10).max(1) {
        let n = page.to_string();
        let at = [("portfolio_id", id), ("social_id", joined.as_str()), ("page", n.as_str())];
        match api.get::<PortfolioCompaniesOut>("/portfolio-getcompanies", &at).await {
            Ok(p) => {
                let last = p.pagination.current_page >= p.pagination.total_pages;
                rows.extend(p.companies);
                if last {
                    break;
                }
            }
            Err(f) => return refused("Companies", &f),
        }
    }
    fragment(
        StatusCode::OK,
        html! {
            table { tbody { @for c in &rows {
                tr data-social-id=(c.social_id) data-status=(c.status) {
                    td { (or_empty(&c.domain)) }
                    td { a href=(company_link(&c.social_id)) { (c.name) } }
                    td { span class={"status status-" (c.status)} { (c.status) } @if let Some(d) = &c.depth { " " span.muted { (d) } } }
                    td { @if c.status == "rated" { (score_badge(c.score, c.grade.as_deref())) } @else { span.muted { "—" } } }
                    td { (or_empty(&c.status_message)) }
                }
            } } }
        },
    )
}

// --- A vendor record, edited in place ----------------------------------------------------

/// The body of `/portfolio-update-company`: the tier (null clears it) and the tags.
#[derive(Serialize)]
struct RecordBody<'a> {
    tier: Option<u8>,
    tags: Vec<&'a str>,
}

/// The tier a form gives (none when empty), or why it is refused.
fn tier_of(f: &HashMap<String, String>) -> Result<Option<u8>, &'static str> {
    match param(f, "tier") {
        "" => Ok(None),
        t => model::Tier::parse(t).map(|t| Some(t.get())).map_err(|_| "The tier is 1 to 4"),
    }
}

pub(crate) async fn member(Caller(api): Caller, body: Bytes) -> Response {
    let f = form(&body);
    let tier = match tier_of(&f) {
        Ok(t) => t,
        Err(why) => return fragment(StatusCode::BAD_REQUEST, pages::message(false, why)),
    };
    let tags: Vec<&str> = param(&f, "tags").split(',').map(str::trim).filter(|t| !t.is_empty()).collect();
    let at = [("portfolio_id", param(&f, "portfolio_id")), ("social_id", param(&f, "social_id"))];
    let saved = api.json::<MemberOut>(Method::PUT, "/portfolio-update-company", &at, &RecordBody { tier, tags }).await;
    answered(saved.map(|m| {
        let tier = m.record.tier.map_or("no tier".to_owned(), |t| format!("tier {t}"));
        let tags = if m.record.tags.is_empty() { "no tags".to_owned() } else { m.record.tags.join(", ") };
        format!("{}: {tier}, {tags}.", m.social_id)
    }))
}

// --- Findings tables ---------------------------------------------------------------------

/// Whose findings a table lists: a portfolio's, an underwriter's company's, or the
/// monitor key's own company's.
enum Of<'a> {
    Portfolio(&'a str),
    Company(&'a str),
    Own,
}

impl<'a> Of<'a> {
    fn asked(q: &'a HashMap<String, String>) -> Self {
        match (param(q, "portfolio_id"), param(q, "social_id")) {
            (p, _) if !p.is_empty() => Of::Portfolio(p),
            (_, s) if !s.is_empty() => Of::Company(s),
            _ => Of::Own,
        }
    }
    fn operation(&self) -> &'static str {
        match self {
            Of::Portfolio(_) => "/portfolio-getfindings",
            Of::Company(_) => "/underwriter-getcompanyfindings",
            Of::Own => "/monitor-getcompanyfindings",
        }
    }
    fn base(&self) -> Vec<(&'static str, &'a str)> {
        match self {
            Of::Portfolio(p) => vec![("portfolio_id", p)],
            Of::Company(s) => vec![("social_id", s)],
            Of::Own => vec![],
        }
    }
}

pub(crate) async fn findings(Caller(api): Caller, Query(q): Params) -> Response {
    let of = Of::asked(&q);
    let kept = kept(&q, &FINDINGS_KEPT);
    let mut at = of.base();
    at.extend(kept.iter().copied());
    let page = param(&q, "page");
    if !page.is_empty() {
        at.push(("page", page));
    }
    let disputes = async {
        match &of {
            Of::Own => crate::own_disputes(&api).await,
            _ => pages::Disputes::default(),
        }
    };
    let (answer, disputes, name) = tokio::join!(api.get::<FindingsOut>(of.operation(), &at), disputes, async {
        match &of {
            Of::Portfolio(p) => api
                .get::<PortfolioSummaryOut>("/portfolio-getsummary", &[("portfolio_id", p)])
                .await
                .ok()
                .map(|s| s.name),
            Of::Company(s) => api
                .get::<CompanyScores>("/underwriter-getcompanyscores", &[("social_id", s)])
                .await
                .ok()
                .map(|c| c.company_name),
            Of::Own => None,
        }
    });
    fragment(StatusCode::OK, findings_view(&of, name.as_deref(), &kept, &answer, &disputes))
}

fn findings_view(
    of: &Of<'_>,
    name: Option<&str>,
    kept: &[(&str, &str)],
    answer: &Result<FindingsOut, Failure>,
    disputes: &pages::Disputes,
) -> Markup {
    let base = of.base();
    let get = |k: &str| kept.iter().find(|(n, _)| *n == k).map_or("", |(_, v)| *v);
    let (title, back) = match of {
        Of::Portfolio(p) => (name.unwrap_or(p).to_owned(), format!("/app/portfolio?{}", query(&base))),
        Of::Company(s) => (name.unwrap_or(s).to_owned(), company_link(s)),
        Of::Own => ("Your company".to_owned(), "/app/monitor".to_owned()),
    };
    let csv = link("/ui/findings/csv", &base, kept, ("format", "csv"));
    let who = if matches!(of, Of::Own) { Audience::Monitor } else { Audience::Underwriter };
    html! {
        h1 { "Findings: " (title) }
        nav.actions {
            a.button href=(back) { "← " (title) }
            button type="button" data-report=(csv) data-filename="rampart-findings.csv" { "Download CSV" }
        }
        form.filters data-nav action="/app/findings" role="search" aria-label="Filter the findings" {
            @for (k, v) in &base { input type="hidden" name=(k) value=(v); }
            label { "Severity "
                select name="severity" {
                    option value="" { "any" }
                    @for s in ["critical", "high", "medium", "low", "info"] { option value=(s) selected[get("severity") == s] { (s) } }
                }
            }
            label { "Component "
                select name="risk_vector" {
                    option value="" { "any" }
                    @for (key, label, _) in COMPONENTS { option value=(key) selected[get("risk_vector") == key] { (label) } }
                }
            }
            label { "Status "
                select name="status" {
                    @for s in ["open", "closed", "all"] { option value=(s) selected[get("status") == s || (get("status").is_empty() && s == "open")] { (s) } }
                }
            }
            label { "Host " input name="host" value=(get("host")) maxlength="253" size="16"; }
            label { "Check " input name="code" value=(get("code")) maxlength="100" size="16" placeholder="dmarc.missing"; }
            label { "Disputed "
                select name="disputed" {
                    option value="" { "either" }
                    option value="true" selected[get("disputed") == "true"] { "yes" }
                    option value="false" selected[get("disputed") == "false"] { "no" }
                }
            }
            button type="submit" { "Filter" }
        }
        @match answer {
            Err(f) => (failure("Findings", f)),
            Ok(v) => {
                @let p = &v.pagination;
                p.muted { (p.total_items) " finding" @if p.total_items != 1 { "s" } " · page " (p.current_page) " of " (p.total_pages.max(1)) }
                @if v.findings.is_empty() { p { "No finding matches." } } @else {
                    div.scroll { table.findings-table {
                        thead { tr {
                            th { "Finding" } th { "Component" }
                            @if matches!(of, Of::Portfolio(_)) { th { "Company" } }
                            th { "Status" } th { "First seen" }
                        } }
                        tbody { @for f in &v.findings {
                            tr data-finding-id=(f.finding.id) {
                                td { (pages::finding(who, &f.finding, disputes)) }
                                td { (f.finding.risk_vector) }
                                @if matches!(of, Of::Portfolio(_)) { td { a href=(company_link(&f.social_id)) { (f.social_id) } } }
                                td { (f.status) @if let Some(at) = &f.closed_at { br; span.muted { (pages::when(at)) } } }
                                td { (pages::when(&f.finding.first_seen)) }
                            }
                        } }
                    } }
                }
                (pages::pager(p, |n| { let n = n.to_string(); let mut k: Vec<(&str, &str)> = base.clone(); k.extend(kept.iter().copied()); k.push(("page", &n)); format!("/app/findings?{}", query(&k)) }))
            }
        }
    }
}

pub(crate) async fn findings_download(Caller(api): Caller, Query(q): Params) -> Response {
    let of = Of::asked(&q);
    let mut at = of.base();
    at.extend(kept(&q, &FINDINGS_KEPT));
    at.push(("format", "csv"));
    match api.forward(of.operation(), &at).await {
        Ok(r) => r,
        Err(f) => refused("Download", &f),
    }
}

// --- Compare -----------------------------------------------------------------------------

/// One company of a compare view.
struct Compared {
    scores: CompanyScores,
    history: Result<ScoreHistory, Failure>,
    findings: Result<SeverityCounts, Failure>,
}

/// A company's open findings by severity: one findings search per severity (their
/// totals).
async fn severity_counts(api: &Api, social_id: &str) -> Result<SeverityCounts, Failure> {
    let total = async |severity: &str| -> Result<u32, Failure> {
        let at = [("social_id", social_id), ("severity", severity)];
        let v = api.get::<FindingsOut>("/underwriter-getcompanyfindings", &at).await?;
        Ok(u32::try_from(v.pagination.total_items).unwrap_or(u32::MAX))
    };
    let (critical, high, medium, low, info) =
        tokio::join!(total("critical"), total("high"), total("medium"), total("low"), total("info"));
    Ok(SeverityCounts { critical: critical?, high: high?, medium: medium?, low: low?, info: info? })
}

pub(crate) async fn compare(Caller(api): Caller, RawQuery(raw): RawQuery) -> Response {
    let raw = raw.unwrap_or_default();
    let mut ids: Vec<String> = Vec::new();
    for (k, v) in form_urlencoded::parse(raw.as_bytes()).take(64) {
        if k == "social_id" {
            for id in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                if !ids.iter().any(|i| i == id) {
                    ids.push(id.chars().take(100).collect());
                }
            }
        }
    }
    if !COMPARED.contains(&ids.len()) {
        let why = format!("Tick 2 to 4 companies to compare ({} given).", ids.len());
        return refused("Compare", &Failure::new(StatusCode::BAD_REQUEST, why));
    }
    let mut compared = Vec::new();
    for sid in &ids {
        let at = [("social_id", sid.as_str())];
        let scores = match api.get::<CompanyScores>("/underwriter-getcompanyscores", &at).await {
            Ok(s) => s,
            Err(f) => return refused(&format!("Company {sid}"), &f),
        };
        let (history, findings) = tokio::join!(
            api.get::<ScoreHistory>("/underwriter-getcompanyscore-history", &at),
            severity_counts(&api, sid)
        );
        compared.push(Compared { scores, history, findings });
    }
    fragment(StatusCode::OK, compare_view(&compared))
}

fn compare_view(list: &[Compared]) -> Markup {
    let names: Vec<&str> = list.iter().map(|c| c.scores.company_name.as_str()).collect();
    html! {
        h1 { "Compare: " (names.join(" · ")) }
        div.scroll { table.compare {
            thead { tr {
                th { "" }
                @for c in list { th { a href=(company_link(&c.scores.social_id)) { (c.scores.company_name) } br; (score_badge(c.scores.global_score, c.scores.grade.as_deref())) } }
            } }
            tbody {
                @for (key, label, member) in COMPONENTS {
                    tr data-component=(key) {
                        th scope="row" { (label) }
                        @for c in list {
                            td { @match &c.scores.score {
                                Some(s) => {
                                    @let comp = member(s);
                                    @match finite(comp.score) {
                                        Some(v) => { span class=(grade_class(or_empty(&comp.grade))) { (or_empty(&comp.grade)) } " " (format!("{v:.0}")) " · " (comp.findings_count) " found" }
                                        None => span.muted { "not assessable" },
                                    }
                                }
                                None => span.muted { "not rated" },
                            } }
                        }
                    }
                }
                tr.severity-row {
                    th scope="row" { "Open findings" }
                    @for c in list { td { @match &c.findings { Ok(s) => (severities(s)), Err(f) => (failure("Findings", f)) } } }
                }
            }
        } }
        h2 { "Score trend" }
        div.compare-charts {
            @for c in list {
                section {
                    h3 { (c.scores.company_name) }
                    @match &c.history { Ok(h) => (trend(h)), Err(f) => (failure("Score history", f)) }
                }
            }
        }
    }
}

/// The global score and each component's over a company's ratings, one line each.
fn trend(h: &ScoreHistory) -> Markup {
    let mut ratings: Vec<(f64, &api::responses::RatingOut)> = h
        .data
        .iter()
        .filter_map(|r| Some((model::timefmt::parse_datetime(&r.scanned_at)?.unix_timestamp() as f64, r)))
        .collect();
    ratings.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut series: Vec<(&str, Vec<(f64, f64)>)> =
        vec![("Global", ratings.iter().map(|(x, r)| (*x, r.score)).collect())];
    for (key, label, _) in COMPONENTS {
        let points = ratings.iter().filter_map(|(x, r)| Some((*x, (*r.components.get(key)?)?))).collect();
        series.push((label, points));
    }
    // Ratings within two days of each other are told apart by their time.
    let span = ratings.last().map_or(0.0, |l| l.0) - ratings.first().map_or(0.0, |f| f.0);
    let date = |x: f64| {
        time::OffsetDateTime::from_unix_timestamp(x as i64)
            .map(|t| match span < 2.0 * 86_400.0 {
                true => format!("{} {:02}:{:02}", model::timefmt::format_date(t.date()), t.hour(), t.minute()),
                false => model::timefmt::format_date(t.date()),
            })
            .unwrap_or_default()
    };
    chart::lines(&format!("Scores of {} by rating date", h.company_name), &series, (0.0, 100.0), date, |y| {
        format!("{y:.0}")
    })
}

/// Every view of this module rendered from the fixtures, each answer first passed
/// through `mutate` (the views' property test fills them with hostile text).
#[cfg(test)]
pub(crate) fn every_view(mutate: &mut dyn FnMut(serde_json::Value) -> serde_json::Value) -> Vec<String> {
    use crate::fixtures::{self, parse};
    let summary: PortfolioSummaryOut = parse(mutate(fixtures::portfolio_summary()));
    let list: PortfolioCompaniesOut = parse(mutate(fixtures::portfolio_companies()));
    let kept = [("sort", "-score"), ("grade", "C")];
    let mut views = vec![
        portfolios(&parse(mutate(fixtures::portfolios()))),
        portfolio_view(&summary, &Ok(list), &kept),
        added(&parse(mutate(fixtures::added()))),
    ];
    let found: FindingsOut = parse(mutate(fixtures::found_findings()));
    views.push(findings_view(
        &Of::Portfolio("7"),
        Some("Cyber book"),
        &[("severity", "high")],
        &Ok(found),
        &pages::Disputes::default(),
    ));
    let compared: Vec<Compared> = (0..2)
        .map(|_| Compared {
            scores: parse(mutate(fixtures::scores())),
            history: Ok(parse(mutate(fixtures::history()))),
            findings: Ok(SeverityCounts { high: 2, ..Default::default() }),
        })
        .collect();
    views.push(compare_view(&compared));
    views.into_iter().map(Markup::into_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn views() -> Vec<String> {
        every_view(&mut |v| v)
    }

    #[test]
    fn the_portfolio_table_sorts_filters_and_edits_in_place() {
        let html = &views()[1];
        // Sorted by score descending: its heading says so and a click sorts ascending.
        assert!(html.contains(r#"<th aria-sort="descending" class="num"><a href="/app/portfolio?portfolio_id=7&amp;grade=C&amp;sort=score" data-sort="score">Score ▼</a>"#), "{html}");
        // Another column sorts by itself, keeping the filter.
        assert!(html.contains(r#"href="/app/portfolio?portfolio_id=7&amp;grade=C&amp;sort=name""#), "{html}");
        // The grade filter is a chip that removes itself.
        assert!(
            html.contains(r#"<a class="chip active" href="/app/portfolio?portfolio_id=7&amp;sort=-score""#),
            "{html}"
        );
        // Tier chips with counts, a tag chip filtering by it, the tier edited in place.
        assert!(html.contains("Tier 1 · 1") && html.contains("No tier · 1"), "{html}");
        assert!(
            html.contains(r#"href="/app/portfolio?portfolio_id=7&amp;sort=-score&amp;grade=C&amp;tag=eu""#),
            "{html}"
        );
        assert!(html.contains(r#"<option value="1" selected>Tier 1</option>"#), "{html}");
        assert!(html.contains(r#"value="eu, renewal""#), "{html}");
        // The queued company shows its status, not a score.
        assert!(html.contains(r#"<tr data-social-id="new.test" data-status="queued">"#), "{html}");
        // The CSV keeps the filters.
        assert!(
            html.contains(
                r#"data-report="/ui/portfolio/csv?portfolio_id=7&amp;sort=-score&amp;grade=C&amp;format=csv""#
            ),
            "{html}"
        );
    }

    #[test]
    fn added_rows_say_their_status_and_queued_ones_are_followed() {
        let html = &views()[2];
        assert!(html.contains("3 rows: 1 rated, 1 queued, 0 pending, 1 refused"), "{html}");
        assert!(html.contains(r#"<tr data-social-id="new.test" data-status="queued">"#), "{html}");
        assert!(html.contains("an IP address"), "{html}");
    }

    #[test]
    fn a_portfolio_findings_table_names_each_company_and_pages() {
        let html = &views()[3];
        assert!(html.contains("Findings: Cyber book") && html.contains("21 findings · page 1 of 3"), "{html}");
        assert!(html.contains(r#"href="/app/company?social_id=acme""#), "{html}");
        assert!(html.contains(r#"href="/app/findings?portfolio_id=7&amp;severity=high&amp;page=2""#), "{html}");
        assert!(html.contains(r#"<option value="high" selected>high</option>"#), "{html}");
    }

    #[test]
    fn compare_puts_components_side_by_side_with_a_line_per_component() {
        let html = &views()[4];
        assert!(html.contains(r#"<tr data-component="dmarc">"#), "{html}");
        assert!(html.contains("2 high"), "{html}");
        assert!(html.contains(r#"<ul class="legend">"#) && html.contains("Global</li>"), "{html}");
    }

    #[test]
    fn pasted_text_is_a_csv_only_with_a_domain_header() {
        assert!(is_csv("domain,name,tier\nexample.com,Example,1"));
        assert!(is_csv("\"name\", \"domain\"\nx,example.com"));
        assert!(!is_csv("example.com, example.org\nexample.net"));
        assert!(!is_csv(""));
    }

    #[test]
    fn a_link_keeps_the_filters_and_sets_or_removes_one() {
        let kept = [("sort", "-score"), ("grade", "B"), ("page", "3")];
        let base = [("portfolio_id", "7")];
        assert_eq!(
            link("/app/portfolio", &base, &kept, ("grade", "C")),
            "/app/portfolio?portfolio_id=7&sort=-score&grade=C"
        );
        assert_eq!(link("/app/portfolio", &base, &kept, ("grade", "")), "/app/portfolio?portfolio_id=7&sort=-score");
        // A tag with characters of its own is encoded.
        assert_eq!(link("/app/portfolio", &base, &[], ("tag", "a&b c")), "/app/portfolio?portfolio_id=7&tag=a%26b+c");
    }
}
