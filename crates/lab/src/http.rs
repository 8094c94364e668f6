//! The lab's web hosts: each answers with the status, headers and body its lab file
//! gives a path (hyper, HTTP/1.1), over plain TCP or over TLS (see `crate::tls`).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode};
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncWrite};

/// What a web host serves.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpSpec {
    /// Headers on every response of the host. A value holding `\n` is sent as several
    /// headers of that name (e.g. two `Set-Cookie`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub pages: Vec<Page>,
    /// Every path not in `pages` answers `301` to this prefix followed by the path.
    #[serde(default)]
    pub redirect: Option<String>,
    /// Every path not in `pages` answers what `/` answers (a single-page application's
    /// catch-all route, a soft 404).
    #[serde(default)]
    pub any_path: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Page {
    pub path: String,
    #[serde(default = "ok")]
    pub status: u16,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub body: String,
}

fn ok() -> u16 {
    200
}

impl HttpSpec {
    /// Checks what hyper would otherwise refuse at the first request.
    pub fn validate(&self, host: &str) -> Result<(), String> {
        let all = self.headers.iter().chain(self.pages.iter().flat_map(|p| p.headers.iter()));
        for (name, value) in all {
            HeaderName::from_bytes(name.as_bytes()).map_err(|e| format!("{host}: header name {name:?}: {e}"))?;
            for v in value.split('\n') {
                HeaderValue::from_str(v).map_err(|e| format!("{host}: header {name}: {e}"))?;
            }
        }
        for p in &self.pages {
            StatusCode::from_u16(p.status).map_err(|e| format!("{host}: {} status {}: {e}", p.path, p.status))?;
            if !p.path.starts_with('/') {
                return Err(format!("{host}: page path {:?} must start with /", p.path));
            }
        }
        Ok(())
    }

    fn answer(&self, path: &str) -> Response<Full<Bytes>> {
        let page = self
            .pages
            .iter()
            .find(|p| p.path == path)
            .or_else(|| if self.any_path { self.pages.iter().find(|p| p.path == "/") } else { None });
        let (status, body) = match (page, &self.redirect) {
            (Some(p), _) => (StatusCode::from_u16(p.status).unwrap_or(StatusCode::OK), p.body.clone()),
            (None, Some(_)) => (StatusCode::MOVED_PERMANENTLY, String::new()),
            (None, None) => (StatusCode::NOT_FOUND, "<html><body><h1>Not Found</h1></body></html>".to_owned()),
        };
        let headers = page.map(|p| &p.headers);
        let mut response = Response::new(Full::new(Bytes::from(body)));
        *response.status_mut() = status;
        let h = response.headers_mut();
        for (name, value) in self.headers.iter().chain(headers.into_iter().flatten()) {
            let Ok(name) = HeaderName::from_bytes(name.as_bytes()) else { continue };
            for v in value.split('\n') {
                if let Ok(v) = HeaderValue::from_str(v) {
                    h.append(name.clone(), v);
                }
            }
        }
        if status == StatusCode::MOVED_PERMANENTLY
            && let Some(prefix) = &self.redirect
            && let Ok(location) = HeaderValue::from_str(&format!("{}{path}", prefix.trim_end_matches('/')))
        {
            h.insert(hyper::header::LOCATION, location);
        }
        if !h.contains_key(hyper::header::CONTENT_TYPE) {
            h.insert(hyper::header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
        }
        response
    }
}

/// Serves HTTP/1.1 on one connection (plain or TLS) until the client is done.
pub(crate) async fn serve<S>(io: S, spec: Arc<HttpSpec>) -> Result<(), hyper::Error>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let spec = spec.clone();
        async move { Ok::<_, Infallible>(spec.answer(request.uri().path())) }
    });
    hyper::server::conn::http1::Builder::new()
        .max_buf_size(64 * 1024)
        .serve_connection(hyper_util::rt::TokioIo::new(io), service)
        .await
}
