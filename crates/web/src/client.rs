//! The API, called in-process: each view asks the operations it shows through the API's
//! own router, with the key the browser sent (or none, for a router that trusts its
//! caller), so a view shows exactly what the key may see through the API. Each answer is
//! read as the API's own answer type (`api::responses`), the type the API wrote it from.

use std::net::SocketAddr;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use axum::http::{HeaderValue, Method, Request, StatusCode, header};
use serde::Serialize;
use serde::de::DeserializeOwned;
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

    /// A GET operation's answer, read as the API's answer type `T`.
    pub async fn get<T: DeserializeOwned>(&self, path: &str, query: &[(&str, &str)]) -> Result<T, Failure> {
        self.call(Method::GET, path, query).await
    }

    /// An operation without a body.
    pub async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<T, Failure> {
        read(path, self.send(method, path, query, None).await?)
    }

    /// A POST of `body` as JSON.
    pub async fn post<T: DeserializeOwned>(&self, path: &str, body: &impl Serialize) -> Result<T, Failure> {
        self.json(Method::POST, path, &[], body).await
    }

    /// An operation with `body` as JSON.
    pub async fn json<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: &impl Serialize,
    ) -> Result<T, Failure> {
        let body = serde_json::to_string(body).map_err(Failure::internal)?;
        read(path, self.send(method, path, query, Some(("application/json", body))).await?)
    }

    /// A POST of `body` as `content_type` (CSV rows, say).
    pub async fn post_text<T: DeserializeOwned>(
        &self,
        path: &str,
        content_type: &'static str,
        body: String,
    ) -> Result<T, Failure> {
        read(path, self.send(Method::POST, path, &[], Some((content_type, body))).await?)
    }

    /// A GET operation's 2xx answer as the API sent it (a CSV download, streamed
    /// through: its headers and body unread), or its refusal.
    pub async fn forward(&self, path: &str, query: &[(&str, &str)]) -> Result<axum::response::Response, Failure> {
        let response = self.respond(Method::GET, path, query, None).await?;
        if response.status().is_success() {
            return Ok(response);
        }
        Err(refusal(response).await)
    }

    /// One operation: the body of its 2xx answer, or the status and message of its refusal.
    async fn send(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<(&'static str, String)>,
    ) -> Result<Bytes, Failure> {
        let response = self.respond(method, path, query, body).await?;
        if !response.status().is_success() {
            return Err(refusal(response).await);
        }
        axum::body::to_bytes(response.into_body(), MAX_ANSWER).await.map_err(Failure::internal)
    }

    /// One operation's answer, whatever its status.
    async fn respond(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<(&'static str, String)>,
    ) -> Result<axum::response::Response, Failure> {
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
            Some((content_type, text)) => {
                request = request.header(header::CONTENT_TYPE, content_type);
                Body::from(text)
            }
            None => Body::empty(),
        };
        let mut request = request.body(body).map_err(Failure::internal)?;
        if let Some(peer) = self.peer {
            request.extensions_mut().insert(peer);
        }
        let Ok(response) = self.router.clone().oneshot(request).await;
        Ok(response)
    }
}

/// The status and message of a refusal. The refusals of the API and of the layers
/// before it name their reason in one of these members (`api::error`): read as JSON,
/// whichever it is.
async fn refusal(response: axum::response::Response) -> Failure {
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), MAX_ANSWER).await.unwrap_or_default();
    let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let message = ["error", "error_msg", "message"]
        .iter()
        .find_map(|k| value.get(k).and_then(Value::as_str))
        .map(str::to_owned)
        .unwrap_or_else(|| status.canonical_reason().unwrap_or("error").to_owned());
    Failure { status, message }
}

/// A 2xx answer read as `T`: an answer of another shape than its type is the app's
/// failure (500), not a blank view.
fn read<T: DeserializeOwned>(path: &str, bytes: Bytes) -> Result<T, Failure> {
    serde_json::from_slice(&bytes)
        .map_err(|e| Failure::internal(format!("the answer of {path} could not be read: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use api::responses::{CompanyScores, MessageOut};
    use axum::routing::{get, put};

    fn api() -> Api {
        let router = Router::new()
            .route("/queued", put(|| async { axum::Json(serde_json::json!({"message": "Rescan queued"})) }))
            .route("/odd", get(|| async { axum::Json(serde_json::json!({"social_id": 7})) }))
            .route(
                "/refused",
                get(|| async {
                    (StatusCode::FORBIDDEN, axum::Json(serde_json::json!({"error": "Key lacks the scope"})))
                }),
            );
        Api::new(router, None, None)
    }

    #[tokio::test]
    async fn an_answer_is_read_as_its_type_and_a_refusal_as_its_message() {
        let api = api();
        let queued: MessageOut = api.call(Method::PUT, "/queued", &[]).await.expect("an answer");
        assert_eq!(queued.message, "Rescan queued");
        let refused = api.get::<CompanyScores>("/refused", &[]).await.expect_err("refused");
        assert_eq!(refused, Failure::new(StatusCode::FORBIDDEN, "Key lacks the scope"));
        // An answer of another shape than the type fails the view, with what was wrong.
        let odd = api.get::<CompanyScores>("/odd", &[]).await.expect_err("not a scores answer");
        assert_eq!(odd.status, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(odd.message.starts_with("the answer of /odd could not be read: "), "{}", odd.message);
    }
}
