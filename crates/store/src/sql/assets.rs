//! [`crate::Assets`].

use super::*;
use crate::assets::{rated_component, rated_host};

#[async_trait]
impl crate::Assets for Backend {
    async fn domains(&self, company: i64) -> Result<Vec<DomainAsset>> {
        sqlx::query("SELECT name, attribution FROM domains WHERE company_id = $1 ORDER BY name")
            .bind(company)
            .fetch_all(&mut *self.reader().await?)
            .await?
            .iter()
            .map(|r| {
                let n: String = r.try_get("name")?;
                Ok(DomainAsset {
                    name: Domain::parse(&n).map_err(|_| corrupt("domain", &n))?,
                    attribution: r.try_get("attribution")?,
                })
            })
            .collect()
    }

    async fn counts(&self, company: i64) -> Result<CompanyCounts> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT (SELECT count(*) FROM applications a WHERE company_id = $1 AND {apps}) AS apps, \
                 (SELECT count(*) FROM network_endpoints e WHERE company_id = $1 AND {eps}) AS eps, \
                 (SELECT count(*) FROM (SELECT ip FROM network_endpoints e WHERE company_id = $1 AND {eps} UNION \
                    {addresses}) a) AS ips, \
                 (SELECT count(*) FROM sbom_components c WHERE company_id = $1 AND {sbom}) AS sbom",
            apps = rated_host("a.host", "a.company_id"),
            eps = rated_host("e.host", "e.company_id"),
            addresses = host_addresses(&format!(
                "h.company_id = $1 AND h.addresses <> '' AND {}",
                rated_host("h.name", "h.company_id")
            )),
            sbom = rated_component(),
        )))
        .bind(company)
        .fetch_one(&mut *self.reader().await?)
        .await?;
        let mut findings = BTreeMap::new();
        for s in Severity::ALL {
            findings.insert(*s, 0);
        }
        // The open findings the rating counts: none on an unproven claim (their assets are
        // names, `host:port` or URLs, matched as the rating matches them).
        let unproven = crate::disputes::unproven(&crate::Disputes::domain_claims(self, company).await?);
        for r in sqlx::query(
            "SELECT severity, asset, count(*) AS n FROM findings WHERE company_id = $1 AND closed_at IS NULL GROUP BY severity, asset",
        )
        .bind(company)
        .fetch_all(&mut *self.reader().await?)
        .await?
        {
            let asset: String = r.try_get("asset")?;
            if unproven.iter().any(|d| model::asset_under(&asset, d)) {
                continue;
            }
            let s: String = r.try_get("severity")?;
            *findings.entry(Severity::parse(&s).map_err(|_| corrupt("severity", &s))?).or_default() += count(r.try_get("n")?);
        }
        Ok(CompanyCounts {
            applications: count(row.try_get("apps")?),
            network_endpoints: count(row.try_get("eps")?),
            ip_addresses: count(row.try_get("ips")?),
            sbom_components: count(row.try_get("sbom")?),
            findings,
        })
    }

    async fn applications(&self, company: i64, page: Page) -> Result<Paged<Application>> {
        self.rated_page("applications", "lower(name), host, id", company, page, application_from_row).await
    }

    async fn network_endpoints(&self, company: i64, page: Page) -> Result<Paged<NetworkEndpoint>> {
        self.rated_page("network_endpoints", "ip, port, id", company, page, endpoint_from_row).await
    }

    async fn sbom(&self, company: i64, page: Page, with_cves: bool) -> Result<Paged<SbomComponent>> {
        let filter = if with_cves { 1 } else { 0 };
        let total: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM sbom_components c WHERE company_id = $1 AND ($2 = 0 OR EXISTS (SELECT 1 FROM sbom_cves v WHERE v.component_id = c.id)) AND {}", rated_component())))
            .bind(company)
            .bind(filter)
            .fetch_one(&mut *self.reader().await?)
            .await?;
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT * FROM sbom_components c WHERE company_id = $1 AND ($2 = 0 OR EXISTS (SELECT 1 FROM sbom_cves v WHERE v.component_id = c.id)) AND {} ORDER BY lower(name), version, id LIMIT CAST($3 AS BIGINT) OFFSET $4", rated_component())))
            .bind(company)
            .bind(filter)
            .bind(page.limit())
            .bind(page.offset())
            .fetch_all(&mut *self.reader().await?)
            .await?;
        Ok(Paged { items: self.load_sbom(rows).await?, total: count(total) })
    }

    async fn sbom_by_domain(&self, company: i64, domain: &Domain, page: Page) -> Result<Paged<HostComponents>> {
        let rated = rated_host("h.host", "c.company_id");
        #[rustfmt::skip]
        let hosts_sql = format!("FROM sbom_hosts h JOIN sbom_components c ON c.id = h.component_id \
             WHERE c.company_id = $1 AND (h.host = $2 OR h.host LIKE '%.' || $2) AND {rated}");
        let total: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(DISTINCT h.host) {hosts_sql}")))
            .bind(company)
            .bind(domain.as_str())
            .fetch_one(&mut *self.reader().await?)
            .await?;
        let hosts: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT DISTINCT h.host {hosts_sql} ORDER BY h.host LIMIT CAST($3 AS BIGINT) OFFSET $4"
        )))
        .bind(company)
        .bind(domain.as_str())
        .bind(page.limit())
        .bind(page.offset())
        .fetch_all(&mut *self.reader().await?)
        .await?;
        let mut items = Vec::with_capacity(hosts.len());
        for host in hosts {
            let rows = sqlx::query("SELECT c.* FROM sbom_components c JOIN sbom_hosts h ON h.component_id = c.id WHERE c.company_id = $1 AND h.host = $2 ORDER BY lower(c.name), c.version, c.id")
                .bind(company)
                .bind(&host)
                .fetch_all(&mut *self.reader().await?)
                .await?;
            items.push(HostComponents { host, components: self.load_sbom(rows).await? });
        }
        Ok(Paged { items, total: count(total) })
    }

    async fn record_discovery(
        &self,
        company: i64,
        hosts: &[DiscoveredHost],
        endpoints: &[NetworkEndpoint],
        seen_at: OffsetDateTime,
    ) -> Result<()> {
        let at = rfc3339(seen_at);
        let mut tx = self.begin().await?;
        for h in hosts {
            let addresses: Vec<String> = h.addresses.iter().map(ToString::to_string).collect();
            sqlx::query(
                "INSERT INTO hosts (company_id, name, addresses, source, evidence, first_seen, last_seen) \
                 VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (company_id, name) DO UPDATE SET \
                 addresses = excluded.addresses, source = excluded.source, evidence = excluded.evidence, \
                 last_seen = excluded.last_seen",
            )
            .bind(company)
            .bind(&h.name)
            .bind(addresses.join(","))
            .bind(&h.attribution.source)
            .bind(&h.attribution.evidence)
            .bind(&at)
            .execute(&mut *tx)
            .await?;
        }
        for e in endpoints {
            let updated = sqlx::query(
                "UPDATE network_endpoints SET host = $5, service = $6, product = $7, version = $8, banner = $9, \
                 source = $10, evidence = $11, last_seen = $12 \
                 WHERE company_id = $1 AND ip = $2 AND port = $3 AND protocol = $4",
            )
            .bind(company)
            .bind(e.ip.to_string())
            .bind(i64::from(e.port))
            .bind(&e.protocol)
            .bind(e.host.as_deref())
            .bind(e.service.as_deref())
            .bind(e.product.as_deref())
            .bind(e.version.as_deref())
            .bind(&e.banner)
            .bind(e.attribution.as_ref().map(|a| a.source.as_str()))
            .bind(e.attribution.as_ref().map(|a| a.evidence.as_str()))
            .bind(&at)
            .execute(&mut *tx)
            .await?;
            if updated.rows_affected() == 0 {
                let fresh = NetworkEndpoint {
                    first_seen: OffsetDateTimeText(seen_at),
                    last_seen: OffsetDateTimeText(seen_at),
                    ..e.clone()
                };
                insert_endpoint(&mut tx, company, &fresh).await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }

    async fn record_software(
        &self,
        company: i64,
        applications: &[Application],
        components: &[SbomComponent],
        seen_at: OffsetDateTime,
    ) -> Result<()> {
        let mut tx = self.begin().await?;
        // first_seen of what was seen before, by identity.
        let mut app_seen: BTreeMap<(String, Option<String>, String), String> = BTreeMap::new();
        for r in sqlx::query("SELECT name, version, host, first_seen FROM applications WHERE company_id = $1")
            .bind(company)
            .fetch_all(&mut *tx)
            .await?
        {
            app_seen.insert((r.try_get("name")?, r.try_get("version")?, r.try_get("host")?), r.try_get("first_seen")?);
        }
        let mut comp_seen: BTreeMap<(String, Option<String>), String> = BTreeMap::new();
        for r in sqlx::query("SELECT name, version, first_seen FROM sbom_components WHERE company_id = $1")
            .bind(company)
            .fetch_all(&mut *tx)
            .await?
        {
            comp_seen.insert((r.try_get("name")?, r.try_get("version")?), r.try_get("first_seen")?);
        }
        let first = |known: Option<&String>| -> Result<OffsetDateTimeText> {
            match known {
                Some(t) => ts_text(t),
                None => Ok(OffsetDateTimeText(seen_at)),
            }
        };
        sqlx::query("DELETE FROM applications WHERE company_id = $1").bind(company).execute(&mut *tx).await?;
        sqlx::query("DELETE FROM sbom_components WHERE company_id = $1").bind(company).execute(&mut *tx).await?;
        for a in applications {
            let key = (a.name.clone(), a.version.clone(), a.host.clone());
            let row = Application {
                first_seen: first(app_seen.get(&key))?,
                last_seen: OffsetDateTimeText(seen_at),
                ..a.clone()
            };
            insert_application(&mut tx, company, &row).await?;
        }
        for c in components {
            let key = (c.name.clone(), c.version.clone());
            let row = SbomComponent {
                first_seen: first(comp_seen.get(&key))?,
                last_seen: OffsetDateTimeText(seen_at),
                ..c.clone()
            };
            insert_component(&mut tx, company, &row).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn hosts(&self, company: i64) -> Result<Vec<DiscoveredHost>> {
        sqlx::query("SELECT * FROM hosts WHERE company_id = $1 ORDER BY name")
            .bind(company)
            .fetch_all(&mut *self.reader().await?)
            .await?
            .iter()
            .map(host_from_row)
            .collect()
    }

    async fn owns_host(&self, company: i64, host: &Domain) -> Result<bool> {
        let n: i64 = sqlx::query_scalar(
            "SELECT (SELECT count(*) FROM domains WHERE company_id = $1 AND (name = $2 OR $2 LIKE '%.' || name)) \
             + (SELECT count(*) FROM hosts WHERE company_id = $1 AND name = $2) \
             + (SELECT count(*) FROM findings WHERE company_id = $1 AND asset = $2) \
             + (SELECT count(*) FROM applications WHERE company_id = $1 AND host = $2)",
        )
        .bind(company)
        .bind(host.as_str())
        .fetch_one(&mut *self.reader().await?)
        .await?;
        Ok(n > 0)
    }

    async fn save_detected_software(
        &self,
        company: i64,
        software: &str,
        products: &[(String, String)],
        at: OffsetDateTime,
    ) -> Result<()> {
        let mut tx = self.begin().await?;
        sqlx::query(
            "INSERT INTO detected_software (company_id, software, detected_at) VALUES ($1, $2, $3) \
             ON CONFLICT (company_id) DO UPDATE SET software = excluded.software, detected_at = excluded.detected_at",
        )
        .bind(company)
        .bind(software)
        .bind(rfc3339_micros(at))
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM detected_products WHERE company_id = $1").bind(company).execute(&mut *tx).await?;
        for (vendor, product) in products {
            sqlx::query(
                "INSERT INTO detected_products (company_id, vendor, product) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
            )
            .bind(company)
            .bind(vendor)
            .bind(product)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn detected_software(&self, company: i64) -> Result<Option<String>> {
        Ok(sqlx::query_scalar("SELECT software FROM detected_software WHERE company_id = $1")
            .bind(company)
            .fetch_optional(&mut *self.reader().await?)
            .await?)
    }

    async fn companies_affected_by(&self, cves: &[model::CveId]) -> Result<Vec<(i64, SocialId)>> {
        if cves.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<&str> = cves.iter().map(model::CveId::as_str).collect();
        let rows: Vec<(i64, String)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT c.id, c.social_id FROM companies c WHERE c.id IN (\
               SELECT d.company_id FROM detected_products d JOIN cve_product_index p \
                 ON p.vendor = d.vendor AND p.product = d.product WHERE {indexed} \
               UNION SELECT d.company_id FROM detected_products d JOIN advisories a \
                 ON a.vendor = d.vendor AND a.product = d.product WHERE {advised} \
               UNION SELECT company_id FROM findings WHERE {found} AND closed_at IS NULL) \
             ORDER BY c.id",
            indexed = in_list("p.cve_id", 1),
            advised = in_list("a.cve_id", 1),
            found = in_list("cve", 1),
        )))
        .bind(list(&ids)?)
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.into_iter()
            .map(|(id, social)| Ok((id, SocialId::parse(&social).map_err(|_| corrupt("social id", &social))?)))
            .collect()
    }

    async fn set_component_cves(&self, company: i64, components: &[SbomComponent]) -> Result<()> {
        let mut tx = self.begin().await?;
        for c in components {
            let of = "FROM sbom_components WHERE company_id = $1 AND name = $2 AND version IS NOT DISTINCT FROM $3";
            sqlx::query(sqlx::AssertSqlSafe(format!("DELETE FROM sbom_cves WHERE component_id IN (SELECT id {of})")))
                .bind(company)
                .bind(&c.name)
                .bind(c.version.as_deref())
                .execute(&mut *tx)
                .await?;
            for cve in &c.cves {
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "INSERT INTO sbom_cves (component_id, cve_id, basis) SELECT id, $4, $5 {of} ON CONFLICT DO NOTHING"
                )))
                .bind(company)
                .bind(&c.name)
                .bind(c.version.as_deref())
                .bind(cve.id.as_str())
                .bind(cve.basis.as_str())
                .execute(&mut *tx)
                .await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }
}

impl Backend {
    /// A page of the company's rows of `table` (one with a `host` column) in `order`, and
    /// how many there are: those the rating counts ([`rated_host`]).
    async fn rated_page<T>(
        &self,
        table: &'static str,
        order: &'static str,
        company: i64,
        page: Page,
        decode: fn(&DbRow) -> Result<T>,
    ) -> Result<Paged<T>> {
        let rated = rated_host("r.host", "r.company_id");
        let total: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT count(*) FROM {table} r WHERE company_id = $1 AND {rated}"
        )))
        .bind(company)
        .fetch_one(&mut *self.reader().await?)
        .await?;
        let items = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT * FROM {table} r WHERE company_id = $1 AND {rated} ORDER BY {order} \
             LIMIT CAST($2 AS BIGINT) OFFSET $3"
        )))
        .bind(company)
        .bind(page.limit())
        .bind(page.offset())
        .fetch_all(&mut *self.reader().await?)
        .await?
        .iter()
        .map(decode)
        .collect::<Result<_>>()?;
        Ok(Paged { items, total: count(total) })
    }
}
