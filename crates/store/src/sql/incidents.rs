//! [`crate::Incidents`].

use super::*;

#[async_trait]
impl crate::Incidents for Backend {
    async fn save_incident(
        &self,
        incident: &Incident,
        company: Option<i64>,
        domain: Option<&Domain>,
        linked_by: Option<&str>,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO incidents (incident_id, company_id, domain, date_detected, record, linked_by) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (incident_id) DO UPDATE SET company_id = excluded.company_id, \
             domain = excluded.domain, date_detected = excluded.date_detected, record = excluded.record, \
             linked_by = excluded.linked_by",
        )
        .bind(&incident.incident_id)
        .bind(company)
        .bind(domain.map(Domain::as_str))
        .bind(incident.date_detected.map(|d| model::timefmt::format_date(d.0)))
        .bind(to_json(incident)?)
        .bind(linked_by)
        .execute(self.writer())
        .await?;
        Ok(())
    }

    async fn incidents_for_company(&self, company: i64) -> Result<Vec<Incident>> {
        sqlx::query_scalar::<_, String>(
            "SELECT record FROM incidents WHERE company_id = $1 ORDER BY date_detected DESC, incident_id",
        )
        .bind(company)
        .fetch_all(&mut *self.reader().await?)
        .await?
        .iter()
        .map(|r| json(r))
        .collect()
    }

    async fn incidents_for_domain(&self, domain: &Domain) -> Result<Vec<Incident>> {
        sqlx::query_scalar::<_, String>(
            "SELECT record FROM incidents WHERE domain = $1 OR company_id IN \
             (SELECT id FROM companies WHERE domain = $1 UNION SELECT company_id FROM domains WHERE name = $1) \
             ORDER BY date_detected DESC, incident_id",
        )
        .bind(domain.as_str())
        .fetch_all(&mut *self.reader().await?)
        .await?
        .iter()
        .map(|r| json(r))
        .collect()
    }

    async fn incident(&self, incident_id: &str) -> Result<Option<Incident>> {
        if has_nul(incident_id) {
            return Ok(None);
        }
        let rec: Option<String> =
            sqlx::query_scalar("SELECT record FROM incidents WHERE lower(incident_id) = lower($1)")
                .bind(incident_id)
                .fetch_optional(&mut *self.reader().await?)
                .await?;
        rec.as_deref().map(json).transpose()
    }

    async fn incident_company(&self, incident_id: &str) -> Result<Option<i64>> {
        if has_nul(incident_id) {
            return Ok(None);
        }
        let owner: Option<Option<i64>> =
            sqlx::query_scalar("SELECT company_id FROM incidents WHERE lower(incident_id) = lower($1)")
                .bind(incident_id)
                .fetch_optional(&mut *self.reader().await?)
                .await?;
        Ok(owner.flatten())
    }
}
