//! [`crate::Disputes`]: what a rated company said against a finding or an asset, and
//! its footprint.

use super::*;

fn dispute_from_row(row: &DbRow) -> Result<model::Dispute> {
    use sqlx::Row as _;
    let text = |c: &str| -> Result<String> { Ok(row.try_get::<String, _>(c)?) };
    let sid = text("social_id")?;
    let reason = text("reason")?;
    let state = text("state")?;
    let rv: Option<String> = row.try_get("risk_vector")?;
    let decided: Option<String> = row.try_get("decided_at")?;
    Ok(model::Dispute {
        id: row.try_get("id")?,
        company: model::SocialId::parse(&sid).map_err(|_| corrupt("social_id", &sid))?,
        finding_id: row.try_get("finding_id")?,
        asset: text("asset")?,
        risk_vector: match rv {
            Some(v) => Some(model::RiskVector::parse(&v).map_err(|_| corrupt("risk_vector", &v))?),
            None => None,
        },
        code: row.try_get("code")?,
        title: row.try_get("title")?,
        reason: model::DisputeReason::parse(&reason).map_err(|_| corrupt("reason", &reason))?,
        explanation: text("explanation")?,
        state: model::DisputeState::parse(&state).map_err(|_| corrupt("state", &state))?,
        opened_at: ts_text(&text("opened_at")?)?,
        opened_by: text("opened_by")?,
        decided_at: match decided {
            Some(t) => Some(ts_text(&t)?),
            None => None,
        },
        decided_by: row.try_get("decided_by")?,
        note: row.try_get("note")?,
    })
}

#[async_trait]
impl crate::disputes::Disputes for Backend {
    async fn finding_by_id(&self, id: i64) -> Result<Option<crate::disputes::StoredFinding>> {
        use sqlx::Row as _;
        let mut conn = self.reader().await?;
        let Some(row) = sqlx::query("SELECT * FROM findings WHERE id = $1").bind(id).fetch_optional(&mut *conn).await?
        else {
            return Ok(None);
        };
        let closed: Option<String> = row.try_get("closed_at")?;
        Ok(Some(crate::disputes::StoredFinding {
            company: row.try_get("company_id")?,
            finding: finding_from_row(&row)?,
            closed_at: match closed {
                Some(t) => Some(ts_text(&t)?),
                None => None,
            },
            false_positive: row.try_get("false_positive")?,
        }))
    }

