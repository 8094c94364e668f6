//! One web origin's front page as the web visits fetch it ([`Front`]), and what tells an
//! application from a parked or default page: only an application is judged (its
//! headers by `crate::checks::web_headers`, its pages by
//! `crate::checks::digitalization`; docs/FINDINGS.md, Scope).

use reqwest::header::HeaderMap;

/// The Origin sent with the front-page request, to see whether CORS reflects it.
pub const PROBE_ORIGIN: &str = "https://cors-probe.rampart.invalid";

/// One fetched origin: `https://H/`, `http://H/`, `http://H:8080/`.
#[derive(Debug, Clone)]
pub struct Front {
    pub origin: String,
    pub https: bool,
    /// The origin's port (the standard one, not the lab's mapped one).
    pub port: u16,
    pub status: u16,
    pub headers: HeaderMap,
    pub body: String,
}

/// Default server pages and parked domains: no application to assess.
pub fn parked_or_default(body: &str) -> Option<&'static str> {
    let lower = body.to_ascii_lowercase();
    [
        ("welcome to nginx!", "the nginx default page"),
        ("apache2 ubuntu default page", "the Apache default page"),
        ("apache2 debian default page", "the Apache default page"),
        ("<h1>it works!</h1>", "the Apache default page"),
        ("iis windows server", "the IIS default page"),
        ("test page for the apache http server", "the Apache test page"),
        ("this domain is parked", "a parked-domain page"),
        ("domain is for sale", "a parked-domain page"),
        ("buy this domain", "a parked-domain page"),
    ]
    .into_iter()
    .find(|(marker, _)| lower.contains(marker))
    .map(|(_, what)| what)
}

/// Is the origin assessable? (2xx, and not a parked or default page.)
pub fn assessable(front: &Front) -> bool {
    (200..300).contains(&front.status) && parked_or_default(&front.body).is_none()
}
