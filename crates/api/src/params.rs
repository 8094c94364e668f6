//! Query parameters, parsed at the edge into domain types with the spec's messages.

use std::collections::HashMap;

use axum::extract::{FromRequestParts, Query};
use axum::http::request::Parts;
use model::{Domain, Page, RiskVector, SocialId};

use crate::error::ApiError;

/// The query string of a request. A parameter given more than once is refused (400
/// `Invalid request`): the document allows one value, and no value is picked silently.
#[derive(Debug, Default)]
pub struct Params(HashMap<String, String>);

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let Query(pairs) = Query::<Vec<(String, String)>>::try_from_uri(&parts.uri)
            .map_err(|_| ApiError::bad(crate::error::INVALID_REQUEST))?;
        let mut map = HashMap::with_capacity(pairs.len());
        for (k, v) in pairs {
            if map.insert(k, v).is_some() {
                return Err(ApiError::bad(crate::error::INVALID_REQUEST));
            }
        }
        Ok(Params(map))
    }
}

impl Params {
    /// The parameters in one canonical string (sorted), for keys of cached answers.
    pub fn cache_key(&self) -> String {
        let mut pairs: Vec<(&String, &String)> = self.0.iter().collect();
        pairs.sort();
        let mut key = String::new();
        for (k, v) in pairs {
            key.push_str(k);
            key.push('=');
            key.push_str(v);
            key.push('&');
        }
        key
    }
}

/// Largest `limit` the CVE operations accept; larger values are capped.
pub const MAX_LIMIT: u32 = 5000;

impl Params {
    pub fn optional(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(|v| v.trim()).filter(|v| !v.is_empty())
    }

    pub fn required(&self, name: &str) -> Result<&str, ApiError> {
        self.optional(name).ok_or_else(|| ApiError::required(name))
    }

    pub fn social_id(&self) -> Result<SocialId, ApiError> {
        SocialId::parse(self.required("social_id")?).map_err(|_| ApiError::not_valid("social_id"))
    }

    pub fn domain(&self, name: &str) -> Result<Domain, ApiError> {
        Domain::parse(self.required(name)?).map_err(|_| ApiError::not_valid(name))
    }

    pub fn page(&self) -> Result<Page, ApiError> {
        Page::parse(self.0.get("page").map(String::as_str)).map_err(|e| ApiError::bad(e.to_string()))
    }

    /// `limit`: a positive integer, `default` when absent, capped at [`MAX_LIMIT`].
    pub fn limit(&self, default: u32) -> Result<u32, ApiError> {
        match self.0.get("limit") {
            None => Ok(default),
            // What the OpenAPI document says: 1 to 2^31−1 (an int32; an empty value is
            // not one); above MAX_LIMIT the answer is MAX_LIMIT records.
            Some(raw) => match raw.parse::<u32>() {
                Ok(n) if (1..=i32::MAX.unsigned_abs()).contains(&n) => Ok(n.min(MAX_LIMIT)),
                _ => Err(ApiError::bad("limit must be a positive integer")),
            },
        }
    }

    /// `period`: months, 1 to 60, 6 when absent.
    pub fn period(&self) -> Result<u32, ApiError> {
        match self.0.get("period").map(String::as_str) {
            None => Ok(6),
            Some(raw) => raw
                .parse::<u32>()
                .ok()
                .filter(|p| (1..=60).contains(p))
                .ok_or_else(|| ApiError::bad("period must be an integer from 1 to 60 (months)")),
        }
    }

    pub fn risk_vector(&self, name: &str) -> Result<RiskVector, ApiError> {
        RiskVector::parse(self.required(name)?)
            .map_err(|e| ApiError::bad(format!("{name} must be one of: {}", e.allowed)))
    }
}