    async fn open_dispute(&self, new: &crate::disputes::NewDispute<'_>) -> Result<crate::disputes::Opened> {
        use crate::disputes::Opened;
        use sqlx::Row as _;
        let mut tx = self.begin().await?;
        // The company's row, locked (a write, on SQLite the database's): the count
        // of open disputes and the insert are one step for every process.
        lock_company(&mut tx, new.company).await?;
        let (asset, vector, code, title) = match new.finding {
            Some(fid) => {
                let Some(row) = sqlx::query(
                    "SELECT asset, risk_vector, code, title, closed_at FROM findings WHERE id = $1 AND company_id = $2",
                )
                .bind(fid)
                .bind(new.company)
                .fetch_optional(&mut *tx)
                .await?
                else {
                    return Ok(Opened::NoSuchFinding);
                };
                if let Some(closed) = row.try_get::<Option<String>, _>("closed_at")? {
                    return Ok(Opened::FindingClosed { closed_at: ts_text(&closed)? });
                }
                sqlx::query("UPDATE findings SET disputed = TRUE WHERE id = $1").bind(fid).execute(&mut *tx).await?;
                (
                    row.try_get::<String, _>("asset")?,
                    Some(row.try_get::<String, _>("risk_vector")?),
                    Some(row.try_get::<String, _>("code")?),
                    Some(row.try_get::<String, _>("title")?),
                )
            }
            None => (new.asset.to_owned(), None, None, None),
        };
        // One open dispute per finding and per asset: the one there is answered
        // (and this transaction, its `disputed` mark, rolled back). Under the
        // company's lock nobody opens one meanwhile; the unique indexes hold it too.
        let existing: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM disputes WHERE state = 'open' AND company_id = $1 \
             AND (finding_id = $2 OR ($2 IS NULL AND finding_id IS NULL AND asset = $3))",
        )
        .bind(new.company)
        .bind(new.finding)
        .bind(&asset)
        .fetch_optional(&mut *tx)
        .await?;
        let open: i64 = sqlx::query_scalar("SELECT count(*) FROM disputes WHERE company_id = $1 AND state = 'open'")
            .bind(new.company)
            .fetch_one(&mut *tx)
            .await?;
        if existing.is_none() && u64::try_from(open).unwrap_or(0) >= new.max_open {
            tx.rollback().await?;
            return Ok(Opened::TooMany);
        }
        let id: Option<i64> = match existing {
            Some(_) => None,
            None => sqlx::query_scalar(
                "INSERT INTO disputes (company_id, finding_id, asset, risk_vector, code, title, reason, explanation, \
                     state, opened_at, opened_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'open', $9, $10) \
                     ON CONFLICT DO NOTHING RETURNING id",
            )
            .bind(new.company)
            .bind(new.finding)
            .bind(&asset)
            .bind(vector)
            .bind(code)
            .bind(title)
            .bind(new.reason.as_str())
            .bind(new.explanation)
            .bind(rfc3339(new.at))
            .bind(new.by)
            .fetch_optional(&mut *tx)
            .await?,
        };
        let Some(id) = id else {
            tx.rollback().await?;
            return match existing {
                Some(id) => match self.dispute(id).await? {
                    Some(d) => Ok(Opened::AlreadyOpen(d)),
                    None => Err(StoreError::NotFound(format!("dispute {id}"))),
                },
                None => Err(StoreError::Invalid("the dispute could not be opened".into())),
            };
        };
        tx.commit().await?;
        match self.dispute(id).await? {
            Some(d) => Ok(Opened::Opened(d)),
            None => Err(StoreError::NotFound(format!("dispute {id}"))),
        }
    }

    async fn disputes(
        &self,
        companies: Option<&[i64]>,
        state: Option<model::DisputeState>,
        page: model::Page,
    ) -> Result<Paged<model::Dispute>> {
        let ids = companies.map(|c| c.iter().map(i64::to_string).collect::<Vec<_>>().join(","));
        // The ids are numbers we hold, written into the statement (no user text).
        let mut filter = String::from(" WHERE ($1 IS NULL OR d.state = $1)");
        if let Some(ids) = &ids {
            filter.push_str(&format!(" AND d.company_id IN ({})", if ids.is_empty() { "-1" } else { ids }));
        }
        let state = state.map(model::DisputeState::as_str);
        let mut conn = self.reader().await?;
        let total: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM disputes d{filter}")))
            .bind(state)
            .fetch_one(&mut *conn)
            .await?;
        let items = sqlx::query(sqlx::AssertSqlSafe(format!(
            "{} {filter} ORDER BY d.id DESC LIMIT CAST($2 AS BIGINT) OFFSET $3",
            crate::disputes::DISPUTE_SELECT
        )))
        .bind(state)
        .bind(page.limit())
        .bind(page.offset())
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(dispute_from_row)
        .collect::<Result<_>>()?;
        Ok(Paged { items, total: u64::try_from(total).unwrap_or(0) })
    }

    async fn dispute(&self, id: i64) -> Result<Option<model::Dispute>> {
        let mut conn = self.reader().await?;
        sqlx::query(sqlx::AssertSqlSafe(format!("{} WHERE d.id = $1", crate::disputes::DISPUTE_SELECT)))
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?
            .as_ref()
            .map(dispute_from_row)
            .transpose()
    }

    async fn decide_dispute(
        &self,
        id: i64,
        decision: &crate::disputes::Decision<'_>,
    ) -> Result<Option<model::Dispute>> {
        let Some(before) = self.dispute(id).await? else { return Ok(None) };
        let mut tx = self.begin().await?;
        let state = if decision.accept { "accepted" } else { "rejected" };
        let at = rfc3339(decision.at);
        let company: Option<i64> = sqlx::query_scalar(
            "UPDATE disputes SET state = $2, decided_at = $3, decided_by = $4, note = $5 \
             WHERE id = $1 AND state = 'open' RETURNING company_id",
        )
        .bind(id)
        .bind(state)
        .bind(&at)
        .bind(decision.by)
        .bind(decision.note)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(company) = company else {
            return Err(StoreError::Invalid(format!("dispute {id} is {} already", before.state)));
        };
        if let Some(fid) = before.finding_id {
            sqlx::query("UPDATE findings SET disputed = FALSE WHERE id = $1").bind(fid).execute(&mut *tx).await?;
            if decision.accept {
                let change = match before.reason {
                    model::DisputeReason::CompensatingControl => {
                        Some(sqlx::query("UPDATE findings SET no_weight = TRUE WHERE id = $1").bind(fid))
                    }
                    model::DisputeReason::Incorrect => Some(
                        sqlx::query(
                            "UPDATE findings SET false_positive = TRUE, closed_at = COALESCE(closed_at, $2) WHERE id = $1",
                        )
                        .bind(fid)
                        .bind(&at),
                    ),
                    model::DisputeReason::Fixed => Some(
                        sqlx::query("UPDATE findings SET closed_at = COALESCE(closed_at, $2) WHERE id = $1")
                            .bind(fid)
                            .bind(&at),
                    ),
                    model::DisputeReason::NotOurs => None,
                };
                if let Some(statement) = change {
                    statement.execute(&mut *tx).await?;
                }
            }
        }
        if decision.accept && before.reason == model::DisputeReason::NotOurs {
            let asset = crate::disputes::removed_asset(&before)
                .ok_or_else(|| StoreError::Invalid(format!("dispute {id}: {:?} names no asset", before.asset)))?;
            sqlx::query(
                "INSERT INTO footprint (company_id, asset, change, reason, changed_by, changed_at, dispute_id) \
                 VALUES ($1, $2, 'removed', $3, $4, $5, $6)",
            )
            .bind(company)
            .bind(asset.to_string())
            .bind(format!("{} (accepted: {})", before.explanation, decision.note))
            .bind(decision.by)
            .bind(&at)
            .bind(id)
            .execute(&mut *tx)
            .await?;
            remove_asset(&mut tx, company, &asset, &at).await?;
        }
        tx.commit().await?;
        self.dispute(id).await
    }

    async fn add_to_footprint(
        &self,
        company: i64,
        asset: &model::FootprintAsset,
        reason: &str,
        by: &str,
        at: time::OffsetDateTime,
        verified: bool,
        caps: crate::disputes::FootprintCaps,
    ) -> Result<crate::disputes::Added> {
        use crate::disputes::Added;
        let mut tx = self.begin().await?;
        // The company's row, locked: the caps are counted and the addition made in
        // one step for every process.
        lock_company(&mut tx, company).await?;
        let added: Vec<(String, String)> =
            sqlx::query_as("SELECT asset, changed_at FROM footprint WHERE company_id = $1 AND change = 'added'")
                .bind(company)
                .fetch_all(&mut *tx)
                .await?;
        let text = asset.to_string();
        let today = rfc3339(at.replace_time(time::Time::MIDNIGHT));
        let verdict = if added.iter().any(|(a, _)| *a == text) {
            Some(Added::Already)
        } else if added.len() as u64 >= caps.total {
            Some(Added::TotalFull)
        } else if added.iter().filter(|(_, t)| *t >= today).count() as u64 >= caps.per_day {
            Some(Added::DayFull)
        } else {
            None
        };
        if let Some(v) = verdict {
            tx.rollback().await?;
            return Ok(v);
        }
        sqlx::query(
            "INSERT INTO footprint (company_id, asset, change, reason, changed_by, changed_at) \
             VALUES ($1, $2, 'added', $3, $4, $5)",
        )
        .bind(company)
        .bind(asset.to_string())
        .bind(reason)
        .bind(by)
        .bind(rfc3339(at))
        .execute(&mut *tx)
        .await?;
        if let model::FootprintAsset::Name(name) = asset {
            let domains: Vec<String> = sqlx::query_scalar("SELECT name FROM domains WHERE company_id = $1")
                .bind(company)
                .fetch_all(&mut *tx)
                .await?;
            if !domains.iter().any(|d| model::asset_under(name.as_str(), d)) {
                sqlx::query(
                    "INSERT INTO domains (company_id, name, attribution, verified) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (company_id, name) DO NOTHING",
                )
                .bind(company)
                .bind(name.as_str())
                .bind(format!("added by the company ({by}): {reason}"))
                .bind(verified)
                .execute(&mut *tx)
                .await?;
            }
        }
        tx.commit().await?;
        Ok(Added::Added)
    }

    async fn holders_of(&self, name: &model::Domain, family: &[i64]) -> Result<Vec<i64>> {
        let mut conn = self.reader().await?;
        let n = name.as_str();
        let rows: Vec<(i64, String)> = sqlx::query_as(
            "SELECT company_id, name FROM domains WHERE verified AND (name = $1 OR name LIKE $2 OR $1 LIKE '%.' || name) \
             UNION SELECT company_id, name FROM hosts WHERE name = $1 OR name LIKE $2",
        )
        .bind(n)
        .bind(format!("%.{n}"))
        .fetch_all(&mut *conn)
        .await?;
        let mut out: Vec<i64> = rows
            .into_iter()
            // LIKE's `_` matches any character: keep what is truly equal, above or below.
            .filter(|(_, held)| model::asset_under(n, held) || model::asset_under(held, n))
            .map(|(id, _)| id)
            .filter(|id| !family.contains(id))
            .collect();
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    async fn address_holders(&self, addresses: &[std::net::IpAddr], family: &[i64]) -> Result<Vec<i64>> {
        if addresses.is_empty() {
            return Ok(Vec::new());
        }
        let list: Vec<String> = (1..=addresses.len()).map(|i| format!("${i}")).collect();
        let sql = format!("SELECT DISTINCT company_id FROM network_endpoints WHERE ip IN ({})", list.join(", "));
        let mut q = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql));
        for a in addresses {
            q = q.bind(a.to_string());
        }
        let mut conn = self.reader().await?;
        let mut out: Vec<i64> = q.fetch_all(&mut *conn).await?.into_iter().filter(|id| !family.contains(id)).collect();
        out.sort_unstable();
        Ok(out)
    }

    async fn claim_domain(&self, company: i64, name: &model::Domain, attribution: &str, verified: bool) -> Result<()> {
        let mut tx = self.begin().await?;
        claim(&mut tx, company, name, attribution, verified).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn domain_claims(&self, company: i64) -> Result<Vec<crate::disputes::DomainClaim>> {
        let mut conn = self.reader().await?;
        let rows: Vec<(String, String, bool, Option<String>, Option<String>)> = sqlx::query_as(
            "SELECT name, attribution, verified, challenge, verified_by FROM domains WHERE company_id = $1 ORDER BY name",
        )
        .bind(company)
        .fetch_all(&mut *conn)
        .await?;
        rows.into_iter()
            .map(|(name, attribution, verified, challenge, verified_by)| {
                Ok(crate::disputes::DomainClaim {
                    name: model::Domain::parse(&name).map_err(|_| corrupt("domain", &name))?,
                    attribution,
                    verified,
                    challenge,
                    verified_by,
                })
            })
            .collect()
    }

    async fn challenge_domain(&self, company: i64, name: &model::Domain, token: &str) -> Result<Option<String>> {
        let mut tx = self.begin().await?;
        sqlx::query("UPDATE domains SET challenge = $3 WHERE company_id = $1 AND name = $2 AND challenge IS NULL")
            .bind(company)
            .bind(name.as_str())
            .bind(token)
            .execute(&mut *tx)
            .await?;
        let issued: Option<Option<String>> =
            sqlx::query_scalar("SELECT challenge FROM domains WHERE company_id = $1 AND name = $2")
                .bind(company)
                .bind(name.as_str())
                .fetch_optional(&mut *tx)
                .await?;
        tx.commit().await?;
        Ok(issued.flatten())
    }

    async fn reserve_creation(
        &self,
        key: i64,
        since: time::OffsetDateTime,
        at: time::OffsetDateTime,
        cap: u64,
    ) -> Result<bool> {
        let mut tx = self.begin().await?;
        if creations_since(&mut tx, key, since).await? >= cap {
            tx.rollback().await?;
            return Ok(false);
        }
        record_creation(&mut tx, key, &rfc3339(at)).await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn request_asset(
        &self,
        company: i64,
        asset: &model::FootprintAsset,
        reason: &str,
        by: &str,
        at: time::OffsetDateTime,
        max_pending: u64,
    ) -> Result<Option<i64>> {
        let mut tx = self.begin().await?;
        lock_company(&mut tx, company).await?;
        // One pending request per company and asset: the one there is answered.
        let pending: Vec<(i64, String)> =
            sqlx::query_as("SELECT id, asset FROM asset_requests WHERE company_id = $1 AND state = 'pending'")
                .bind(company)
                .fetch_all(&mut *tx)
                .await?;
        let text = asset.to_string();
        if let Some((id, _)) = pending.iter().find(|(_, a)| *a == text) {
            tx.rollback().await?;
            return Ok(Some(*id));
        }
        if pending.len() as u64 >= max_pending {
            tx.rollback().await?;
            return Ok(None);
        }
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO asset_requests (company_id, asset, reason, requested_by, requested_at) \
             VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .bind(company)
        .bind(&text)
        .bind(reason)
        .bind(by)
        .bind(rfc3339(at))
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Some(id))
    }

    async fn asset_requests(&self, all: bool) -> Result<Vec<crate::disputes::AssetRequest>> {
        let mut conn = self.reader().await?;
        read_asset_requests(&mut conn, all, None).await
    }

    async fn decide_asset_request(
        &self,
        id: i64,
        approve: bool,
        note: &str,
        at: time::OffsetDateTime,
    ) -> Result<Option<crate::disputes::AssetRequest>> {
        let mut tx = self.begin().await?;
        let row: Option<(i64, String, String)> =
            sqlx::query_as("SELECT company_id, asset, reason FROM asset_requests WHERE id = $1 AND state = 'pending'")
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?;
        let Some((company, asset, reason)) = row else {
            tx.rollback().await?;
            return Ok(None);
        };
        let state = if approve { "approved" } else { "rejected" };
        let at = rfc3339(at);
        sqlx::query("UPDATE asset_requests SET state = $2, decided_at = $3, note = $4 WHERE id = $1")
            .bind(id)
            .bind(state)
            .bind(&at)
            .bind(note)
            .execute(&mut *tx)
            .await?;
        if approve {
            let parsed = model::FootprintAsset::parse(&asset)
                .map_err(|e| StoreError::Invalid(format!("asset request {id}: {e}")))?;
            let why = format!("{reason} (approved by an operator: {note})");
            sqlx::query(
                "INSERT INTO footprint (company_id, asset, change, reason, changed_by, changed_at) \
                 VALUES ($1, $2, 'added', $3, 'operator', $4)",
            )
            .bind(company)
            .bind(&asset)
            .bind(&why)
            .bind(&at)
            .execute(&mut *tx)
            .await?;
            if let model::FootprintAsset::Name(name) = parsed {
                sqlx::query(
                    "INSERT INTO domains (company_id, name, attribution, verified, verified_by) \
                     VALUES ($1, $2, $3, TRUE, 'operator') \
                     ON CONFLICT (company_id, name) DO UPDATE SET verified = TRUE, verified_by = 'operator'",
                )
                .bind(company)
                .bind(name.as_str())
                .bind(format!("added by the company, approved by an operator: {why}"))
                .execute(&mut *tx)
                .await?;
            }
        }
        let decided = read_asset_requests(&mut tx, true, Some(id)).await?.pop();
        tx.commit().await?;
        Ok(decided)
    }

    async fn verify_domain(&self, company: i64, name: &model::Domain, how: &str) -> Result<bool> {
        let mut tx = self.begin().await?;
        let done =
            sqlx::query("UPDATE domains SET verified = TRUE, verified_by = $3 WHERE company_id = $1 AND name = $2")
                .bind(company)
                .bind(name.as_str())
                .bind(how)
                .execute(&mut *tx)
                .await?;
        tx.commit().await?;
        Ok(done.rows_affected() > 0)
    }

    async fn footprint(&self, company: i64) -> Result<Vec<model::FootprintChange>> {
        use sqlx::Row as _;
        let mut conn = self.reader().await?;
        sqlx::query(
            "SELECT asset, change, reason, changed_by, changed_at, dispute_id FROM footprint \
             WHERE company_id = $1 ORDER BY id",
        )
        .bind(company)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|r| {
            Ok(model::FootprintChange {
                asset: r.try_get("asset")?,
                change: r.try_get("change")?,
                reason: r.try_get("reason")?,
                by: r.try_get("changed_by")?,
                at: ts_text(&r.try_get::<String, _>("changed_at")?)?,
                dispute_id: r.try_get("dispute_id")?,
            })
        })
        .collect()
    }

    async fn false_positives(&self) -> Result<Vec<(String, u64)>> {
        let mut conn = self.reader().await?;
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "SELECT code, count(*) FROM findings WHERE false_positive = TRUE GROUP BY code ORDER BY count(*) DESC, code",
        )
        .fetch_all(&mut *conn)
        .await?;
        Ok(rows.into_iter().map(|(c, n)| (c, u64::try_from(n).unwrap_or(0))).collect())
    }

    async fn disputed_vectors(&self, company: i64) -> Result<Vec<model::RiskVector>> {
        let mut conn = self.reader().await?;
        let rows: Vec<String> = sqlx::query_scalar(
            "SELECT DISTINCT risk_vector FROM findings WHERE company_id = $1 AND closed_at IS NULL AND disputed = TRUE",
        )
        .bind(company)
        .fetch_all(&mut *conn)
        .await?;
        rows.iter().map(|v| model::RiskVector::parse(v).map_err(|_| corrupt("risk_vector", v))).collect()
    }

    async fn rated_population(&self) -> Result<Vec<crate::disputes::RatedCompany>> {
        let mut conn = self.reader().await?;
        let rows: Vec<(i64, Option<i64>, String, i64)> = sqlx::query_as(
            "SELECT c.id, c.naics_code, c.employees_number, s.score FROM scores s JOIN companies c ON c.id = s.company_id \
             WHERE s.scanned_at = (SELECT max(s2.scanned_at) FROM scores s2 WHERE s2.company_id = s.company_id)",
        )
        .fetch_all(&mut *conn)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(id, naics_code, employees, score)| crate::disputes::RatedCompany {
                id,
                naics_code,
                employees,
                score,
            })
            .collect())
    }
}

