//! Public incident history, linked to companies and domains.

use model::{Domain, Incident};

use crate::Result;
use async_trait::async_trait;

/// Public incident history, linked to companies and domains.
#[async_trait]
pub trait Incidents: Send + Sync + 'static {
    /// Stores an incident (replacing one with the same id), linked to a company and a
    /// domain when known, with how the link was made.
    async fn save_incident(
        &self,
        incident: &Incident,
        company: Option<i64>,
        domain: Option<&Domain>,
        linked_by: Option<&str>,
    ) -> Result<()>;

    async fn incidents_for_company(&self, company: i64) -> Result<Vec<Incident>>;

    async fn incidents_for_domain(&self, domain: &Domain) -> Result<Vec<Incident>>;

    /// The incident with this id, ignoring ASCII case (VERIS writes lower case).
    async fn incident(&self, incident_id: &str) -> Result<Option<Incident>>;

    /// The company an incident is linked to (`None`: unknown incident or not linked).
    async fn incident_company(&self, incident_id: &str) -> Result<Option<i64>>;
}
