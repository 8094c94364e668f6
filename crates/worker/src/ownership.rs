//! Proof of control of a claimed domain (docs/API.md, "Domain ownership"):
//! a `verify` job looks, through the guard, for the token issued to the company in a
//! TXT record at `_rampart-challenge.<domain>` or in the file
//! `/.well-known/rampart-challenge` of the domain's web server (HTTPS, then HTTP; no
//! redirect is followed, the body is bounded), the ways the large platforms take it.
//! Found, the domain becomes the company's on evidence.

use model::{Company, Domain};
use scanner::probes::Context;
use store::Store;

use crate::JobError;

/// The TXT name the token is published at.
pub fn challenge_name(domain: &Domain) -> String {
    format!("_rampart-challenge.{domain}")
}

/// The path of the file the token is published in.
pub const CHALLENGE_PATH: &str = "/.well-known/rampart-challenge";

/// How `domain` proves the company's control, when it does: `dns txt` or
/// `well-known file`.
pub async fn proof(ctx: &Context, domain: &Domain, token: &str) -> Option<&'static str> {
    let dns = ctx.guard.dns();
    if let Ok(records) = dns.txt(&challenge_name(domain)).await
        && records.iter().any(|r| r.trim() == token)
    {
        return Some("dns txt");
    }
    for https in [true, false] {
        let verify = if https { scanner::http::Verify::Yes } else { scanner::http::Verify::No };
        let lab_root = ctx.lab_root.as_deref();
        if let Ok(r) = scanner::http::get(&ctx.guard, lab_root, https, domain.as_str(), CHALLENGE_PATH, verify).await
            && r.status == 200
            && r.body.trim() == token
        {
            return Some("well-known file");
        }
    }
    None
}

/// Runs a `verify` job: the company's claim of `domain` becomes verified when its token
/// is found; otherwise it stays a claim (the job ends; the company may ask again).
pub async fn verify(store: &dyn Store, ctx: &Context, company: &Company, domain: &Domain) -> Result<(), JobError> {
    let claims = store.domain_claims(company.id).await?;
    let Some(claim) = claims.iter().find(|c| &c.name == domain) else {
        return Err(JobError::Payload(format!("{domain} is not a domain of {}", company.social_id)));
    };
    if claim.verified {
        return Ok(());
    }
    let Some(token) = claim.challenge.as_deref() else {
        return Err(JobError::Payload(format!("no challenge was issued for {domain}")));
    };
    match proof(ctx, domain, token).await {
        Some(how) => {
            store.verify_domain(company.id, domain, how).await?;
            tracing::info!(company = %company.social_id, %domain, how, "domain verified");
        }
        None => tracing::info!(company = %company.social_id, %domain, "domain not verified: the token was not found"),
    }
    Ok(())
}