/// Locks the company's row for the rest of `tx` (a write: on PostgreSQL the row's
/// lock, on SQLite the database's), so that a cap counted in `tx` and the insert
/// it allows are one step for every process.
async fn lock_company(tx: &mut sqlx::Transaction<'static, Db>, company: i64) -> Result<()> {
    sqlx::query("UPDATE companies SET id = id WHERE id = $1").bind(company).execute(&mut **tx).await?;
    Ok(())
}

/// An `asset_requests` row: id, social_id, asset, reason, requested_by, requested_at,
/// state, note.
type AssetRequestRow = (i64, String, String, String, String, String, String, Option<String>);

/// The asset requests: pending ones only unless `all`, the one `id` when given.
async fn read_asset_requests(
    conn: &mut <Db as sqlx::Database>::Connection,
    all: bool,
    id: Option<i64>,
) -> Result<Vec<crate::disputes::AssetRequest>> {
    let rows: Vec<AssetRequestRow> = sqlx::query_as(
        "SELECT r.id, c.social_id, r.asset, r.reason, r.requested_by, r.requested_at, r.state, r.note \
         FROM asset_requests r JOIN companies c ON c.id = r.company_id \
         WHERE ($1 OR r.state = 'pending') AND ($2 IS NULL OR r.id = $2) ORDER BY r.id",
    )
    .bind(all)
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    rows.into_iter()
        .map(|(id, sid, asset, reason, requested_by, requested_at, state, note)| {
            Ok(crate::disputes::AssetRequest {
                id,
                company: model::SocialId::parse(&sid).map_err(|_| corrupt("social_id", &sid))?,
                asset,
                reason,
                requested_by,
                requested_at,
                state,
                note,
            })
        })
        .collect()
}

