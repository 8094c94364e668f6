//! Clients of services an operator configures (a certificate-transparency search, the
//! vulnerability feeds, later webhooks). Their addresses come from configuration, not
//! from a scan target, so they are not checked against the guard's ranges (a mirror on
//! the local network is legitimate) — but they follow no redirect (a redirect could
//! point anywhere; the caller reports where it pointed) and have an overall timeout.
//! A proxy from the environment (`HTTPS_PROXY`) is used only where the caller allows it
//! (feed downloads from behind a company proxy).

use std::time::Duration;

/// How a service client behaves.
#[derive(Debug, Clone)]
pub struct ServiceClient {
    pub user_agent: String,
    /// The whole exchange, body included.
    pub timeout: Duration,
    pub connect_timeout: Duration,
    /// Use the proxy the environment names, if any.
    pub env_proxy: bool,
}

impl ServiceClient {
    pub fn build(&self) -> Result<reqwest::Client, reqwest::Error> {
        let builder = reqwest::Client::builder()
            .user_agent(&self.user_agent)
            .timeout(self.timeout)
            .connect_timeout(self.connect_timeout.min(self.timeout))
            .redirect(reqwest::redirect::Policy::none());
        if self.env_proxy { builder.build() } else { builder.no_proxy().build() }
    }
}
