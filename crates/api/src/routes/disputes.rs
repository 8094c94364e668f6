//! Disputes and footprint corrections (extensions of the Monitor group): a monitor key
//! disputes a finding of its company or a subsidiary, lists its disputes, adds assets to
//! its footprint and asks for assets to be removed. docs/API.md, "Disputes".

use axum::Json;
use axum::extract::State;
use utoipa::ToSchema;

use model::{Company, DisputeReason, DisputeState, Domain, FootprintAsset, SocialId};

use super::OwnUnrated;
use crate::AppState;
use crate::error::{ApiError, CommonErrors};
use crate::params::{PageQuery, Params, Sent};
use crate::responses::{DisputeAnswer, DisputeOut, DisputesOut, MessageOut};

/// Assets a company may add to its footprint in all (each queues a scan).
pub const MAX_ADDED_ASSETS: usize = 100;
/// Open disputes a company may have at once (each waits for an operator or a rescan):
/// a key cannot flood the operators' queue.
pub const MAX_OPEN_DISPUTES: u64 = 200;
const OPEN_EXCEEDED: &str = "Too many open disputes for this company: wait for the decisions of those open";
/// Footprint additions a company may have waiting for an operator at once (each names
/// another company's asset): a key cannot flood the operators' queue.
pub const MAX_PENDING_ASSETS: u64 = 20;
const PENDING_EXCEEDED: &str =
    "Too many footprint additions of this company wait for an operator: wait for the decisions of those pending";
/// Assets a company may add per UTC day.
pub const MAX_ADDED_PER_DAY: usize = 20;
const ADDED_EXCEEDED: &str = "Too many assets added to this company's footprint today";

/// The body of POST /monitor-dispute-finding.
#[derive(serde::Deserialize, ToSchema)]
pub struct DisputeBody<'a> {
    /// The finding's `id` (as the score and findings answers give it).
    #[schema(value_type = i64, required = true)]
    #[serde(default, borrow)]
    finding_id: Option<Sent<'a>>,
    /// `fixed` (a rescan decides at once), `compensating_control`, `not_ours` or
    /// `incorrect` (an operator decides).
    #[schema(value_type = String, required = true)]
    #[serde(default, borrow)]
    reason: Option<Sent<'a>>,
    /// Why, in at most 2,000 characters.
    #[schema(value_type = String, required = true, max_length = 2000)]
    #[serde(default, borrow)]
    explanation: Option<Sent<'a>>,
}

/// The body of POST /monitor-add-asset and /monitor-remove-asset.
#[derive(serde::Deserialize, ToSchema)]
pub struct AssetBody<'a> {
    /// A domain or host name, an IP address, or a CIDR range of at most 256 addresses.
    #[schema(value_type = String, required = true)]
    #[serde(default, borrow)]
    asset: Option<Sent<'a>>,
    /// Why, in at most 2,000 characters.
    #[schema(value_type = String, required = true, max_length = 2000)]
    #[serde(default, borrow)]
    reason: Option<Sent<'a>>,
    /// The company (the key's own or one of its subsidiaries); the key's own by default.
    #[schema(value_type = Option<String>)]
    #[serde(default, borrow)]
    social_id: Option<Sent<'a>>,
}

fn body<'a, T: serde::Deserialize<'a>>(raw: &'a [u8]) -> Result<T, ApiError> {
    crate::params::object(raw)
        .ok_or_else(|| ApiError::bad("The request body must be one JSON object, each field at most once"))
}

fn string<'a>(v: Option<&'a Sent>, field: &str) -> Result<&'a str, ApiError> {
    match v.map(|v| v.text()) {
        None => Err(ApiError::required(field)),
        Some(Some(s)) if s.trim().is_empty() => Err(ApiError::required(field)),
        Some(Some(s)) => Ok(s),
        Some(None) => Err(ApiError::not_valid(field)),
    }
}

fn explanation(v: Option<&Sent>, field: &str) -> Result<String, ApiError> {
    model::dispute::explanation(string(v, field)?).map_err(|e| ApiError::bad(format!("{field}: {e}")))
}

/// The answer to a dispute the company has no room for ([`MAX_OPEN_DISPUTES`] open).
fn too_many_open() -> ApiError {
    ApiError::TooManyRequests { message: OPEN_EXCEEDED, retry_after: std::time::Duration::from_secs(3600) }
}

/// The ids of a key's company and its subsidiaries.
pub(crate) async fn family_ids(app: &AppState, own: &Company) -> Result<Vec<i64>, ApiError> {
    Ok(super::family(app, &own.social_id).await?.iter().map(|c| c.id).collect())
}

