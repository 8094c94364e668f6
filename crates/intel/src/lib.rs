//! Company intelligence imports: the JSON Lines company format (identity, domains,
//! subsidiaries, assets, findings, ratings, incidents — see docs/IMPORT.md).
//!
//! Imports go through the `Store` trait only; this crate never opens a socket.
//! Every line is validated before anything of it is written, and each line is
//! written in one transaction.

use std::io::BufRead;

use model::{
    Application, CompanyProfile, Domain, DomainAsset, Finding, Incident, NetworkEndpoint, SbomComponent, ScoreSnapshot,
    SocialId,
};
use serde::Deserialize;
use store::{CompanySnapshot, Store, StoreError};

pub mod link;
pub mod sample;
pub mod veris;

/// Longest line accepted in an import file.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("line {line}: {message}")]
    Line { line: usize, message: String },
    #[error("reading input: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One company in the import format.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompanyRecord {
    pub social_id: SocialId,
    pub company_name: String,
    #[serde(default)]
    pub website: String,
    /// The web domain; taken from `website` when absent.
    #[serde(default)]
    pub domain: Option<Domain>,
    #[serde(default)]
    pub industry: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub company_id: Option<String>,
    #[serde(default)]
    pub funding_id: String,
    #[serde(default)]
    pub employees_number: String,
    /// Absent (or null) when the source has no count: stored as unknown, not 0.
    #[serde(default)]
    pub followers_number: Option<i64>,
    #[serde(default)]
    pub naics_code: Option<i64>,
    /// Links this company below a parent imported before it (or already stored).
    #[serde(default)]
    pub parent_social_id: Option<SocialId>,
    #[serde(default)]
    pub domains: Option<Vec<DomainAsset>>,
    /// The DKIM selectors the company signs with (`model::dkim_selectors`): tried first
    /// by its scans; absent leaves the stored ones as they are.
    #[serde(default)]
    pub dkim_selectors: Option<Vec<String>>,
    /// Subsidiaries given inline, each a full record.
    #[serde(default)]
    pub subsidiaries: Vec<CompanyRecord>,
    #[serde(default)]
    pub applications: Option<Vec<Application>>,
    #[serde(default)]
    pub network_endpoints: Option<Vec<NetworkEndpoint>>,
    #[serde(default)]
    pub sbom: Option<Vec<SbomComponent>>,
    #[serde(default)]
    pub findings: Option<Vec<Finding>>,
    #[serde(default)]
    pub scores: Vec<ScoreSnapshot>,
    #[serde(default)]
    pub incidents: Vec<Incident>,
}

impl CompanyRecord {
    fn validate(&self) -> Result<(), String> {
        if self.company_name.trim().is_empty() {
            return Err(format!("{}: company_name is required", self.social_id));
        }
        // The website is shown in answers and pages: parsed as the API parses it, so that
        // markup never enters through an import either.
        if !self.website.is_empty() && model::ids::Website::parse(&self.website).is_err() {
            return Err(format!(
                "{}: website {:?} is not an http(s) URL of a host name with a path of URL-safe characters only",
                self.social_id, self.website
            ));
        }
        if let Some(selectors) = &self.dkim_selectors {
            model::dkim_selectors(selectors).map_err(|e| format!("{}: {e}", self.social_id))?;
        }
        for s in &self.scores {
            if s.components.len() != model::RiskVector::ALL.len() {
                return Err(format!(
                    "{}: a rating must have all twelve components, this one has {}",
                    self.social_id,
                    s.components.len()
                ));
            }
        }
        for sub in &self.subsidiaries {
            if sub.social_id == self.social_id {
                return Err(format!("{}: a company cannot be its own subsidiary", self.social_id));
            }
            sub.validate()?;
        }
        Ok(())
    }

