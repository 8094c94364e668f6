//! The API, called in-process: each view asks the operations it shows through the API's
//! own router, with the key the browser sent (or none, for a router that trusts its
//! caller), so a view shows exactly what the key may see through the API.

use std::net::SocketAddr;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{HeaderValue, Method, Request, StatusCode, header};
use serde_json::Value;
use tower::ServiceExt;

/// Largest API answer a view reads (a page of SBOM components with their CVEs is the
/// largest, well under this).
const MAX_ANSWER: usize = 8 << 20;

/// The API as one caller reaches it.
#[derive(Clone)]
pub struct Api {
    router: Router,
    key: Option<HeaderValue>,
    peer: Option<ConnectInfo<SocketAddr>>,
}

/// An operation that did not answer 2xx: its status and the API's message.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub status: StatusCode,
    pub message: String,
}

impl Failure {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self { status, message: message.into() }
    }
    fn internal(what: impl std::fmt::Display) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, what.to_string())
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.status.as_u16())
    }
}

impl Api {
    /// `router` is the API's; `key` goes in the `apikey` header of every call; `peer`,
    /// the browser's address, keeps the API's per-address limits on failed keys true.
    pub fn new(router: Router, key: Option<HeaderValue>, peer: Option<ConnectInfo<SocketAddr>>) -> Self {
        Self { router, key, peer }
    }

    pub async fn get(&self, path: &str, query: &[(&str, &str)]) -> Result<Value, Failure> {
        self.call(Method::GET, path, query, None).await
    }

    /// One operation: its JSON answer, or the status and message of its refusal.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Result<Value, Failure> {
        let mut uri = path.to_owned();
        if !query.is_empty() {
            let mut q = form_urlencoded::Serializer::new(String::new());
            for (k, v) in query {
                q.append_pair(k, v);
            }
            uri.push('?');
            uri.push_str(&q.finish());
        }
        let mut request = Request::builder().method(method).uri(uri);
        if let Some(key) = &self.key {
            request = request.header("apikey", key.clone());
        }
        let body = match body {
            Some(v) => {
                request = request.header(header::CONTENT_TYPE, "application/json");
                Body::from(v.to_string())
            }
            None => Body::empty(),
        };
        let mut request = request.body(body).map_err(Failure::internal)?;
        if let Some(peer) = self.peer {
            request.extensions_mut().insert(peer);
        }
        let Ok(response) = self.router.clone().oneshot(request).await;
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), MAX_ANSWER).await.map_err(Failure::internal)?;
        let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if status.is_success() {
            return Ok(value);
        }
        let message = ["error", "error_msg", "message"]
            .iter()
            .find_map(|k| value.get(k).and_then(Value::as_str))
            .map(str::to_owned)
            .unwrap_or_else(|| status.canonical_reason().unwrap_or("error").to_owned());
        Err(Failure { status, message })
    }
}