/// Whether `name` lies under (or is) a domain that one of `family` holds on evidence:
/// a name the key's own verified tree covers is the tree's without further proof.
pub(crate) async fn under_verified(app: &AppState, family: &[i64], name: &Domain) -> Result<bool, ApiError> {
    for id in family {
        let claims = app.store().domain_claims(*id).await?;
        if claims.iter().any(|c| c.verified && model::asset_under(name.as_str(), c.name.as_str())) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Who a key is in a dispute's record.
fn key_name(caller: &crate::auth::Caller) -> String {
    caller.key_id.map_or_else(|| "operator".to_owned(), |id| format!("key {id}"))
}

/// The company a body names: the key's own (absent) or one of its subsidiaries.
async fn family_member(app: &AppState, own: &Company, named: Option<&Sent<'_>>) -> Result<Company, ApiError> {
    let raw = match named.map(|v| v.text()) {
        None => return Ok(own.clone()),
        Some(Some(s)) => s,
        Some(None) => return Err(ApiError::not_valid("social_id")),
    };
    let sid = SocialId::parse(raw).map_err(|_| ApiError::not_valid("social_id"))?;
    if sid == own.social_id {
        return Ok(own.clone());
    }
    let not_found = || ApiError::bad(crate::error::COMPANY_NOT_FOUND);
    let c = app.store().company_by_social_id(&sid).await?.ok_or_else(not_found)?;
    if app.store().is_subsidiary(own.id, c.id).await? { Ok(c) } else { Err(not_found()) }
}

/// Disputes a finding of the caller's company or of one of its subsidiaries.
///
/// `fixed` queues a rescan of the finding's host and risk vector at once: the dispute is
/// accepted when the rescan no longer sees the finding and rejected, with what it saw,
/// when it still does. The other reasons wait for an operator. While the dispute is
/// open the finding and its component carry `disputed: true` in every answer.
#[utoipa::path(post, path = "/monitor-dispute-finding", operation_id = "monitor-dispute-finding", tag = "Monitor",
    request_body(content = DisputeBody, content_type = "application/json"),
    responses((status = 200, description = "Dispute opened (extension)", body = DisputeAnswer), CommonErrors))]
pub async fn dispute_finding(
    State(app): State<AppState>,
    OwnUnrated { company: own, caller }: OwnUnrated,
    raw: crate::params::RawBody,
) -> Result<Json<DisputeAnswer>, ApiError> {
    let b: DisputeBody = body(&raw.0)?;
    let finding_id = match b.finding_id.as_ref() {
        None => return Err(ApiError::required("finding_id")),
        Some(Sent::Count(n)) => i64::try_from(*n).ok().filter(|id| *id > 0),
        Some(_) => None,
    }
    .ok_or_else(|| ApiError::not_valid("finding_id"))?;
    let reason =
        DisputeReason::parse(string(b.reason.as_ref(), "reason")?).map_err(|e| ApiError::bad(e.to_string()))?;
    let explanation = explanation(b.explanation.as_ref(), "explanation")?;
    let not_found = || ApiError::bad(format!("Finding {finding_id} not found"));
    // A finding of another company is answered as one that does not exist.
    let stored = app.store().finding_by_id(finding_id).await?.ok_or_else(not_found)?;
    if stored.company != own.id && !app.store().is_subsidiary(own.id, stored.company).await? {
        return Err(not_found());
    }
    let by = key_name(&caller);
    let new = store::NewDispute {
        company: stored.company,
        finding: Some(finding_id),
        asset: &stored.finding.asset,
        reason,
        explanation: &explanation,
        by: &by,
        at: time::OffsetDateTime::now_utc(),
        max_open: MAX_OPEN_DISPUTES,
    };
    let opened = app.store().open_dispute(&new).await?;
    let (dispute, message) = match opened {
        store::Opened::Opened(d) => {
            let message = match (reason, model::dispute::asset_host(&d.asset), d.risk_vector) {
                (DisputeReason::Fixed, Some(host), Some(vector)) => {
                    let job = model::JobSpec::Rescan {
                        social_id: d.company.clone(),
                        subdomain: host.clone(),
                        risk_vector: vector,
                    };
                    app.enqueue(&job).await?;
                    format!(
                        "Dispute {} opened: a rescan of {host} for {vector} is queued; the dispute is accepted if it no \
                         longer sees the finding, rejected with what it saw if it does",
                        d.id
                    )
                }
                _ => format!("Dispute {} opened: an operator will decide it", d.id),
            };
            (d, message)
        }
        store::Opened::AlreadyOpen(d) => {
            let message = format!("Finding {finding_id} is disputed already (dispute {}, {})", d.id, d.reason);
            (d, message)
        }
        store::Opened::FindingClosed { closed_at } => {
            return Err(ApiError::bad(format!(
                "Finding {finding_id} was closed at {}: a scan no longer sees it, so there is nothing to dispute",
                model::timefmt::rfc3339(closed_at.0)
            )));
        }
        store::Opened::NoSuchFinding => return Err(not_found()),
        store::Opened::TooMany => return Err(too_many_open()),
    };
    Ok(Json(DisputeAnswer { message, dispute: DisputeOut::from(&dispute) }))
}