    fn snapshot(&self) -> CompanySnapshot {
        // Normalised; `validate` refused a website that does not parse.
        let website = model::ids::Website::parse(&self.website).ok();
        CompanySnapshot {
            profile: CompanyProfile {
                social_id: Some(self.social_id.clone()),
                company_name: self.company_name.trim().to_owned(),
                website: website.as_ref().map(ToString::to_string).unwrap_or_default(),
                domain: self.domain.clone().or_else(|| website.map(|w| w.domain().clone())),
                industry: self.industry.clone(),
                description: self.description.clone(),
                company_id: self.company_id.clone(),
                funding_id: self.funding_id.clone(),
                employees_number: self.employees_number.clone(),
                followers_number: self.followers_number,
                naics_code: self.naics_code,
            },
            domains: self.domains.clone(),
            applications: self.applications.clone(),
            network_endpoints: self.network_endpoints.clone(),
            sbom: self.sbom.clone(),
            findings: self.findings.clone(),
            scores: self.scores.clone(),
            incidents: self.incidents.clone(),
        }
    }
}

/// What an import did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ImportReport {
    pub lines: usize,
    pub companies: usize,
}

/// Reads lines of at most [`MAX_LINE`] bytes; blank lines and `#` comments are skipped.
fn for_each_line<R: BufRead>(
    mut reader: R,
    mut f: impl FnMut(usize, &str) -> Result<(), ImportError>,
) -> Result<usize, ImportError> {
    let mut buf = String::new();
    let mut n = 0;
    loop {
        buf.clear();
        let read = std::io::Read::take(&mut reader, (MAX_LINE + 1) as u64).read_line(&mut buf)?;
        if read == 0 {
            return Ok(n);
        }
        n += 1;
        if buf.len() > MAX_LINE {
            return Err(ImportError::Line { line: n, message: format!("longer than {MAX_LINE} bytes") });
        }
        let line = buf.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        f(n, line)?;
    }
}

/// Parses a whole company file first, so that a bad line writes nothing.
pub fn parse_companies<R: BufRead>(reader: R) -> Result<Vec<(usize, CompanyRecord)>, ImportError> {
    let mut out = Vec::new();
    for_each_line(reader, |line, text| {
        let rec: CompanyRecord =
            serde_json::from_str(text).map_err(|e| ImportError::Line { line, message: e.to_string() })?;
        rec.validate().map_err(|message| ImportError::Line { line, message })?;
        out.push((line, rec));
        Ok(())
    })?;
    Ok(out)
}

async fn save_tree(
    store: &dyn Store,
    rec: &CompanyRecord,
    line: usize,
    report: &mut ImportReport,
) -> Result<model::Company, ImportError> {
    let company = store.save_company(&rec.snapshot()).await?;
    if let Some(selectors) = &rec.dkim_selectors {
        let selectors =
            model::dkim_selectors(selectors).map_err(|e| ImportError::Line { line, message: e.to_string() })?;
        store.set_dkim_selectors(company.id, &selectors).await?;
    }
    report.companies += 1;
    for sub in &rec.subsidiaries {
        let child = Box::pin(save_tree(store, sub, line, report)).await?;
        store.link_subsidiary(company.id, child.id).await?;
    }
    if let Some(parent) = &rec.parent_social_id {
        let p = store.company_by_social_id(parent).await?.ok_or_else(|| ImportError::Line {
            line,
            message: format!("parent_social_id {parent} is neither stored nor imported before this line"),
        })?;
        store
            .link_subsidiary(p.id, company.id)
            .await
            .map_err(|e| ImportError::Line { line, message: e.to_string() })?;
    }
    Ok(company)
}

