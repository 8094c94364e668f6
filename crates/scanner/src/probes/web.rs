//! The web round of a scan: each discovered host is visited on 443 and 80. What it
//! shows feeds discovery (the names of its certificate, the hosts its page links and
//! redirects to), the endpoint inventory (address, port, server product and version),
//! and the checks of HTTPS availability, stack consistency, headers and pages.

use std::net::IpAddr;

use serde::Serialize;

use crate::http::{self, Verify};
use crate::probes::Context;

/// A port of a host that accepted a connection, and what answered there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Endpoint {
    pub host: String,
    pub ip: IpAddr,
    /// The standard port (443, 80), not the lab's mapped one.
    pub port: u16,
    pub service: String,
    pub product: Option<String>,
    pub version: Option<String>,
    /// The raw `Server` header, when there was one.
    pub banner: String,
}

/// What one visit to a host saw.
#[derive(Debug, Clone, Default)]
pub struct Visit {
    pub host: String,
    pub endpoints: Vec<Endpoint>,
    /// Names the certificate on 443 covers (wildcards as `*.name`).
    pub certificate_names: Vec<String>,
    /// Hosts named by links and redirects of the host's front page, with where they were seen.
    pub linked: Vec<(String, String)>,
    /// The front page of the host's origin (`https://H/`, else `http://H/`).
    pub front: Option<super::headers::Front>,
    /// What `http://H/` answered (status, Location) when H also serves HTTPS.
    pub plain_http: Option<(u16, Option<String>)>,
    /// Every response of the visit (the front page, and `http://H/` when H serves
    /// HTTPS too): what the fingerprint engine reads.
    pub pages: Vec<super::headers::Front>,
    /// The Shodan-style hash of the origin's `/favicon.ico`, when it serves one.
    pub favicon: Option<i32>,
}

/// The largest favicon read.
const MAX_FAVICON: usize = 256 * 1024;

impl Visit {
    pub fn https(&self) -> bool {
        self.endpoints.iter().any(|e| e.port == 443)
    }
    pub fn http(&self) -> bool {
        self.endpoints.iter().any(|e| e.port == 80)
    }
}

/// `product/version (comment)` → (product, version): `nginx/1.18.0` → (nginx, 1.18.0),
/// `Apache/2.4.49 (Unix)` → (Apache, 2.4.49), `nginx` → (nginx, none).
pub fn server_product(header: &str) -> Option<(String, Option<String>)> {
    let first = header.split_whitespace().next()?;
    let (product, version) = match first.split_once('/') {
        Some((p, v)) => (p, Some(v).filter(|v| !v.is_empty()).map(str::to_owned)),
        None => (first, None),
    };
    (!product.is_empty()).then(|| (product.to_owned(), version))
}

/// Visits `host`: TLS on 443 (its certificate's names, then `GET /` without judging the
/// certificate), else HTTP on 80 (`GET /`). Nothing listening is a visit with no endpoints.
pub async fn visit(ctx: &Context, host: &str) -> Visit {
    let mut out = Visit { host: host.to_owned(), ..Visit::default() };
    let guard = &ctx.guard;
    let https = match guard.connect_host(host, 443).await {
        Ok(c) => Some(c.addr.ip()),
        Err(_) => None,
    };
    let (https, port, ip) = match https {
        Some(ip) => (true, 443, ip),
        None => match guard.connect_host(host, 80).await {
            Ok(c) => (false, 80, c.addr.ip()),
            Err(_) => return out,
        },
    };
    if https {
        match crate::tls::peer_chain(guard, host, 443).await {
            Ok(chain) => {
                out.certificate_names = chain.first().map(|c| crate::tls::certificate_names(c)).unwrap_or_default();
            }
            Err(e) => tracing::debug!(host, error = %e, "no certificate"),
        }
    }
    let origin = format!("{}://{host}/", if https { "https" } else { "http" });
    let (mut product, mut version, mut banner) = (None, None, String::new());
    let origin_header = [("Origin", super::headers::PROBE_ORIGIN)];
    match http::get_with(guard, ctx.lab_root.as_deref(), https, host, "/", Verify::No, &origin_header).await {
        Ok(response) => {
            if let Some(server) = response.headers.get("server").and_then(|v| v.to_str().ok()) {
                banner = server.to_owned();
                if let Some((p, v)) = server_product(server) {
                    (product, version) = (Some(p), v);
                }
            }
            if let Some(location) = response.headers.get("location").and_then(|v| v.to_str().ok())
                && let Some(target) = crate::discovery::url_host(location)
            {
                out.linked.push((target, format!("{origin} redirects to {location}")));
            }
            for target in crate::discovery::link_hosts(&response.body) {
                let evidence = format!("linked from {origin}");
                out.linked.push((target, evidence));
            }
            let front = super::headers::Front {
                origin: origin.clone(),
                https,
                port,
                status: response.status,
                headers: response.headers,
                body: response.body,
            };
            out.pages.push(front.clone());
            out.front = Some(front);
        }
        Err(e) => tracing::debug!(host, error = %e, "front page not fetched"),
    }
    if out.front.is_some() {
        // An icon answered with 200 and some bytes (not an HTML error page).
        if let Ok((200, headers, icon)) = http::get_bytes(guard, https, host, "/favicon.ico", MAX_FAVICON).await {
            let html = headers
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|t| t.to_ascii_lowercase().contains("text/html"));
            if !icon.is_empty() && !html {
                out.favicon = Some(crate::fingerprint::favicon_hash(&icon));
            }
        }
    }
    let service = if https { "https" } else { "http" }.to_owned();
    out.endpoints.push(Endpoint { host: host.to_owned(), ip, port, service, product, version, banner });
    if https {
        // Port 80 too, for the inventory and the HTTP→HTTPS redirect check.
        if let Ok(c) = guard.connect_host(host, 80).await {
            let ip = c.addr.ip();
            drop(c);
            if let Ok(r) = http::get(guard, ctx.lab_root.as_deref(), false, host, "/", Verify::No).await {
                let location = r.headers.get("location").and_then(|v| v.to_str().ok()).map(str::to_owned);
                out.plain_http = Some((r.status, location));
                out.pages.push(super::headers::Front {
                    origin: format!("http://{host}/"),
                    https: false,
                    port: 80,
                    status: r.status,
                    headers: r.headers,
                    body: r.body,
                });
            }
            out.endpoints.push(Endpoint {
                host: host.to_owned(),
                ip,
                port: 80,
                service: "http".into(),
                product: None,
                version: None,
                banner: String::new(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_headers() {
        assert_eq!(server_product("nginx/1.18.0"), Some(("nginx".into(), Some("1.18.0".into()))));
        assert_eq!(
            server_product("Apache/2.4.49 (Unix) OpenSSL/1.0.1f"),
            Some(("Apache".into(), Some("2.4.49".into())))
        );
        assert_eq!(server_product("nginx"), Some(("nginx".into(), None)));
        assert_eq!(server_product("  "), None);
        assert_eq!(server_product("/1.0"), None);
    }
}
