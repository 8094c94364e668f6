//! NVD CVE records — the JSON 2.0 shape (feed files `nvdcve-2.0-*.json[.gz]`, API 2.0
//! pages, single `cve` objects) and the legacy 1.1 feeds (`nvdcve-1.1-*.json.gz`,
//! `CVE_Items[]`) — read as a stream, one record at a time, and projected to the
//! cve-search record the API serves, with the configurations kept for matching.
//!
//! Metric choice: where several CVSS metrics of one version exist, the one whose
//! `type` is `Primary` (NVD's own) is used, else the first listed. CVSS 3.1 is
//! preferred over 3.0; its vector (which names its version) is kept as `cvss3Vector`,
//! and a 2.0 record's CVSS 4.0 metric as `cvss4` and `cvss4Vector` (the 1.1 format has
//! none). `cwe` is the first `CWE-n` of the primary weakness, else of any
//! weakness, else `Unknown`.

use std::collections::BTreeMap;
use std::io::BufRead;

use model::{
    Cpe, CpeEntry, CveId, CveRecord, CvssAccess, CvssExploitability3, CvssImpact, OffsetDateTimeText,
    timefmt::parse_datetime,
};
use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::FeedError;
use crate::matching::{Configuration, CpeMatch, Node, Operator};
use crate::split::{SplitError, Splitter};

/// A CVE as imported: the record to serve and the configurations to match.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedCve {
    pub record: CveRecord,
    pub configurations: Vec<Configuration>,
}

// --- NVD JSON 2.0 ----------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Cve20 {
    id: String,
    #[serde(default)]
    source_identifier: String,
    published: String,
    last_modified: String,
    #[serde(default)]
    descriptions: Vec<LangString>,
    #[serde(default)]
    metrics: Metrics20,
    #[serde(default)]
    weaknesses: Vec<Weakness20>,
    #[serde(default)]
    configurations: Vec<Config20>,
    #[serde(default)]
    references: Vec<Ref20>,
}

#[derive(Deserialize)]
struct LangString {
    #[serde(default)]
    lang: String,
    #[serde(default)]
    value: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Metrics20 {
    #[serde(default)]
    cvss_metric_v31: Vec<Metric3>,
    #[serde(default)]
    cvss_metric_v30: Vec<Metric3>,
    #[serde(default)]
    cvss_metric_v2: Vec<Metric2>,
    #[serde(default)]
    cvss_metric_v40: Vec<Metric4>,
}

#[derive(Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct Metric4 {
    #[serde(default, rename = "type")]
    kind: String,
    cvss_data: Cvss4Data,
}

#[derive(Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct Cvss4Data {
    base_score: f64,
    #[serde(default)]
    vector_string: String,
}

#[derive(Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct Metric3 {
    #[serde(default, rename = "type")]
    kind: String,
    cvss_data: Cvss3Data,
    #[serde(default)]
    exploitability_score: Option<f64>,
    #[serde(default)]
    impact_score: Option<f64>,
}

#[derive(Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct Cvss3Data {
    base_score: f64,
    #[serde(default)]
    vector_string: String,
    #[serde(default)]
    attack_vector: String,
    #[serde(default)]
    attack_complexity: String,
    #[serde(default)]
    privileges_required: String,
    #[serde(default)]
    user_interaction: String,
    #[serde(default)]
    scope: String,
    #[serde(default)]
    confidentiality_impact: String,
    #[serde(default)]
    integrity_impact: String,
    #[serde(default)]
    availability_impact: String,
}

#[derive(Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct Metric2 {
    #[serde(default, rename = "type")]
    kind: String,
    cvss_data: Cvss2Data,
    #[serde(default)]
    exploitability_score: Option<f64>,
    #[serde(default)]
    impact_score: Option<f64>,
}

