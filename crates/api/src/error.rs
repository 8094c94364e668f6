//! Error bodies exactly as docs/API.md ("Errors") states them.

use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::{IntoResponses, ToSchema};

pub const INTERNAL: &str = "Something went wrong, please contact support";
pub const INVALID_REQUEST: &str = "Invalid request";
pub const COMPANY_NOT_FOUND: &str = "Company not found";
pub const NOT_PROCESSED: &str = "social_id not processed yet, a scan will start soon";
pub const KEY_REQUIRED: &str = "API Key is required";
pub const KEY_INVALID: &str = "Invalid API key";
pub const KEY_DEACTIVATED: &str = "API key is deactivated";
pub const NOT_ALLOWED: &str = "API key is not allowed to call this operation";
pub const PER_MINUTE: &str = "Too many API requests per minute";
pub const MONTHLY: &str = "API rate limit exceeded";
pub const ROUTE_NOT_FOUND: &str = "404 Route Not Found";
pub const METHOD_NOT_ALLOWED: &str = "405 Method Not Allowed";
pub const UNAVAILABLE: &str = "The service is busy, please try again";
pub const TOO_LARGE: &str = "The request body is over 64 KB";
pub const BULK_TOO_LARGE: &str = "The request body is over 1 MB";
/// A key with [`crate::compute::PER_KEY`] simulations in flight asks for one more.
pub const COMPUTATIONS_PER_KEY: &str = "Too many predictions in flight for this API key";

/// `{"error": "..."}`: the body of every 400, 401, 403, 429 and 500.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: String,
}

/// `{"error_msg": "404 Route Not Found"}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct RouteNotFound {
    pub error_msg: String,
}

#[derive(Debug)]
pub enum ApiError {
    BadRequest(String),
    Unauthorized(&'static str),
    Forbidden,
    RouteNotFound,
    MethodNotAllowed,
    /// The server is saturated (no database connection within the wait): try again.
    Unavailable,
    TooManyRequests {
        message: &'static str,
        retry_after: Duration,
    },
    Internal(String),
    /// A request body over its limit ([`crate::BODY_LIMIT`], [`crate::BULK_BODY_LIMIT`]).
    TooLarge(&'static str),
}

impl ApiError {
    pub fn bad(msg: impl Into<String>) -> Self {
        ApiError::BadRequest(msg.into())
    }

    pub fn required(param: &str) -> Self {
        ApiError::BadRequest(format!("{param} is a required parameter"))
    }

    pub fn not_valid(param: &str) -> Self {
        ApiError::BadRequest(format!("{param} is not valid"))
    }

    /// A query parameter the operation does not take (the OpenAPI document lists those it
    /// does).
    pub fn unknown_parameter(param: &str) -> Self {
        ApiError::BadRequest(format!("Unknown parameter: {param}"))
    }
}

impl From<store::StoreError> for ApiError {
    fn from(e: store::StoreError) -> Self {
        ApiError::from(&e)
    }
}

/// A store error shared by several requests (one call answering them all).
impl From<&store::StoreError> for ApiError {
    fn from(e: &store::StoreError) -> Self {
        match e {
            store::StoreError::Busy => ApiError::Unavailable,
            e => ApiError::Internal(e.to_string()),
        }
    }
}

fn error_body(status: StatusCode, msg: &str) -> Response {
    (status, axum::Json(ErrorBody { error: msg.to_owned() })).into_response()
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match self {
            ApiError::BadRequest(m) => error_body(StatusCode::BAD_REQUEST, &m),
            ApiError::Unauthorized(m) => error_body(StatusCode::UNAUTHORIZED, m),
            ApiError::Forbidden => error_body(StatusCode::FORBIDDEN, NOT_ALLOWED),
            ApiError::RouteNotFound => {
                (StatusCode::NOT_FOUND, axum::Json(RouteNotFound { error_msg: ROUTE_NOT_FOUND.to_owned() }))
                    .into_response()
            }
            ApiError::MethodNotAllowed => {
                (StatusCode::METHOD_NOT_ALLOWED, axum::Json(RouteNotFound { error_msg: METHOD_NOT_ALLOWED.to_owned() }))
                    .into_response()
            }
            ApiError::Unavailable => {
                let mut resp = error_body(StatusCode::SERVICE_UNAVAILABLE, UNAVAILABLE);
                resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                resp
            }
            ApiError::TooManyRequests { message, retry_after } => {
                let mut resp = error_body(StatusCode::TOO_MANY_REQUESTS, message);
                let secs = retry_after.as_secs().max(1);
                if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
                    resp.headers_mut().insert(header::RETRY_AFTER, v);
                }
                resp
            }
            ApiError::TooLarge(m) => error_body(StatusCode::PAYLOAD_TOO_LARGE, m),
            ApiError::Internal(detail) => {
                tracing::error!(%detail, "request failed");
                error_body(StatusCode::INTERNAL_SERVER_ERROR, INTERNAL)
            }
        }
    }
}

/// The router's fallback: unknown paths.
pub async fn route_not_found() -> ApiError {
    ApiError::RouteNotFound
}

/// A known path with another method (TRACE included: nothing is echoed). The router
/// adds the `Allow` header naming the path's methods.
pub async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}

/// What a panic in a handler turns into: a 500 that leaks nothing.
pub fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    tracing::error!("handler panicked");
    error_body(StatusCode::INTERNAL_SERVER_ERROR, INTERNAL)
}

#[cfg(test)]
mod busy_tests {
    use super::*;

    #[test]
    fn a_busy_store_is_a_503_with_retry_after() {
        let response = ApiError::from(store::StoreError::Busy).into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers().get(header::RETRY_AFTER).and_then(|v| v.to_str().ok()), Some("1"));
        let other = ApiError::from(store::StoreError::Corrupt("x".into())).into_response();
        assert_eq!(other.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }
}

/// The error statuses every operation may answer with.
#[derive(IntoResponses)]
#[allow(dead_code)]
pub enum CommonErrors {
    /// Missing or invalid parameter, unknown company, company not processed yet.
    #[response(status = 400)]
    BadRequest(ErrorBody),
    /// Missing, invalid or deactivated API key.
    #[response(status = 401)]
    Unauthorized(ErrorBody),
    /// The key may not call this operation or see this company.
    #[response(status = 403)]
    Forbidden(ErrorBody),
    /// Per-minute limit or monthly quota reached, or too many predictions in flight for the
    /// key; see the Retry-After header.
    #[response(status = 429)]
    TooManyRequests(ErrorBody),
    /// Unexpected failure.
    #[response(status = 500)]
    Internal(ErrorBody),
}