/// Removes what `asset` covers from the company: hosts, endpoints, applications,
/// SBOM host links and domains; open findings on it are closed at `at`.
async fn remove_asset(
    tx: &mut sqlx::Transaction<'static, Db>,
    company: i64,
    asset: &model::FootprintAsset,
    at: &str,
) -> Result<()> {
    let covered_ids = |rows: Vec<(i64, String)>| -> Vec<i64> {
        rows.into_iter().filter(|(_, a)| asset.covers(a)).map(|(id, _)| id).collect()
    };
    let delete = |table: &str, ids: &[i64]| {
        format!(
            "DELETE FROM {table} WHERE id IN ({})",
            if ids.is_empty() { "-1".to_owned() } else { ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",") }
        )
    };
    let hosts: Vec<(i64, String)> =
        sqlx::query_as("SELECT id, name FROM hosts WHERE company_id = $1").bind(company).fetch_all(&mut **tx).await?;
    // A host whose every address the asset covers goes with it.
    let host_ids = covered_ids(hosts);
    sqlx::query(sqlx::AssertSqlSafe(delete("hosts", &host_ids))).execute(&mut **tx).await?;
    let endpoints: Vec<(i64, String, Option<String>)> =
        sqlx::query_as("SELECT id, ip, host FROM network_endpoints WHERE company_id = $1")
            .bind(company)
            .fetch_all(&mut **tx)
            .await?;
    let endpoint_ids: Vec<i64> = endpoints
        .into_iter()
        .filter(|(_, ip, host)| asset.covers(ip) || host.as_deref().is_some_and(|h| asset.covers(h)))
        .map(|(id, _, _)| id)
        .collect();
    sqlx::query(sqlx::AssertSqlSafe(delete("network_endpoints", &endpoint_ids))).execute(&mut **tx).await?;
    let apps: Vec<(i64, String)> = sqlx::query_as("SELECT id, host FROM applications WHERE company_id = $1")
        .bind(company)
        .fetch_all(&mut **tx)
        .await?;
    let app_ids = covered_ids(apps);
    sqlx::query(sqlx::AssertSqlSafe(delete("applications", &app_ids))).execute(&mut **tx).await?;
    let domains: Vec<(i64, String)> =
        sqlx::query_as("SELECT id, name FROM domains WHERE company_id = $1").bind(company).fetch_all(&mut **tx).await?;
    let domain_ids = covered_ids(domains);
    sqlx::query(sqlx::AssertSqlSafe(delete("domains", &domain_ids))).execute(&mut **tx).await?;
    if let model::FootprintAsset::Name(name) = asset {
        sqlx::query(
            "DELETE FROM sbom_hosts WHERE (host = $1 OR host LIKE $2) AND component_id IN \
             (SELECT id FROM sbom_components WHERE company_id = $3)",
        )
        .bind(name.as_str())
        .bind(format!("%.{}", name.as_str()))
        .bind(company)
        .execute(&mut **tx)
        .await?;
    }
    let findings: Vec<(i64, String)> =
        sqlx::query_as("SELECT id, asset FROM findings WHERE company_id = $1 AND closed_at IS NULL")
            .bind(company)
            .fetch_all(&mut **tx)
            .await?;
    let finding_ids = covered_ids(findings);
    if !finding_ids.is_empty() {
        let ids = finding_ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE findings SET closed_at = $1, disputed = FALSE WHERE id IN ({ids})"
        )))
        .bind(at)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// Locks the key's row (creations from several processes are counted one at a time) and