#[derive(Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct Cvss2Data {
    base_score: f64,
    #[serde(default)]
    vector_string: String,
    #[serde(default)]
    access_vector: String,
    #[serde(default)]
    access_complexity: String,
    #[serde(default)]
    authentication: String,
    #[serde(default)]
    confidentiality_impact: String,
    #[serde(default)]
    integrity_impact: String,
    #[serde(default)]
    availability_impact: String,
}

#[derive(Deserialize)]
struct Weakness20 {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    description: Vec<LangString>,
}

#[derive(Deserialize)]
struct Config20 {
    #[serde(default)]
    operator: Option<String>,
    #[serde(default)]
    negate: Option<bool>,
    #[serde(default)]
    nodes: Vec<Node20>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Node20 {
    #[serde(default)]
    operator: Option<String>,
    #[serde(default)]
    negate: Option<bool>,
    #[serde(default)]
    cpe_match: Vec<Match20>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Match20 {
    #[serde(default)]
    vulnerable: bool,
    criteria: String,
    #[serde(default)]
    version_start_including: Option<String>,
    #[serde(default)]
    version_start_excluding: Option<String>,
    #[serde(default)]
    version_end_including: Option<String>,
    #[serde(default)]
    version_end_excluding: Option<String>,
}

#[derive(Deserialize)]
struct Ref20 {
    url: String,
}

// --- NVD JSON 1.1 ----------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Item11 {
    cve: Cve11,
    #[serde(default)]
    configurations: Configurations11,
    #[serde(default)]
    impact: Impact11,
    published_date: String,
    last_modified_date: String,
}

#[derive(Deserialize)]
struct Cve11 {
    #[serde(rename = "CVE_data_meta")]
    meta: Meta11,
    #[serde(default)]
    problemtype: ProblemType11,
    #[serde(default)]
    references: References11,
    #[serde(default)]
    description: Description11,
}

#[derive(Deserialize)]
struct Meta11 {
    #[serde(rename = "ID")]
    id: String,
    #[serde(rename = "ASSIGNER", default)]
    assigner: String,
}

#[derive(Deserialize, Default)]
struct ProblemType11 {
    #[serde(default)]
    problemtype_data: Vec<ProblemTypeData11>,
}

#[derive(Deserialize)]
struct ProblemTypeData11 {
    #[serde(default)]
    description: Vec<LangString>,
}

#[derive(Deserialize, Default)]
struct References11 {
    #[serde(default)]
    reference_data: Vec<Ref11>,
}

#[derive(Deserialize)]
struct Ref11 {
    url: String,
    #[serde(default)]
    refsource: String,
}

#[derive(Deserialize, Default)]
struct Description11 {
    #[serde(default)]
    description_data: Vec<LangString>,
}

#[derive(Deserialize, Default)]
struct Configurations11 {
    #[serde(default)]
    nodes: Vec<Node11>,
}

#[derive(Deserialize)]
struct Node11 {
    #[serde(default)]
    operator: Option<String>,
    #[serde(default)]
    negate: Option<bool>,
    #[serde(default)]
    children: Vec<Node11>,
    #[serde(default)]
    cpe_match: Vec<Match11>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Match11 {
    #[serde(default)]
    vulnerable: bool,
    #[serde(rename = "cpe23Uri")]
    cpe23_uri: String,
    #[serde(default)]
    version_start_including: Option<String>,
    #[serde(default)]
    version_start_excluding: Option<String>,
    #[serde(default)]
    version_end_including: Option<String>,
    #[serde(default)]
    version_end_excluding: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Impact11 {
    #[serde(default)]
    base_metric_v3: Option<BaseMetric3_11>,
    #[serde(default)]
    base_metric_v2: Option<BaseMetric2_11>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BaseMetric3_11 {
    cvss_v3: Cvss3Data,
    #[serde(default)]
    exploitability_score: Option<f64>,
    #[serde(default)]
    impact_score: Option<f64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BaseMetric2_11 {
    cvss_v2: Cvss2Data,
    #[serde(default)]
    exploitability_score: Option<f64>,
    #[serde(default)]
    impact_score: Option<f64>,
}

// --- projection --------------------------------------------------------------------------

fn time(raw: &str, field: &str) -> Result<OffsetDateTimeText, String> {
    parse_datetime(raw).map(OffsetDateTimeText).ok_or_else(|| format!("{field} is not a date-time: {raw:?}"))
}

fn operator(raw: Option<&str>) -> Operator {
    match raw {
        Some(op) if op.eq_ignore_ascii_case("AND") => Operator::And,
        _ => Operator::Or,
    }
}

fn canonical_match(vulnerable: bool, criteria: &str, ranges: [&Option<String>; 4]) -> Result<CpeMatch, String> {
    // NVD writes its names in canonical form; others are parsed and written so.
    let criteria = match Cpe::canonical_attrs(criteria) {
        Some(_) => criteria.to_owned(),
        None => Cpe::parse(criteria).map_err(|_| format!("criteria is not a CPE 2.3 name: {criteria:?}"))?.to_string(),
    };
    let clean = |v: &Option<String>| v.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
    Ok(CpeMatch {
        vulnerable,
        criteria,
        version_start_including: clean(ranges[0]),
        version_start_excluding: clean(ranges[1]),
        version_end_including: clean(ranges[2]),
        version_end_excluding: clean(ranges[3]),
    })
}

fn english(descriptions: &[LangString]) -> String {
    descriptions
        .iter()
        .find(|d| d.lang.eq_ignore_ascii_case("en"))
        .or_else(|| descriptions.first())
        .map(|d| d.value.clone())
        .unwrap_or_default()
}

fn first_cwe<'a>(values: impl Iterator<Item = &'a str>) -> Option<String> {
    values
        .map(str::trim)
        .find(|v| v.starts_with("CWE-") && v[4..].bytes().all(|b| b.is_ascii_digit()) && v.len() > 4)
        .map(str::to_owned)
}

fn primary<T: Clone>(metrics: &[T], kind: impl Fn(&T) -> &str) -> Option<T> {
    metrics.iter().find(|m| kind(m).eq_ignore_ascii_case("Primary")).or_else(|| metrics.first()).cloned()
}

struct Scores {
    v2: Option<(Cvss2Data, Option<f64>, Option<f64>)>,
    v3: Option<(Cvss3Data, Option<f64>, Option<f64>)>,
    v4: Option<Cvss4Data>,
}

/// The configuration names in both cve-search forms, and the vulnerable ones.
fn cpe_lists(configurations: &[Configuration]) -> (Vec<CpeEntry>, Vec<CpeEntry>, Vec<String>) {
    let mut all: Vec<String> = Vec::new();
    let mut vulnerable: Vec<String> = Vec::new();
    for c in configurations {
        for n in &c.nodes {
            for m in &n.matches {
                if !all.contains(&m.criteria) {
                    all.push(m.criteria.clone());
                }
                if m.vulnerable && !vulnerable.contains(&m.criteria) {
                    vulnerable.push(m.criteria.clone());
                }
            }
        }
    }
    let formatted = all.iter().map(|c| CpeEntry { id: c.clone(), title: c.clone() }).collect();
    let uris = all
        .iter()
        .filter_map(|c| match Cpe::canonical_attrs(c) {
            Some(attrs) => Some(Cpe::uri_of(&attrs)),
            None => Cpe::parse(c).ok().map(|c| c.to_uri()),
        })
        .map(|uri| CpeEntry { title: uri.clone(), id: uri })
        .collect();
    (formatted, uris, vulnerable)
}

#[allow(clippy::too_many_arguments)]
fn project(
    id: &str,
    summary: String,
    published: &str,
    last_modified: &str,
    assigner: String,
    cwe: Option<String>,
    scores: Scores,
    configurations: Vec<Configuration>,
    references: Vec<String>,
    refmap: BTreeMap<String, Vec<String>>,
) -> Result<ImportedCve, String> {
    let id = CveId::parse(id).map_err(|_| format!("not a CVE id: {id:?}"))?;
    let published = time(published, "published")?;
    let last_modified = time(last_modified, "lastModified")?;
    let (vulnerable_configuration, vulnerable_configuration_cpe_2_2, vulnerable_product) = cpe_lists(&configurations);
    let (cvss, impact_score, exploitability_score, cvss_vector, access, impact) = match scores.v2 {
        Some((d, es, is)) => (
            Some(d.base_score),
            is,
            es,
            Some(d.vector_string.clone()),
            Some(CvssAccess {
                authentication: d.authentication,
                complexity: d.access_complexity,
                vector: d.access_vector,
            }),
            Some(CvssImpact {
                availability: d.availability_impact,
                confidentiality: d.confidentiality_impact,
                integrity: d.integrity_impact,
            }),
        ),
        None => (None, None, None, None, None, None),
    };
    let nonempty = |v: String| Some(v).filter(|v| !v.is_empty());
    let cvss3_vector = scores.v3.as_ref().and_then(|(d, ..)| nonempty(d.vector_string.clone()));
    let (cvss4, cvss4_vector) = match scores.v4 {
        Some(d) => (Some(d.base_score), nonempty(d.vector_string)),
        None => (None, None),
    };
    let (cvss3, impact_score3, exploitability_score3, impact3, exploitability3) = match scores.v3 {
        Some((d, es, is)) => (
            Some(d.base_score),
            is,
            es,
            Some(CvssImpact {
                availability: d.availability_impact.clone(),
                confidentiality: d.confidentiality_impact.clone(),
                integrity: d.integrity_impact.clone(),
            }),
            Some(CvssExploitability3 {
                attackvector: d.attack_vector,
                attackcomplexity: d.attack_complexity,
                privilegesrequired: d.privileges_required,
                userinteraction: d.user_interaction,
                scope: d.scope,
            }),
        ),
        None => (None, None, None, None, None),
    };
    let record = CveRecord {
        id,
        summary,
        published,
        modified: last_modified,
        last_modified: Some(last_modified),
        cvss_time: Some(last_modified),
        assigner,
        cwe: cwe.unwrap_or_else(|| "Unknown".to_owned()),
        cvss,
        impact_score,
        exploitability_score,
        cvss_vector,
        cvss3,
        impact_score3,
        exploitability_score3,
        cvss3_vector,
        cvss4,
        cvss4_vector,
        access,
        impact,
        impact3,
        exploitability3,
        refmap,
        vulnerable_configuration,
        vulnerable_configuration_cpe_2_2,
        vulnerable_product,
        msbulletin: Vec::new(),
        capec: Vec::new(),
        references,
        kev: None,
        epss: None,
        percentile: None,
    };
    Ok(ImportedCve { record, configurations })
}

fn from_20(c: Cve20) -> Result<ImportedCve, String> {
    let mut configurations = Vec::with_capacity(c.configurations.len());
    for conf in &c.configurations {
        let mut nodes = Vec::with_capacity(conf.nodes.len());
        for n in &conf.nodes {
            let matches = n
                .cpe_match
                .iter()
                .map(|m| {
                    canonical_match(
                        m.vulnerable,
                        &m.criteria,
                        [
                            &m.version_start_including,
                            &m.version_start_excluding,
                            &m.version_end_including,
                            &m.version_end_excluding,
                        ],
                    )
                })
                .collect::<Result<_, _>>()?;
            nodes.push(Node { operator: operator(n.operator.as_deref()), negate: n.negate.unwrap_or(false), matches });
        }
        configurations.push(Configuration {
            operator: operator(conf.operator.as_deref()),
            negate: conf.negate.unwrap_or(false),
            nodes,
        });
    }
    let primary_weakness = c.weaknesses.iter().find(|w| w.kind.eq_ignore_ascii_case("Primary"));
    let cwe = primary_weakness
        .and_then(|w| first_cwe(w.description.iter().map(|d| d.value.as_str())))
        .or_else(|| first_cwe(c.weaknesses.iter().flat_map(|w| w.description.iter().map(|d| d.value.as_str()))));
    let v3 =
        primary(&c.metrics.cvss_metric_v31, |m| &m.kind).or_else(|| primary(&c.metrics.cvss_metric_v30, |m| &m.kind));
    let v2 = primary(&c.metrics.cvss_metric_v2, |m| &m.kind);
    let v4 = primary(&c.metrics.cvss_metric_v40, |m| &m.kind);
    let mut references: Vec<String> = Vec::with_capacity(c.references.len());
    for r in c.references {
        if !references.contains(&r.url) {
            references.push(r.url);
        }
    }
    project(
        &c.id,
        english(&c.descriptions),
        &c.published,
        &c.last_modified,
        c.source_identifier,
        cwe,
        Scores {
            v2: v2.map(|m| (m.cvss_data, m.exploitability_score, m.impact_score)),
            v3: v3.map(|m| (m.cvss_data, m.exploitability_score, m.impact_score)),
            v4: v4.map(|m| m.cvss_data),
        },
        configurations,
        references,
        BTreeMap::new(),
    )
}

fn node_11(n: &Node11) -> Result<Node, String> {
    let matches = n
        .cpe_match
        .iter()
        .map(|m| {
            canonical_match(
                m.vulnerable,
                &m.cpe23_uri,
                [
                    &m.version_start_including,
                    &m.version_start_excluding,
                    &m.version_end_including,
                    &m.version_end_excluding,
                ],
            )
        })
        .collect::<Result<_, _>>()?;
    Ok(Node { operator: operator(n.operator.as_deref()), negate: n.negate.unwrap_or(false), matches })
}

fn from_11(item: Item11) -> Result<ImportedCve, String> {
    // Each top-level node is one configuration: a leaf list, or an operator over children.
    let mut configurations = Vec::with_capacity(item.configurations.nodes.len());
    for top in &item.configurations.nodes {
        if top.children.is_empty() {
            configurations.push(Configuration { operator: Operator::Or, negate: false, nodes: vec![node_11(top)?] });
        } else {
            let nodes = top.children.iter().map(node_11).collect::<Result<_, _>>()?;
            configurations.push(Configuration {
                operator: operator(top.operator.as_deref()),
                negate: top.negate.unwrap_or(false),
                nodes,
            });
        }
    }
    let cwe = first_cwe(
        item.cve.problemtype.problemtype_data.iter().flat_map(|p| p.description.iter().map(|d| d.value.as_str())),
    );
    let mut references = Vec::new();
    let mut refmap: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in item.cve.references.reference_data {
        if !r.refsource.is_empty() {
            let urls = refmap.entry(r.refsource.to_ascii_lowercase()).or_default();
            if !urls.contains(&r.url) {
                urls.push(r.url.clone());
            }
        }
        if !references.contains(&r.url) {
            references.push(r.url);
        }
    }
    project(
        &item.cve.meta.id,
        english(&item.cve.description.description_data),
        &item.published_date,
        &item.last_modified_date,
        item.cve.meta.assigner,
        cwe,
        Scores {
            v2: item.impact.base_metric_v2.map(|m| (m.cvss_v2, m.exploitability_score, m.impact_score)),
            v3: item.impact.base_metric_v3.map(|m| (m.cvss_v3, m.exploitability_score, m.impact_score)),
            v4: None,
        },
        configurations,
        references,
        refmap,
    )
}

// --- streaming -----------------------------------------------------------------------------

/// The largest record (or other top-level value) read: NVD's largest records, with
/// thousands of configuration entries, are a few MiB.
const MAX_VALUE: usize = 64 << 20;

/// Calls `each` for every record of an NVD file (2.0 feed or API page, a single 2.0
/// `cve` object, or a 1.1 feed), in file order, without holding the file in memory.
/// `each` may stop the read by returning an error. A record that is not a valid CVE is
/// an error naming its position (line and column in the file) and its index.
///
/// The file's structure is walked by [`crate::split`]; each record's bytes are then
/// parsed as a slice, which is several times faster than parsing the stream.
pub fn read_nvd<R: BufRead>(
    reader: R,
    what: &str,
    mut each: impl FnMut(ImportedCve) -> Result<(), FeedError>,
) -> Result<usize, FeedError> {
    let syntax = |e| split_error(what, e);
    let mut s = Splitter::new(reader);
    let mut count = 0usize;
    let mut value = Vec::new();
    // The members of a bare 2.0 `cve` object, as an object of their own.
    let mut bare = vec![b'{'];
    let mut bare_id = false;
    s.expect(b'{', "an NVD CVE file (a JSON object)").map_err(syntax)?;
    if s.peek().map_err(syntax)? == Some(b'}') {
        s.expect(b'}', "`}`").map_err(syntax)?;
    } else {
        loop {
            value.clear();
            let at = s.position();
            s.value(&mut value, MAX_VALUE).map_err(syntax)?;
            let key: String = serde_json::from_slice(&value)
                .map_err(|e| FeedError::format(what, at.to_string(), format!("expected a member name: {e}")))?;
            s.expect(b':', "`:`").map_err(syntax)?;
            match key.as_str() {
                "vulnerabilities" | "CVE_Items" => items(&mut s, what, key == "CVE_Items", &mut count, &mut each)?,
                _ => {
                    let at = s.position();
                    value.clear();
                    s.value(&mut value, MAX_VALUE).map_err(syntax)?;
                    if let Err(e) = serde_json::from_slice::<IgnoredAny>(&value) {
                        return Err(FeedError::format(what, at.inner(e.line(), e.column()).to_string(), message(&e)));
                    }
                    if matches!(
                        key.as_str(),
                        "id" | "sourceIdentifier"
                            | "published"
                            | "lastModified"
                            | "descriptions"
                            | "metrics"
                            | "weaknesses"
                            | "configurations"
                            | "references"
                    ) {
                        bare_id |= key == "id";
                        if bare.len() > 1 {
                            bare.push(b',');
                        }
                        serde_json::to_writer(&mut bare, &key)
                            .map_err(|e| FeedError::format(what, "-", e.to_string()))?;
                        bare.push(b':');
                        bare.extend_from_slice(&value);
                    }
                }
            }
            if s.either(b',', b'}', "`,` or `}`").map_err(syntax)? == b'}' {
                break;
            }
        }
    }
    if let Some(b) = s.peek().map_err(syntax)? {
        return Err(FeedError::format(
            what,
            s.position().to_string(),
            format!("trailing characters after the file's object (`{}`)", char::from(b).escape_default()),
        ));
    }
    if bare_id {
        bare.push(b'}');
        let cve: Cve20 = serde_json::from_slice(&bare).map_err(|e| FeedError::format(what, "record 1", message(&e)))?;
        let record = from_20(cve).map_err(|m| FeedError::format(what, "record 1", m))?;
        each(record)?;
        count += 1;
    }
    Ok(count)
}

fn split_error(what: &str, e: SplitError) -> FeedError {
    match e {
        SplitError::Io(source) => FeedError::Io { what: what.to_owned(), source },
        SplitError::Syntax { at, message } => FeedError::format(what, at.to_string(), message),
    }
}

/// serde_json's message without the position it appends (which is relative to the
/// value, not the file).
fn message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    text.strip_suffix(&suffix).map(str::to_owned).unwrap_or(text)
}

#[derive(Deserialize)]
struct Wrapper20 {
    cve: Cve20,
}

/// The elements of a record array, parsed one by one.
fn items<R: BufRead>(
    s: &mut Splitter<R>,
    what: &str,
    legacy: bool,
    count: &mut usize,
    each: &mut impl FnMut(ImportedCve) -> Result<(), FeedError>,
) -> Result<(), FeedError> {
    let syntax = |e| split_error(what, e);
    s.expect(b'[', "an array of CVE records").map_err(syntax)?;
    if s.peek().map_err(syntax)? == Some(b']') {
        s.expect(b']', "`]`").map_err(syntax)?;
        return Ok(());
    }
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        let n = *count + 1;
        let at = s.position();
        s.value(&mut bytes, MAX_VALUE).map_err(syntax)?;
        let parsed = if legacy {
            serde_json::from_slice::<Item11>(&bytes).map(from_11)
        } else {
            serde_json::from_slice::<Wrapper20>(&bytes).map(|w| from_20(w.cve))
        };
        let imported = match parsed {
            Ok(Ok(imported)) => imported,
            Ok(Err(m)) => return Err(FeedError::format(what, at.to_string(), format!("record {n}: {m}"))),
            Err(e) => {
                let at = at.inner(e.line(), e.column());
                return Err(FeedError::format(what, at.to_string(), format!("record {n}: {}", message(&e))));
            }
        };
        each(imported)?;
        *count = n;
        if s.either(b',', b']', "`,` or `]`").map_err(syntax)? == b']' {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_one(json: &str) -> ImportedCve {
        let mut got = Vec::new();
        read_nvd(json.as_bytes(), "test", |c| {
            got.push(c);
            Ok(())
        })
        .unwrap();
        assert_eq!(got.len(), 1);
        got.remove(0)
    }

    /// The vectors are kept with the scores: v3's (which names 3.1 or 3.0) and a 2.0
    /// record's v4.0 metric, the primary one where there are several. (A made-up record
    /// in the NVD 2.0 shape: no record of ../shared/data has a v4.0 metric.)
    #[test]
    fn cvss_vectors_are_kept_with_their_versions() {
        let r = read_one(
            r#"{"id": "CVE-2099-0001", "published": "2099-01-01T00:00:00.000", "lastModified": "2099-01-02T00:00:00.000",
            "metrics": {
              "cvssMetricV40": [
                {"source": "cna@example.test", "type": "Secondary", "cvssData": {"version": "4.0", "baseScore": 8.7,
                  "vectorString": "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:N/VA:N/SC:N/SI:N/SA:N"}},
                {"source": "nvd@nist.gov", "type": "Primary", "cvssData": {"version": "4.0", "baseScore": 9.3,
                  "vectorString": "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N"}}],
              "cvssMetricV30": [{"type": "Primary", "cvssData": {"version": "3.0", "baseScore": 9.8,
                  "vectorString": "CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"}}],
              "cvssMetricV2": [{"type": "Primary", "cvssData": {"version": "2.0", "baseScore": 7.5,
                  "vectorString": "AV:N/AC:L/Au:N/C:P/I:P/A:P"}}]}}"#,
        )
        .record;
        assert_eq!(
            (r.cvss4, r.cvss4_vector.as_deref()),
            (Some(9.3), Some("CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N"))
        );
        assert_eq!(
            (r.cvss3, r.cvss3_vector.as_deref()),
            (Some(9.8), Some("CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"))
        );
        assert_eq!((r.cvss, r.cvss_vector.as_deref()), (Some(7.5), Some("AV:N/AC:L/Au:N/C:P/I:P/A:P")));
        // The served form holds them: they read back from it.
        let back = CveRecord::from_served_form(&crate::render::list_form(&r)).unwrap();
        assert_eq!(
            (back.cvss3_vector, back.cvss4, back.cvss4_vector),
            (r.cvss3_vector.clone(), r.cvss4, r.cvss4_vector.clone())
        );
        // Without metrics, nothing is made up.
        let bare = read_one(r#"{"id": "CVE-2099-0002", "published": "2099-01-01T00:00:00.000", "lastModified": "2099-01-02T00:00:00.000"}"#).record;
        assert_eq!((bare.cvss3_vector, bare.cvss4, bare.cvss4_vector), (None, None, None));
    }
}
