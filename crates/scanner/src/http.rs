//! HTTP(S) fetches through the guard: the host is resolved and checked by the guard, and
//! reqwest is pinned to the checked address (so its own resolution cannot be rebound),
//! on the lab port in lab mode. Redirects are not followed (probes look at them), bodies
//! are bounded, and every request has a timeout and the scanner's User-Agent.

use std::time::Duration;

use reqwest::header::HeaderMap;

use crate::guard::{Guard, GuardError, USER_AGENT};

/// The most of a body a probe reads.
pub const MAX_BODY: usize = 1024 * 1024;
const TIMEOUT: Duration = Duration::from_secs(8);

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error(transparent)]
    Guard(#[from] GuardError),
    #[error("{url}: {message}")]
    Request { url: String, message: String },
}

/// A fetched response.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: HeaderMap,
    /// At most [`MAX_BODY`] bytes of the body, lossily decoded.
    pub body: String,
}

/// How a fetch treats the server's certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// The certificate must validate (against the lab CA in lab mode): MTA-STS.
    Yes,
    /// Certificates are judged by certificate_info; everything else looks past them.
    No,
}

/// GET `scheme://host/path` on the standard port for the scheme.
pub async fn get(
    guard: &Guard,
    lab_root: Option<&[u8]>,
    https: bool,
    host: &str,
    path: &str,
    verify: Verify,
) -> Result<Response, HttpError> {
    get_with(guard, lab_root, https, host, path, verify, &[]).await
}

/// A GET whose body is kept as bytes (at most `limit` of them): favicons.
pub async fn get_bytes(
    guard: &Guard,
    https: bool,
    host: &str,
    path: &str,
    limit: usize,
) -> Result<(u16, HeaderMap, Vec<u8>), HttpError> {
    fetch(guard, None, https, host, path, Verify::No, &[], limit).await
}

/// [`get`] with extra request headers (an `Origin` for the CORS check, say).
pub async fn get_with(
    guard: &Guard,
    lab_root: Option<&[u8]>,
    https: bool,
    host: &str,
    path: &str,
    verify: Verify,
    headers: &[(&str, &str)],
) -> Result<Response, HttpError> {
    let (status, headers, body) = fetch(guard, lab_root, https, host, path, verify, headers, MAX_BODY).await?;
    Ok(Response { status, headers, body: String::from_utf8_lossy(&body).into_owned() })
}

#[allow(clippy::too_many_arguments)]
async fn fetch(
    guard: &Guard,
    lab_root: Option<&[u8]>,
    https: bool,
    host: &str,
    path: &str,
    verify: Verify,
    headers: &[(&str, &str)],
    limit: usize,
) -> Result<(u16, HeaderMap, Vec<u8>), HttpError> {
    let standard = if https { 443 } else { 80 };
    let addrs = guard.resolve(host).await?;
    let port = guard.port(standard);
    let scheme = if https { "https" } else { "http" };
    let url = format!("{scheme}://{host}:{port}{path}");
    let err = |message: String| HttpError::Request { url: format!("{scheme}://{host}{path}"), message };
    let pinned: Vec<std::net::SocketAddr> = addrs.iter().map(|a| std::net::SocketAddr::new(*a, port)).collect();
    let mut builder = reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(TIMEOUT)
        .connect_timeout(guard.policy().connect_timeout)
        .resolve_to_addrs(host, &pinned)
        .no_proxy();
    match (verify, lab_root) {
        (Verify::No, _) => builder = builder.danger_accept_invalid_certs(true),
        (Verify::Yes, Some(root)) => {
            let cert = reqwest::Certificate::from_der(root).map_err(|e| err(format!("lab CA: {e}")))?;
            builder = builder.tls_built_in_root_certs(false).add_root_certificate(cert);
        }
        (Verify::Yes, None) => {}
    }
    let client = builder.build().map_err(|e| err(e.to_string()))?;
    let mut request = client.get(&url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request.send().await.map_err(|e| err(describe(&e)))?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let mut body = Vec::new();
    while body.len() < limit {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk[..chunk.len().min(limit - body.len())]),
            Ok(None) => break,
            Err(e) => return Err(err(describe(&e))),
        }
    }
    Ok((status, headers, body))
}

/// reqwest's error with its causes (the certificate reason sits in a source).
fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
