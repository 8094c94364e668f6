//! The checks: one module per risk vector, each the only place that vector's verdicts
//! and findings are made. A check judges what the gathering observed
//! ([`crate::gather`]): it opens no connection and asks no question. A full scan runs
//! every check on every asset, a rescan one check on one host, `rampart probe` one
//! check on one target: the same functions, on the same kinds of observation.
//!
//! [`Checks`] runs them in the order a scan sees things: a domain's mail records first
//! ([`Checks::mail`]), then each web visit as it completes ([`Checks::visit`]), then the
//! rest of the domain's observations ([`Checks::rest`]).

pub mod certificate_conf;
pub mod certificate_cve;
pub mod certificate_info;
pub mod digitalization;
pub mod dkim;
pub mod dmarc;
pub mod it_standardization;
pub mod open_ports;
pub mod sbom;
pub mod spf;
pub mod vulnerabilities;
pub mod web_headers;

use model::RiskVector;

use crate::check::Check;
use crate::finding::ScanFinding;
use crate::gather::{MailSeen, Observations, VisitSeen};
use crate::probes::Context;

/// What checks made: their findings, and every check with its outcome.
#[derive(Debug, Clone, Default)]
pub struct Judged {
    pub findings: Vec<ScanFinding>,
    pub checks: Vec<Check>,
}

impl Judged {
    /// Adds one check and the findings it raised.
    pub fn add(&mut self, (found, check): (Vec<ScanFinding>, Check)) {
        self.findings.extend(found);
        self.checks.push(check);
    }
}

/// Which checks run, and what they judge against (the scan's time, its lifecycle data).
#[derive(Clone, Copy)]
pub struct Checks<'a> {
    ctx: &'a Context,
    only: Option<RiskVector>,
}

impl<'a> Checks<'a> {
    /// Every check the context wants: a full scan.
    pub fn every(ctx: &'a Context) -> Checks<'a> {
        Checks { ctx, only: None }
    }

    /// The check of one risk vector: a rescan, a probe.
    pub fn one(ctx: &'a Context, vector: RiskVector) -> Checks<'a> {
        Checks { ctx, only: Some(vector) }
    }

    /// Does the check of `vector` run?
    pub fn runs(&self, vector: RiskVector) -> bool {
        match self.only {
            Some(only) => only == vector,
            None => self.ctx.wants(vector),
        }
    }

    /// The checks of a company domain's mail and DNS records: spf, dkim, dmarc, and the
    /// domain's it_standardization checks.
    pub fn mail(&self, seen: &MailSeen, out: &mut Judged) {
        use RiskVector as V;
        if self.runs(V::Spf) {
            spf::domain(seen, out);
        }
        if self.runs(V::Dkim) {
            dkim::domain(seen, out);
        }
        if self.runs(V::Dmarc) {
            dmarc::domain(seen, out);
        }
        if self.runs(V::ItStandardization) {
            it_standardization::domain(seen, self.ctx.now, out);
        }
    }

    /// The checks of one visited web host: its pages (digitalization), HTTPS
    /// (it_standardization), its front page's headers and the HTTP→HTTPS redirect
    /// (web_headers).
    pub fn visit(&self, seen: &VisitSeen, out: &mut Judged) {
        use RiskVector as V;
        if self.runs(V::Digitalization) {
            digitalization::visit(seen, out);
        }
        if self.runs(V::ItStandardization) {
            it_standardization::visit(seen, out);
        }
        if self.runs(V::WebHeaders) {
            web_headers::visit(seen, out);
        }
    }

    /// The checks of the rest of a domain's observations: the hosts not reached, the
    /// DNS names, the ports, the stack, the web origins on other ports, the TLS
    /// endpoints and the software.
    pub fn rest(&self, obs: &Observations, out: &mut Judged) {
        use RiskVector as V;
        if self.runs(V::OpenPorts) {
            open_ports::rest(obs, out);
        }
        if self.runs(V::WebHeaders) {
            web_headers::rest(obs, out);
        }
        if self.runs(V::ItStandardization) {
            it_standardization::rest(obs, out);
        }
        if self.runs(V::Digitalization) {
            digitalization::rest(obs, out);
        }
        if self.runs(V::CertificateInfo) {
            certificate_info::rest(obs, out);
        }
        if self.runs(V::CertificateConf) {
            certificate_conf::rest(obs, out);
        }
        if self.runs(V::CertificateCve) {
            certificate_cve::rest(obs, out);
        }
        if self.runs(V::Sbom) {
            sbom::rest(obs, self.ctx.eol.as_deref(), self.ctx.now.date(), out);
        }
        if self.runs(V::Vulnerabilities) {
            vulnerabilities::rest(obs, out);
        }
    }
}

/// The three certificate components' findings of one TLS endpoint's report (what
/// `rampart probe tls` shows; a scan judges each component on its own).
pub fn tls_findings(report: &crate::tlsprobe::TlsReport) -> Vec<ScanFinding> {
    let mut out = certificate_conf::judge(report);
    out.extend(certificate_cve::judge(report));
    out.extend(certificate_info::judge(report));
    out
}

/// The checks of the TLS endpoint `target` with `found` among its findings: one per
/// certificate component, each judged from the findings of its own.
pub fn tls_checks(target: &str, found: &[ScanFinding]) -> Vec<Check> {
    vec![
        certificate_info::check(target, found),
        certificate_conf::check(target, found),
        certificate_cve::check(target, found),
    ]
}

/// The TLS endpoints of `obs` judged for the certificate vector `v`: the hosts not
/// reached (their port 443), then each endpoint probed (`judge`, then its `check`), then
/// those whose probe failed (not assessable).
fn tls_endpoints(
    obs: &Observations,
    out: &mut Judged,
    v: RiskVector,
    judge: fn(&crate::tlsprobe::TlsReport) -> Vec<ScanFinding>,
    check: fn(&str, &[ScanFinding]) -> Check,
) {
    for (host, refusal) in &obs.unreached {
        out.checks.push(Check::unreached(v, "tls endpoint", &format!("{host}:443"), refusal.to_string()));
    }
    for report in &obs.tls {
        let found = judge(report);
        out.checks.push(check(&report.target, &found));
        out.findings.extend(found);
    }
    for (target, why) in &obs.tls_failed {
        out.checks.push(Check::not_assessable(v, "tls endpoint", target, why.clone()));
    }
}

/// The findings of `vector` among `found`.
fn of_vector(found: &[ScanFinding], vector: RiskVector) -> Vec<ScanFinding> {
    found.iter().filter(|f| f.risk_vector == vector).cloned().collect()
}
