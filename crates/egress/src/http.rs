//! HTTP(S) fetches through the guard: the host is parsed (a `model::Domain` or an IP
//! address), resolved and checked by the guard; the URL is built from those parsed parts
//! and checked to name the same host, and reqwest is given a resolver that answers only
//! that name with the checked addresses — so neither its own resolution (rebinding) nor
//! a name that a URL parser reads differently (`127.0.0.1\.x.evil.test`, whose backslash
//! WHATWG reads as a path separator) can take a request anywhere the guard did not
//! check. On the lab port in lab mode. Redirects are not followed (probes look at them;
//! a redirect target is a new host that goes through discovery), bodies are bounded,
//! and every request has an overall timeout and the scanner's User-Agent.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use reqwest::header::HeaderMap;

use crate::guard::{Guard, GuardError, Target, USER_AGENT};

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

/// A web origin: scheme, host (a name `model::Domain` accepts, or an IP address) and
/// port, parsed from a URL or built from parts. The port is the one the user or the
/// network named (findings show it); in lab mode the guard maps it to the lab's port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub https: bool,
    pub target: Target,
    pub port: u16,
}

impl Origin {
    /// The origin of `host` on the standard port of the scheme.
    pub fn standard(https: bool, host: &str) -> Result<Origin, HttpError> {
        let target = crate::guard::target(host)?;
        Ok(Origin { https, target, port: if https { 443 } else { 80 } })
    }

    /// Parses an absolute `http://` or `https://` URL (WHATWG rules, as browsers read
    /// it): its origin and its path with query (`/` when empty). User information, other
    /// schemes and hosts that are neither names nor IP addresses are refused.
    pub fn parse_url(url: &str) -> Result<(Origin, String), HttpError> {
        let shown = crate::guard::printable(url);
        let bad = |message: &str| HttpError::Request { url: shown.clone(), message: message.to_owned() };
        let parsed = reqwest::Url::parse(url.trim()).map_err(|e| bad(&format!("not a URL ({e})")))?;
        Origin::of(&parsed).map_err(|e| bad(&e))
    }

    /// The origin and path of a parsed URL.
    fn of(url: &reqwest::Url) -> Result<(Origin, String), String> {
        let https = match url.scheme() {
            "https" => true,
            "http" => false,
            other => return Err(format!("the scheme {other:?} is not http or https")),
        };
        if !url.username().is_empty() || url.password().is_some() {
            return Err("a URL with user information is not probed".to_owned());
        }
        let target = match url.host() {
            Some(url::Host::Domain(d)) => {
                crate::guard::target(d).map_err(|_| format!("{} is not a host name", crate::guard::printable(d)))?
            }
            Some(url::Host::Ipv4(ip)) => Target::Ip(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Target::Ip(IpAddr::V6(ip)),
            None => return Err("no host".to_owned()),
        };
        let port = url.port_or_known_default().unwrap_or(if https { 443 } else { 80 });
        let mut path = url.path().to_owned();
        if let Some(q) = url.query() {
            path.push('?');
            path.push_str(q);
        }
        Ok((Origin { https, target, port }, path))
    }

    /// The host as a URL writes it (`www.acme.test`, `192.0.2.7`, `[2001:db8::7]`).
    pub fn host(&self) -> String {
        url_host(&self.target)
    }

    /// Whether the port is the scheme's default.
    pub fn default_port(&self) -> bool {
        self.port == if self.https { 443 } else { 80 }
    }
}

impl std::fmt::Display for Origin {
    /// `https://www.acme.test`, `http://192.0.2.7:8080`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://{}", if self.https { "https" } else { "http" }, self.host())?;
        if !self.default_port() {
            write!(f, ":{}", self.port)?;
        }
        Ok(())
    }
}

/// One response of a redirect chain.
#[derive(Debug, Clone)]
pub struct Hop {
    /// The URL asked (`origin` + path).
    pub url: String,
    pub status: u16,
    /// The `Location` of a redirect, as sent (printable).
    pub location: Option<String>,
}

/// Where following a URL's redirects ended.
#[derive(Debug, Clone)]
pub struct Followed {
    pub hops: Vec<Hop>,
    /// The last response (not a redirect, or the one where following stopped).
    pub last: Response,
    pub origin: Origin,
    pub path: String,
    /// Why following stopped before a final answer: too many hops, a loop, a Location
    /// that is not an http(s) URL, or a target the guard refused.
    pub stopped: Option<String>,
}

/// The most redirects followed (browsers allow 20; a probe needs fewer).
pub const MAX_REDIRECTS: usize = 10;

