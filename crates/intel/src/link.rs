//! Linking public incidents to companies, conservatively (docs/INCIDENTS.md, "Linking
//! incidents to companies"): by the exact normalised victim name, or by a cited URL on
//! the victim's own registrable domain. No fuzzy matching; an incident that matches
//! several companies is linked to none and reported as ambiguous. Every link records the
//! rule and the value that made it.

use std::path::Path;

use model::Domain;
pub use model::normalise_name;
use store::Store;

use crate::veris::{VerisError, VerisIncident};

/// The registrable domain (eTLD+1, Public Suffix List) of a URL's host.
pub fn registrable_of_url(url: &str) -> Option<String> {
    let rest = url.trim().split_once("://")?.1;
    let host = rest.split(['/', '?', '#']).next()?.rsplit('@').next()?.split(':').next()?.to_ascii_lowercase();
    let host = host.trim_end_matches('.');
    psl::domain_str(host).map(str::to_owned)
}

/// A link of an incident to a company.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub company: i64,
    pub domain: Option<Domain>,
    /// `name:<normalised name>` or `domain:<registrable domain>`.
    pub linked_by: String,
}

/// What linking one incident found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Linked {
    One(Link),
    /// Several companies match the rule that matched: linked to none.
    Ambiguous(Vec<String>),
    None,
}

/// Links one incident: the name rule first, then the domain rule.
pub async fn link(store: &dyn Store, v: &VerisIncident) -> Result<Linked, store::StoreError> {
    let Some(victim) = v.victim_name.as_deref() else { return Ok(Linked::None) };
    let name = normalise_name(victim);
    if name.is_empty() {
        return Ok(Linked::None);
    }
    // Name: equality of the normalised names the store keeps (AT&T, Procter & Gamble,
    // T-Mobile and J.P. Morgan match however the victim's name was punctuated).
    let by_name = store.companies_by_normalised_name(&name, 50).await?;
    match by_name.as_slice() {
        [c] => {
            return Ok(Linked::One(Link {
                company: c.id,
                domain: c.domain.clone(),
                linked_by: format!("name:{name}"),
            }));
        }
        [] => {}
        many => return Ok(Linked::Ambiguous(many.iter().map(|c| c.social_id.to_string()).collect())),
    }
    // Domain: a cited URL on a registrable domain whose first label is the victim's
    // name without spaces (uber.com for "Uber"): the victim's own site, not a news site.
    let squashed: String = name.chars().filter(|c| !c.is_whitespace()).collect();
    let references: Vec<String> =
        v.incident.references.as_array().into_iter().flatten().filter_map(|r| r.as_str().map(str::to_owned)).collect();
    for url in references {
        let Some(reg) = registrable_of_url(&url) else { continue };
        if reg.split('.').next() != Some(squashed.as_str()) {
            continue;
        }
        let Ok(domain) = Domain::parse(&reg) else { continue };
        if let Some(c) = store.company_by_domain(&domain).await? {
            return Ok(Linked::One(Link { company: c.id, domain: Some(domain), linked_by: format!("domain:{reg}") }));
        }
    }
    Ok(Linked::None)
}

/// What an import did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct VerisReport {
    pub files_read: usize,
    pub stored: usize,
    pub linked_by_name: usize,
    pub linked_by_domain: usize,
    pub ambiguous: Vec<(String, Vec<String>)>,
    pub errors: Vec<String>,
}

/// Imports VERIS incidents from directories and files: each is stored (replacing the
/// same id) and linked to a company where the rules allow.
pub async fn import_veris(store: &dyn Store, paths: &[&Path]) -> Result<VerisReport, VerisError> {
    let mut report = VerisReport::default();
    let mut incidents = Vec::new();
    for path in paths {
        if path.is_dir() {
            let (found, errors) = crate::veris::load_dir(path)?;
            report.files_read += found.len() + errors.len();
            incidents.extend(found);
            report.errors.extend(errors.iter().map(ToString::to_string));
        } else {
            report.files_read += 1;
            let name = path.display().to_string();
            let parsed = std::fs::read_to_string(path)
                .map_err(|e| VerisError::Io(name.clone(), e))
                .and_then(|text| crate::veris::parse_incident(&text, &name));
            match parsed {
                Ok(v) => incidents.push(v),
                Err(e) => report.errors.push(e.to_string()),
            }
        }
    }
    store_and_link(store, &incidents, &mut report).await?;
    Ok(report)
}

/// Imports VERIS incidents given as texts, each with a name for errors (the lab's
/// incidents, built into the binary): stored and linked as [`import_veris`] does.
pub async fn import_veris_texts(store: &dyn Store, texts: &[(&str, &str)]) -> Result<VerisReport, VerisError> {
    let mut report = VerisReport { files_read: texts.len(), ..Default::default() };
    let mut incidents = Vec::new();
    for (name, text) in texts {
        match crate::veris::parse_incident(text, name) {
            Ok(v) => incidents.push(v),
            Err(e) => report.errors.push(e.to_string()),
        }
    }
    store_and_link(store, &incidents, &mut report).await?;
    Ok(report)
}

async fn store_and_link(
    store: &dyn Store,
    incidents: &[VerisIncident],
    report: &mut VerisReport,
) -> Result<(), VerisError> {
    for v in incidents {
        let linked = link(store, v)
            .await
            .map_err(|e| VerisError::Bad { file: v.incident.incident_id.clone(), message: e.to_string() })?;
        let (company, domain, by) = match &linked {
            Linked::One(l) => {
                if l.linked_by.starts_with("name:") {
                    report.linked_by_name += 1;
                } else {
                    report.linked_by_domain += 1;
                }
                (Some(l.company), l.domain.as_ref(), Some(l.linked_by.as_str()))
            }
            Linked::Ambiguous(ids) => {
                report.ambiguous.push((v.incident.incident_id.clone(), ids.clone()));
                (None, None, None)
            }
            Linked::None => (None, None, None),
        };
        store
            .save_incident(&v.incident, company, domain, by)
            .await
            .map_err(|e| VerisError::Bad { file: v.incident.incident_id.clone(), message: e.to_string() })?;
        report.stored += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registrable_domains_of_urls() {
        assert_eq!(
            registrable_of_url("https://www.uber.com/newsroom/2016-data-incident/").as_deref(),
            Some("uber.com")
        );
        assert_eq!(registrable_of_url("http://news.bbc.co.uk/x").as_deref(), Some("bbc.co.uk"));
        assert_eq!(registrable_of_url("not a url"), None);
    }
}