/// The disputes of the caller's company and its subsidiaries, newest first, with their
/// state (`open`, `accepted`, `rejected`) and the decision's note.
#[utoipa::path(get, path = "/monitor-getdisputes", operation_id = "monitor-getdisputes", tag = "Monitor",
    params(PageQuery,
           ("state" = Option<String>, Query, description = "open, accepted or rejected (all by default)")),
    responses((status = 200, description = "Disputes (extension)", body = DisputesOut), CommonErrors))]
pub async fn get_disputes(
    State(app): State<AppState>,
    p: Params,
    OwnUnrated { company: c, .. }: OwnUnrated,
) -> Result<Json<DisputesOut>, ApiError> {
    let page = p.page()?;
    let state = match p.optional("state") {
        None => None,
        Some(s) => Some(DisputeState::parse(s).map_err(|e| ApiError::bad(e.to_string()))?),
    };
    let family: Vec<i64> = super::family(&app, &c.social_id).await?.iter().map(|f| f.id).collect();
    let found = app.store().disputes(Some(&family), state, page).await?;
    Ok(Json(DisputesOut {
        social_id: c.social_id.to_string(),
        disputes: found.items.iter().map(DisputeOut::from).collect(),
        pagination: page.pagination(found.total).into(),
    }))
}

/// The asset a body names, checked: an address must be a public one the scanner may
/// connect to — no private or other special address; in lab mode the lab's loopback
/// addresses as well, and nothing else special (the lab lives on 127.0.0.0/8).
fn asset_of(app: &AppState, raw: Option<&Sent>) -> Result<FootprintAsset, ApiError> {
    let asset = FootprintAsset::parse(string(raw, "asset")?).map_err(|e| ApiError::bad(format!("asset: {e}")))?;
    for ip in asset.addresses() {
        if let Some(why) = model::net::special_range(ip)
            && !(app.config().lab_addresses && ip.is_loopback())
        {
            return Err(ApiError::bad(format!("asset: {ip} is a {why} address; the scanner does not connect to it")));
        }
    }
    Ok(asset)
}

/// Adds an asset (a domain or host name, an address or a range) to the footprint of the
/// caller's company or a subsidiary; its scan is queued at once. The asset answers then
/// attribute what the scan finds on it to the company (source `company`, with the key,
/// the date and the reason).
#[utoipa::path(post, path = "/monitor-add-asset", operation_id = "monitor-add-asset", tag = "Monitor",
    request_body(content = AssetBody, content_type = "application/json"),
    responses((status = 200, description = "Asset added (extension)", body = MessageOut), CommonErrors))]