/// GETs `origin` + `path` and follows redirects hop by hop: each `Location` is read
/// relative to the URL that sent it, parsed into an origin (http or https only), and
/// fetched through the guard, which resolves and checks the new host before connecting.
/// A hop that cannot be followed (refused by the guard, unreachable, not http(s)) ends
/// the chain with the reason in `stopped`; so do loops and more than [`MAX_REDIRECTS`]
/// redirects. An error is returned only when the first request fails.
pub async fn follow(
    guard: &Guard,
    lab_root: Option<&[u8]>,
    origin: &Origin,
    path: &str,
    headers: &[(&str, &str)],
) -> Result<Followed, HttpError> {
    let first = get_origin(guard, lab_root, origin, path, Verify::No, headers).await?;
    let mut at =
        Followed { hops: Vec::new(), last: first, origin: origin.clone(), path: path.to_owned(), stopped: None };
    let mut seen = std::collections::HashSet::new();
    loop {
        let url = format!("{}{}", at.origin, at.path);
        seen.insert(url.clone());
        let status = at.last.status;
        let location = if (300..400).contains(&status) {
            at.last.headers.get("location").map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        } else {
            None
        };
        at.hops.push(Hop { url: url.clone(), status, location: location.as_deref().map(crate::guard::printable) });
        let Some(location) = location else { return Ok(at) };
        if at.hops.len() > MAX_REDIRECTS {
            at.stopped = Some(format!("more than {MAX_REDIRECTS} redirects"));
            return Ok(at);
        }
        let next = reqwest::Url::parse(&url).and_then(|base| base.join(location.trim()));
        let (origin, path) = match next.map_err(|e| e.to_string()).and_then(|u| Origin::of(&u)) {
            Ok(n) => n,
            Err(why) => {
                at.stopped = Some(format!("redirect not followed: {why}"));
                return Ok(at);
            }
        };
        if seen.contains(&format!("{origin}{path}")) {
            at.stopped = Some("redirect loop".to_owned());
            return Ok(at);
        }
        match get_origin(guard, lab_root, &origin, &path, Verify::No, headers).await {
            Ok(response) => {
                at.last = response;
                at.origin = origin;
                at.path = path;
            }
            Err(e) => {
                at.stopped = Some(format!("redirect to {origin}{path} not followed: {e}"));
                return Ok(at);
            }
        }
    }
}

/// GET `path` of an origin (any port).
pub async fn get_origin(
    guard: &Guard,
    lab_root: Option<&[u8]>,
    origin: &Origin,
    path: &str,
    verify: Verify,
    headers: &[(&str, &str)],
) -> Result<Response, HttpError> {
    let (status, headers, body) = fetch(guard, lab_root, origin, path, verify, headers, MAX_BODY, None).await?;
    Ok(Response { status, headers, body: String::from_utf8_lossy(&body).into_owned() })
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
    fetch(guard, None, &Origin::standard(https, host)?, path, Verify::No, &[], limit, None).await
}

/// POSTs `body` to `path` of an origin through the guard (webhook deliveries): the
/// certificate must validate (against the lab CA in lab mode), no redirect is followed,
/// at most `limit` bytes of the answer are read.
pub async fn post(
    guard: &Guard,
    lab_root: Option<&[u8]>,
    origin: &Origin,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
    limit: usize,
) -> Result<(u16, HeaderMap, Vec<u8>), HttpError> {
    fetch(guard, lab_root, origin, path, Verify::Yes, headers, limit, Some(body)).await
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
    get_origin(guard, lab_root, &Origin::standard(https, host)?, path, verify, headers).await
}

