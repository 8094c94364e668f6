//! The cve-search record in the form list responses serve it, rendered once
//! at import so that a search answers by splicing stored JSON instead of parsing and
//! re-serialising every record. `capec`, `kev`, `epss` and `percentile` are left out:
//! they come from other feeds and are joined when the response is built.
//!
//! The API's typed record (`api::responses::CveOut`) documents the same shape; a
//! contract test holds the two equal.

use std::collections::BTreeMap;

use model::timefmt::cve_search_datetime;
use model::{CpeEntry, CveRecord, CvssImpact};
use serde::Serialize;
use serde_json::Value;

#[derive(Serialize)]
struct Access<'a> {
    authentication: &'a str,
    complexity: &'a str,
    vector: &'a str,
}

#[derive(Serialize)]
struct Cia<'a> {
    availability: &'a str,
    confidentiality: &'a str,
    integrity: &'a str,
}

#[derive(Serialize)]
struct Exploitability3<'a> {
    attackvector: &'a str,
    attackcomplexity: &'a str,
    privilegesrequired: &'a str,
    userinteraction: &'a str,
    scope: &'a str,
}

#[derive(Serialize)]
struct ListForm<'a> {
    id: &'a str,
    summary: &'a str,
    published: String,
    modified: String,
    #[serde(rename = "lastModified")]
    last_modified: String,
    #[serde(rename = "cvssTime")]
    cvss_time: Option<String>,
    assigner: &'a str,
    cwe: &'a str,
    cvss: Option<f64>,
    #[serde(rename = "impactScore")]
    impact_score: Option<f64>,
    #[serde(rename = "exploitabilityScore")]
    exploitability_score: Option<f64>,
    #[serde(rename = "cvssVector")]
    cvss_vector: Option<&'a str>,
    cvss3: Option<f64>,
    #[serde(rename = "impactScore3")]
    impact_score3: Option<f64>,
    #[serde(rename = "exploitabilityScore3")]
    exploitability_score3: Option<f64>,
    #[serde(rename = "cvss3Vector")]
    cvss3_vector: Option<&'a str>,
    cvss4: Option<f64>,
    #[serde(rename = "cvss4Vector")]
    cvss4_vector: Option<&'a str>,
    access: Access<'a>,
    impact: Cia<'a>,
    impact3: Cia<'a>,
    exploitability3: Exploitability3<'a>,
    refmap: &'a BTreeMap<String, Vec<String>>,
    vulnerable_configuration: &'a [CpeEntry],
    vulnerable_configuration_cpe_2_2: Vec<&'a str>,
    vulnerable_product: &'a [String],
    msbulletin: &'a [Value],
    references: &'a [String],
}

fn cia(c: Option<&CvssImpact>) -> Cia<'_> {
    match c {
        Some(c) => Cia { availability: &c.availability, confidentiality: &c.confidentiality, integrity: &c.integrity },
        None => Cia { availability: "", confidentiality: "", integrity: "" },
    }
}

/// The record as list responses serve it, without `capec`, `kev`, `epss`, `percentile`.
pub fn list_form(r: &CveRecord) -> String {
    let access = r.access.as_ref();
    let e = r.exploitability3.as_ref();
    let form = ListForm {
        id: r.id.as_str(),
        summary: &r.summary,
        published: cve_search_datetime(r.published.0),
        modified: cve_search_datetime(r.modified.0),
        last_modified: cve_search_datetime(r.last_modified.unwrap_or(r.modified).0),
        cvss_time: r.cvss_time.map(|t| cve_search_datetime(t.0)),
        assigner: &r.assigner,
        cwe: &r.cwe,
        cvss: r.cvss,
        impact_score: r.impact_score,
        exploitability_score: r.exploitability_score,
        cvss_vector: r.cvss_vector.as_deref(),
        cvss3: r.cvss3,
        impact_score3: r.impact_score3,
        exploitability_score3: r.exploitability_score3,
        cvss3_vector: r.cvss3_vector.as_deref(),
        cvss4: r.cvss4,
        cvss4_vector: r.cvss4_vector.as_deref(),
        access: Access {
            authentication: access.map_or("", |a| &a.authentication),
            complexity: access.map_or("", |a| &a.complexity),
            vector: access.map_or("", |a| &a.vector),
        },
        impact: cia(r.impact.as_ref()),
        impact3: cia(r.impact3.as_ref()),
        exploitability3: Exploitability3 {
            attackvector: e.map_or("", |e| &e.attackvector),
            attackcomplexity: e.map_or("", |e| &e.attackcomplexity),
            privilegesrequired: e.map_or("", |e| &e.privilegesrequired),
            userinteraction: e.map_or("", |e| &e.userinteraction),
            scope: e.map_or("", |e| &e.scope),
        },
        refmap: &r.refmap,
        vulnerable_configuration: &r.vulnerable_configuration,
        vulnerable_configuration_cpe_2_2: r.vulnerable_configuration_cpe_2_2.iter().map(|c| c.id.as_str()).collect(),
        vulnerable_product: &r.vulnerable_product,
        msbulletin: &r.msbulletin,
        references: &r.references,
    };
    // Serialising plain data cannot fail; an empty object would only lose the record.
    serde_json::to_string(&form).unwrap_or_else(|_| "{}".to_owned())
}