pub async fn add_asset(
    State(app): State<AppState>,
    OwnUnrated { company: own, caller }: OwnUnrated,
    raw: crate::params::RawBody,
) -> Result<Json<MessageOut>, ApiError> {
    let b: AssetBody = body(&raw.0)?;
    let asset = asset_of(&app, b.asset.as_ref())?;
    let reason = explanation(b.reason.as_ref(), "reason")?;
    let company = family_member(&app, &own, b.social_id.as_ref()).await?;
    let footprint = app.store().footprint(company.id).await?;
    if footprint.iter().any(|c| c.change == "removed" && c.parsed().is_some_and(|x| x.covers(&asset.to_string()))) {
        return Err(ApiError::bad(format!(
            "asset: {asset} was removed from the footprint of {} by an accepted dispute",
            company.social_id
        )));
    }
    // A name another company holds on evidence (a verified domain at, above or below
    // it, or a host its scans attributed) is never taken on a key's word.
    let family = family_ids(&app, &own).await?;
    let held = match &asset {
        FootprintAsset::Name(name) => !app.store().holders_of(name, &family).await?.is_empty(),
        other => !app.store().address_holders(&other.addresses(), &family).await?.is_empty(),
    };
    if held {
        // An operator decides (`rampart footprint pending|approve|reject`); nothing of it
        // is scanned for this company until then.
        let by = key_name(&caller);
        let now = time::OffsetDateTime::now_utc();
        let Some(id) = app.store().request_asset(company.id, &asset, &reason, &by, now, MAX_PENDING_ASSETS).await?
        else {
            return Err(ApiError::TooManyRequests {
                message: PENDING_EXCEEDED,
                retry_after: std::time::Duration::from_secs(3600),
            });
        };
        tracing::info!(request = id, company = %company.social_id, %asset, "footprint addition pending approval");
        return Ok(Json(MessageOut {
            message: format!(
                "{asset} is pending approval (request {id}): an operator must approve adding it to the footprint of \
                 {}; nothing of it is scanned for it until then",
                company.social_id
            ),
        }));
    }
    let verified = match &asset {
        FootprintAsset::Name(name) => under_verified(&app, &family, name).await?,
        _ => true,
    };
    // Each addition queues a scan: a key cannot turn the scanner on the internet at will.
    // The caps are counted and the addition made in one step of the store.
    let now = time::OffsetDateTime::now_utc();
    let by = key_name(&caller);
    let caps = store::FootprintCaps { per_day: MAX_ADDED_PER_DAY as u64, total: MAX_ADDED_ASSETS as u64 };
    match app.store().add_to_footprint(company.id, &asset, &reason, &by, now, verified, caps).await? {
        store::Added::Added => {}
        store::Added::Already => {
            return Ok(Json(MessageOut {
                message: format!("{asset} is in the footprint of {} already", company.social_id),
            }));
        }
        store::Added::TotalFull => {
            return Err(ApiError::bad(format!("A company may add at most {MAX_ADDED_ASSETS} assets")));
        }
        store::Added::DayFull => {
            let tomorrow = now.replace_time(time::Time::MIDNIGHT) + time::Duration::days(1);
            return Err(ApiError::TooManyRequests {
                message: ADDED_EXCEEDED,
                retry_after: (tomorrow - now).unsigned_abs(),
            });
        }
    }
    super::queue_scan(&app, &company).await?;
    let claim = if verified {
        String::new()
    } else {
        format!(
            "; {asset} is the company's claim, not yet verified: it is scanned, but neither found by domain nor shown \
             to underwriters until POST /monitor-verify-domain proves control"
        )
    };
    Ok(Json(MessageOut {
        message: format!("{asset} was added to the footprint of {}; its scan is queued{claim}", company.social_id),
    }))
}

/// Asks for an asset to be removed from the footprint of the caller's company or a
/// subsidiary: a `not_ours` dispute of the asset, which an operator decides. Accepted,
/// the asset leaves the company and its future scans.
#[utoipa::path(post, path = "/monitor-remove-asset", operation_id = "monitor-remove-asset", tag = "Monitor",
    request_body(content = AssetBody, content_type = "application/json"),
    responses((status = 200, description = "Removal asked (extension)", body = DisputeAnswer), CommonErrors))]
pub async fn remove_asset(
    State(app): State<AppState>,
    OwnUnrated { company: own, caller }: OwnUnrated,
    raw: crate::params::RawBody,
) -> Result<Json<DisputeAnswer>, ApiError> {
    let b: AssetBody = body(&raw.0)?;
    let asset = FootprintAsset::parse(string(b.asset.as_ref(), "asset")?)
        .map_err(|e| ApiError::bad(format!("asset: {e}")))?
        .to_string();
    let reason = explanation(b.reason.as_ref(), "reason")?;
    let company = family_member(&app, &own, b.social_id.as_ref()).await?;
    let by = key_name(&caller);
    let new = store::NewDispute {
        company: company.id,
        finding: None,
        asset: &asset,
        reason: DisputeReason::NotOurs,
        explanation: &reason,
        by: &by,
        at: time::OffsetDateTime::now_utc(),
        max_open: MAX_OPEN_DISPUTES,
    };
    let (dispute, message) = match app.store().open_dispute(&new).await? {
        store::Opened::Opened(d) => {
            let m = format!("Removal of {asset} asked (dispute {}): an operator will decide it", d.id);
            (d, m)
        }
        store::Opened::AlreadyOpen(d) => {
            let m = format!("The removal of {asset} is asked already (dispute {})", d.id);
            (d, m)
        }
        store::Opened::TooMany => return Err(too_many_open()),
        other => return Err(ApiError::Internal(format!("a removal came to {other:?}"))),
    };
    Ok(Json(DisputeAnswer { message, dispute: DisputeOut::from(&dispute) }))
}