/// Imports a company JSON Lines file. Importing the same file twice changes nothing.
pub async fn import_companies<R: BufRead>(store: &dyn Store, reader: R) -> Result<ImportReport, ImportError> {
    let records = parse_companies(reader)?;
    let mut report = ImportReport { lines: records.len(), ..Default::default() };
    for (line, rec) in &records {
        save_tree(store, rec, *line, &mut report).await?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use store::SqliteStore;
    use store::prelude::*;

    async fn memory() -> SqliteStore {
        SqliteStore::open("sqlite::memory:").await.unwrap()
    }

    #[tokio::test]
    async fn sample_loads_and_reloading_changes_nothing() {
        let store = memory().await;
        let first = sample::load(&store).await.unwrap();
        assert_eq!(first.companies, 5);
        let acme = store.company_by_social_id(&SocialId::parse(sample::MOCK_COMPANY).unwrap()).await.unwrap().unwrap();
        let before = store.latest_score(acme.id).await.unwrap();
        let again = sample::load(&store).await.unwrap();
        assert_eq!(again.companies, 5);
        assert_eq!(store.latest_score(acme.id).await.unwrap(), before);
        assert_eq!(store.subsidiaries(acme.id, None).await.unwrap().total, 2);
        assert_eq!(store.score_history(acme.id, 10).await.unwrap().len(), 2);
    }

    #[tokio::test]
    async fn a_bad_line_writes_nothing_and_names_its_line() {
        let store = memory().await;
        let input = "{\"social_id\":\"good\",\"company_name\":\"Good\"}\n\n{\"social_id\":\"bad id\",\"company_name\":\"Bad\"}\n";
        let err = import_companies(&store, input.as_bytes()).await.unwrap_err();
        assert!(err.to_string().starts_with("line 3:"), "{err}");
        assert!(store.company_by_social_id(&SocialId::parse("good").unwrap()).await.unwrap().is_none());
        let typo = "{\"social_id\":\"x\",\"company_nam\":\"X\"}";
        assert!(import_companies(&store, typo.as_bytes()).await.unwrap_err().to_string().contains("unknown field"));
    }

    #[tokio::test]
    async fn parents_link_across_lines() {
        let store = memory().await;
        let input = "{\"social_id\":\"p\",\"company_name\":\"P\",\"website\":\"https://p.example\"}\n{\"social_id\":\"c\",\"company_name\":\"C\",\"parent_social_id\":\"p\"}\n";
        import_companies(&store, input.as_bytes()).await.unwrap();
        let p = store.company_by_social_id(&SocialId::parse("p").unwrap()).await.unwrap().unwrap();
        assert_eq!(p.domain.unwrap().as_str(), "p.example", "domain taken from website");
        assert_eq!(store.subsidiaries(p.id, None).await.unwrap().items[0].social_id.as_str(), "c");
        let orphan = "{\"social_id\":\"o\",\"company_name\":\"O\",\"parent_social_id\":\"nobody\"}";
        assert!(import_companies(&store, orphan.as_bytes()).await.is_err());
    }

    /// A website is parsed as add-subsidiary parses it, with or without a `domain`, and
    /// stored normalised (docs/SECURITY.md §2).
    #[tokio::test]
    async fn websites_are_parsed_and_stored_normalised() {
        let store = memory().await;
        for website in
            ["https://x.example/<script>alert(1)</script>", "https://x.example/\"onload=\"x", "ftp://x.example"]
        {
            for domain in ["", ",\"domain\":\"x.example\""] {
                let line = format!(
                    "{{\"social_id\":\"x\",\"company_name\":\"X\",\"website\":{}{domain}}}",
                    serde_json::to_string(website).unwrap()
                );
                let err = import_companies(&store, line.as_bytes()).await.unwrap_err().to_string();
                assert!(err.starts_with("line 1: x: website"), "{line}: {err}");
            }
        }
        let input = "{\"social_id\":\"w\",\"company_name\":\"W\",\"website\":\"HTTPS://WWW.W.Example/About\"}\n{\"social_id\":\"h\",\"company_name\":\"H\",\"website\":\"www.h.example\",\"domain\":\"h.example\"}\n";
        import_companies(&store, input.as_bytes()).await.unwrap();
        let w = store.company_by_social_id(&SocialId::parse("w").unwrap()).await.unwrap().unwrap();
        assert_eq!((w.website.as_str(), w.domain.unwrap().as_str()), ("https://www.w.example/About", "w.example"));
        let h = store.company_by_social_id(&SocialId::parse("h").unwrap()).await.unwrap().unwrap();
        assert_eq!(h.website, "https://www.h.example");
    }
}