/// counts its creations since `since`.
pub(super) async fn creations_since(
    tx: &mut Transaction<'_, Db>,
    key: i64,
    since: time::OffsetDateTime,
) -> Result<u64> {
    sqlx::query("UPDATE api_keys SET id = id WHERE id = $1").bind(key).execute(&mut **tx).await?;
    let made: i64 = sqlx::query_scalar("SELECT count(*) FROM key_creations WHERE key_id = $1 AND created_at >= $2")
        .bind(key)
        .bind(rfc3339(since))
        .fetch_one(&mut **tx)
        .await?;
    Ok(u64::try_from(made).unwrap_or(0))
}

/// Counts one creation of the key at `at`.
pub(super) async fn record_creation(tx: &mut Transaction<'_, Db>, key: i64, at: &str) -> Result<()> {
    sqlx::query("INSERT INTO key_creations (key_id, created_at) VALUES ($1, $2)")
        .bind(key)
        .bind(at)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Attributes `name` to the company (a claim, or verified), or changes how.
pub(super) async fn claim(
    tx: &mut Transaction<'_, Db>,
    company: i64,
    name: &model::Domain,
    attribution: &str,
    verified: bool,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO domains (company_id, name, attribution, verified) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (company_id, name) DO UPDATE SET attribution = excluded.attribution, verified = excluded.verified",
    )
    .bind(company)
    .bind(name.as_str())
    .bind(attribution)
    .bind(verified)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