/// The body of POST /monitor-verify-domain.
#[derive(serde::Deserialize, ToSchema)]
pub struct VerifyBody<'a> {
    /// One of the company's domains (as add-subsidiary or add-asset claimed it).
    #[schema(value_type = String, required = true)]
    #[serde(default, borrow)]
    domain: Option<Sent<'a>>,
    /// The company (the key's own or one of its subsidiaries); the key's own by default.
    #[schema(value_type = Option<String>)]
    #[serde(default, borrow)]
    social_id: Option<Sent<'a>>,
}

/// A fresh challenge token: 128 random bits, hex.
fn challenge_token() -> Result<String, ApiError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| ApiError::Internal(format!("no random source: {e}")))?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("rampart-verify={hex}"))
}

/// Proves control of a domain the company claimed (extension, docs/API.md "Domain
/// ownership"). The first call issues a token; publish it as a TXT record at
/// `_rampart-challenge.<domain>` or as the body of `/.well-known/rampart-challenge` on
/// the domain's web server, and call again: each call queues a check through the
/// scanner's guard. Verified, the domain answers `general-getsocialid-by-domain` and the
/// company's rating is shown to underwriters.
#[utoipa::path(post, path = "/monitor-verify-domain", operation_id = "monitor-verify-domain", tag = "Monitor",
    request_body(content = VerifyBody, content_type = "application/json"),
    responses((status = 200, description = "The claim's state (extension)", body = DomainVerificationOut), CommonErrors))]
pub async fn verify_domain(
    State(app): State<AppState>,
    OwnUnrated { company: own, .. }: OwnUnrated,
    raw: crate::params::RawBody,
) -> Result<Json<DomainVerificationOut>, ApiError> {
    let b: VerifyBody = body(&raw.0)?;
    let name = Domain::parse(string(b.domain.as_ref(), "domain")?).map_err(|_| ApiError::not_valid("domain"))?;
    let company = family_member(&app, &own, b.social_id.as_ref()).await?;
    let claims = app.store().domain_claims(company.id).await?;
    let Some(claim) = claims.iter().find(|c| c.name == name) else {
        return Err(ApiError::bad(format!("domain: {name} is not a domain of {}", company.social_id)));
    };
    let txt_name = format!("_rampart-challenge.{name}");
    let file_url = format!("https://{name}/.well-known/rampart-challenge");
    if claim.verified {
        return Ok(Json(DomainVerificationOut {
            social_id: company.social_id.to_string(),
            domain: name.to_string(),
            state: "verified",
            verified_by: Some(claim.verified_by.clone().unwrap_or_else(|| "operator".to_owned())),
            token: None,
            txt_record: txt_name,
            file_url,
            message: format!("{name} is a verified domain of {}", company.social_id),
        }));
    }
    let issued = claim.challenge.is_some();
    let token = app
        .store()
        .challenge_domain(company.id, &name, &challenge_token()?)
        .await?
        .ok_or_else(|| ApiError::Internal(format!("{name}: no challenge could be kept")))?;
    let queued =
        app.enqueue(&model::JobSpec::Verify { social_id: company.social_id.clone(), domain: name.clone() }).await?;
    let message = if issued {
        let when = if queued { "is queued" } else { "was queued already" };
        format!("{name} is not verified yet: a check for the token {when}; call again to see its state")
    } else {
        format!(
            "Publish the token as a TXT record at {txt_name} or as the body of {file_url}, then call again: each call \
             queues a check"
        )
    };
    Ok(Json(DomainVerificationOut {
        social_id: company.social_id.to_string(),
        domain: name.to_string(),
        state: "unverified",
        verified_by: None,
        token: Some(token),
        txt_record: txt_name,
        file_url,
        message,
    }))
}

/// The answer of POST /monitor-verify-domain.
#[derive(serde::Serialize, ToSchema)]
pub struct DomainVerificationOut {
    pub social_id: String,
    pub domain: String,
    /// `verified` or `unverified`.
    pub state: &'static str,
    /// How it was verified: `operator` (imported or discovered), `dns txt`, `well-known file`.
    pub verified_by: Option<String>,
    /// The token to publish (while unverified).
    pub token: Option<String>,
    /// Where the TXT record goes.
    pub txt_record: String,
    /// Where the file goes (HTTPS, or HTTP).
    pub file_url: String,
    pub message: String,
}