#[allow(clippy::too_many_arguments)]
async fn fetch(
    guard: &Guard,
    lab_root: Option<&[u8]>,
    origin: &Origin,
    path: &str,
    verify: Verify,
    headers: &[(&str, &str)],
    limit: usize,
    body: Option<Vec<u8>>,
) -> Result<(u16, HeaderMap, Vec<u8>), HttpError> {
    let (https, target) = (origin.https, &origin.target);
    let addrs = guard.resolve_target(&origin.host(), target).await?;
    let port = guard.port(origin.port);
    let url = origin_url(https, target, port, path)?;
    let shown = url.as_str().to_owned();
    let err = |message: String| HttpError::Request { url: shown.clone(), message };
    let pinned: Vec<SocketAddr> = addrs.iter().map(|a| SocketAddr::new(*a, port)).collect();
    let resolver = Pinned { name: url.host_str().unwrap_or_default().to_owned(), addrs: pinned };
    let mut builder = reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(TIMEOUT)
        .connect_timeout(guard.policy().connect_timeout)
        .dns_resolver(std::sync::Arc::new(resolver))
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
    let mut request = match body {
        Some(body) => client.post(url).body(body),
        None => client.get(url),
    };
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    // The guard's permits for the first checked address, held until the body is read:
    // HTTP goes through the same limits as every other connection.
    let first = addrs.first().copied().ok_or_else(|| err("no checked address".into()))?;
    let _permits = guard.permits(first).await?;
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

/// A target as the host of a URL writes it (`www.acme.test`, `192.0.2.7`, `[2001:db8::7]`).
fn url_host(target: &Target) -> String {
    match target {
        Target::Name(name) => name.as_str().to_owned(),
        Target::Ip(IpAddr::V4(ip)) => ip.to_string(),
        Target::Ip(IpAddr::V6(ip)) => format!("[{ip}]"),
    }
}

/// `scheme://host:port/path` from parsed parts; the parsed URL must name `target` (an
/// IP address is checked by the guard as given, so it needs no resolver).
fn origin_url(https: bool, target: &Target, port: u16, path: &str) -> Result<reqwest::Url, HttpError> {
    let scheme = if https { "https" } else { "http" };
    let bad = |message: &str| HttpError::Request { url: format!("{scheme}://…{path}"), message: message.to_owned() };
    let mut url = reqwest::Url::parse(&format!("{scheme}://rampart.invalid/")).map_err(|_| bad("scheme"))?;
    url.set_host(Some(&url_host(target))).map_err(|_| bad("host"))?;
    url.set_port(Some(port)).map_err(|()| bad("port"))?;
    if !path.starts_with('/') {
        return Err(bad("a path must start with /"));
    }
    match path.split_once('?') {
        Some((p, q)) => {
            url.set_path(p);
            url.set_query(Some(q));
        }
        None => url.set_path(path),
    }
    let same = match (target, url.host()) {
        (Target::Name(name), Some(url::Host::Domain(d))) => d == name.as_str(),
        (Target::Ip(IpAddr::V4(ip)), Some(url::Host::Ipv4(v4))) => v4 == *ip,
        (Target::Ip(IpAddr::V6(ip)), Some(url::Host::Ipv6(v6))) => v6 == *ip,
        _ => false,
    };
    if !same {
        return Err(bad("the URL does not name the checked host"));
    }
    Ok(url)
}

/// reqwest's resolver for one request: the checked addresses for the one checked name,
/// an error for any other name.
struct Pinned {
    name: String,
    addrs: Vec<SocketAddr>,
}

impl reqwest::dns::Resolve for Pinned {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let answer: Result<reqwest::dns::Addrs, Box<dyn std::error::Error + Send + Sync>> =
            if name.as_str().eq_ignore_ascii_case(&self.name) {
                Ok(Box::new(self.addrs.clone().into_iter()))
            } else {
                Err(format!("{:?} was not checked by the guard", name.as_str()).into())
            };
        Box::pin(std::future::ready(answer))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_built_from_parsed_parts() {
        let name = crate::guard::target("www.acme.test").unwrap();
        assert_eq!(origin_url(true, &name, 10443, "/").unwrap().as_str(), "https://www.acme.test:10443/");
        assert_eq!(
            origin_url(false, &name, 80, "/.well-known/security.txt?x=1").unwrap().as_str(),
            "http://www.acme.test/.well-known/security.txt?x=1"
        );
        let v6 = crate::guard::target("2001:db8::7").unwrap();
        assert_eq!(origin_url(false, &v6, 8080, "/").unwrap().as_str(), "http://[2001:db8::7]:8080/");
        assert!(origin_url(false, &name, 80, "evil.test/").is_err());
        // A path cannot move the request elsewhere.
        let url = origin_url(false, &name, 80, "//evil.test/x").unwrap();
        assert_eq!(url.host_str(), Some("www.acme.test"));
    }

    #[tokio::test]
    async fn the_resolver_answers_only_the_checked_name() {
        use reqwest::dns::Resolve;
        let pinned = Pinned { name: "www.acme.test".into(), addrs: vec!["127.0.0.9:80".parse().unwrap()] };
        let name = |n: &str| n.parse::<reqwest::dns::Name>().unwrap();
        let got: Vec<SocketAddr> = pinned.resolve(name("www.acme.test")).await.unwrap().collect();
        assert_eq!(got, ["127.0.0.9:80".parse::<SocketAddr>().unwrap()]);
        assert!(pinned.resolve(name("evil.test")).await.is_err());
    }
}
