//! `rampart probe …`: the scanner's probes on one target, without a database, printed as
//! a table or JSON.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use clap::Subcommand;
use scanner::ScanFinding;
use scanner::check::Check;

use super::scan::{print, print_checked, print_checks};
use crate::flags::ScanOpts;
use crate::flags::scanner::{Format, pem_to_der, read};

#[derive(Subcommand)]
pub(crate) enum Action {
    /// The DNS and mail checks of one domain: spf, dkim, dmarc, it_standardization.
    Mail {
        domain: String,
        /// The company's website host, for the IPv6, security.txt and HTTPS checks.
        #[arg(long)]
        website: Option<String>,
        #[command(flatten)]
        opts: ScanOpts,
    },
    /// The web_headers checks of one origin (http:// or https://), scored the way the
    /// Mozilla HTTP Observatory scores.
    Http {
        url: String,
        /// A CA certificate (PEM) the HTTPS certificate is checked against (reported
        /// only: the headers are judged either way).
        #[arg(long)]
        ca: Option<PathBuf>,
        #[command(flatten)]
        opts: ScanOpts,
    },
    /// The port scan of one host: open ports, identified services, open_ports findings.
    Ports {
        host: String,
        /// Comma-separated ports, or `default` (the curated list), `top100`/`top1000`
        /// (nmap's most frequent ports, read from its nmap-services file).
        #[arg(long, default_value = "default")]
        ports: String,
        #[command(flatten)]
        opts: ScanOpts,
    },
    /// TLS of one endpoint: versions, cipher suites, groups, features, the certificate
    /// chain, and the certificate_info/conf/cve findings.
    Tls {
        /// HOST:PORT (the port defaults to 443).
        target: String,
        /// The name sent in SNI and checked against the certificate (default: HOST).
        #[arg(long)]
        sni: Option<String>,
        /// A CA certificate (PEM) to trust instead of the Mozilla root store.
        #[arg(long)]
        ca: Option<PathBuf>,
        /// STARTTLS before the handshake (default: by port — 25/587 smtp, 143 imap,
        /// 110 pop3, 21 ftp).
        #[arg(long, value_parser = ["smtp", "imap", "pop3", "ftp"])]
        starttls: Option<String>,
        #[command(flatten)]
        opts: ScanOpts,
    },
}

pub(crate) async fn run(action: Action) -> Result<()> {
    match action {
        Action::Mail { domain, website, opts } => probe_mail(&domain, website.as_deref(), &opts).await,
        Action::Ports { host, ports, opts } => probe_ports(&host, &ports, &opts).await,
        Action::Http { url, ca, opts } => probe_http(&url, ca.as_deref(), &opts).await,
        Action::Tls { target, sni, ca, starttls, opts } => {
            probe_tls(&target, sni, ca.as_deref(), starttls.as_deref(), &opts).await
        }
    }
}

/// `rampart probe mail DOMAIN`.
async fn probe_mail(domain: &str, website: Option<&str>, opts: &ScanOpts) -> Result<()> {
    let ctx = opts.context()?;
    let domain = model::Domain::parse(domain).with_context(|| format!("{domain:?} is not a domain"))?;
    let checked =
        scanner::scan::mail_and_standards_checked(&ctx, domain.as_str(), website, &opts.dkim_selectors).await?;
    let mut findings = checked.findings;
    findings.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.code.cmp(&b.code)).then(a.asset.cmp(&b.asset)));
    print_checked(domain.as_str(), "mail and DNS checks", &findings, &checked.checks, opts.format)
}

/// The nmap-services file that `top100`/`top1000` are read from.
const NMAP_SERVICES: &str = "/usr/share/nmap/nmap-services";

/// A port list: `default`, `topN` (nmap's N most frequent TCP ports), or `22,80,8000-8100`.
fn port_list(spec: &str) -> Result<Vec<u16>> {
    if spec == "default" {
        return Ok(scanner::probes::ports::DEFAULT_PORTS.to_vec());
    }
    if let Some(n) = spec.strip_prefix("top") {
        let n: usize = n.parse().with_context(|| format!("{spec:?}: top100 or top1000"))?;
        let path = std::env::var("RAMPART_NMAP_SERVICES").unwrap_or_else(|_| NMAP_SERVICES.to_owned());
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!("{spec} needs nmap's port frequencies in {path} (install nmap, or set RAMPART_NMAP_SERVICES)")
        })?;
        let mut ports: Vec<(f64, u16)> = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let (_, port_proto, freq) = (f.next()?, f.next()?, f.next()?);
                let port = port_proto.strip_suffix("/tcp")?.parse().ok()?;
                Some((freq.parse().ok()?, port))
            })
            .collect();
        ports.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        return Ok(ports.into_iter().take(n).map(|(_, p)| p).collect());
    }
    let mut out = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let lo: u16 = lo.parse().with_context(|| format!("{part:?} is not a port or range"))?;
        let hi: u16 = hi.parse().with_context(|| format!("{part:?} is not a port or range"))?;
        if lo == 0 || hi < lo {
            bail!("{part:?} is not a port or range");
        }
        out.extend(lo..=hi);
    }
    if out.is_empty() {
        bail!("no ports in {spec:?}");
    }
    Ok(out)
}

/// `rampart probe http URL`.
async fn probe_http(url: &str, ca: Option<&Path>, opts: &ScanOpts) -> Result<()> {
    use scanner::checks::web_headers;
    use scanner::http::{self, Origin, Verify};
    use scanner::probes::headers;
    let ctx = opts.context()?;
    if !url.starts_with("https://") && !url.starts_with("http://") {
        bail!("{url:?}: give an http:// or https:// URL");
    }
    let (start, path) = Origin::parse_url(url)?;
    let ca_der = match ca {
        Some(path) => Some(pem_to_der(&read(path)?).with_context(|| format!("{}", path.display()))?),
        None => ctx.lab_root.clone(),
    };
    let extra = [("Origin", headers::PROBE_ORIGIN)];
    // The URL's redirects are followed hop by hop, each target checked by the guard; the
    // headers are judged where the chain ends.
    let followed = http::follow(&ctx.guard, ca_der.as_deref(), &start, &path, &extra).await?;
    let end = followed.origin.clone();
    let origin = end.to_string();
    let host = end.host();
    let mut findings = Vec::new();
    let mut notes = Vec::new();
    if let Some(why) = &followed.stopped {
        notes.push(format!("redirects: {why}"));
    }
    let https_redirect = (!start.https).then_some(end.https);
    // An http:// origin must send users to https:// when its host serves HTTPS (443).
    if !start.https {
        let first = &followed.hops[0];
        if scanner::probes::standards::listens(&ctx.guard, &start.host(), 443).await {
            findings.extend(web_headers::redirect_finding(&start.to_string(), first.status, first.location.as_deref()));
        } else if end.https {
            notes.push(format!("{} serves no HTTPS on 443", start.host()));
        } else {
            notes.push(format!("{} serves no HTTPS on 443: no redirect to it is asked for", start.host()));
        }
    }
    if end.https {
        let valid = http::get_origin(&ctx.guard, ca_der.as_deref(), &end, "/", Verify::Yes, &[]).await;
        notes.push(match valid {
            Ok(_) => "certificate: valid".to_owned(),
            Err(e) => format!("certificate: does not validate ({e})"),
        });
    }
    // An https:// URL on the standard port: does http:// on port 80 send users there?
    if start.https && start.default_port() {
        let plain = Origin { https: false, target: start.target.clone(), port: 80 };
        if let Ok(answer) = http::get_origin(&ctx.guard, None, &plain, "/", Verify::No, &[]).await {
            let location = answer.headers.get("location").and_then(|v| v.to_str().ok()).map(str::to_owned);
            let to = location.as_deref().map(|l| format!(" -> {l}")).unwrap_or_default();
            notes.push(format!("{plain}/ answered {}{to}", answer.status));
            findings.extend(web_headers::redirect_finding(&plain.to_string(), answer.status, location.as_deref()));
        }
    }
    let front = headers::Front {
        origin: format!("{origin}/"),
        https: end.https,
        port: end.port,
        status: followed.last.status,
        headers: followed.last.headers.clone(),
        body: followed.last.body.clone(),
    };
    // The headers are judged by the check a scan runs on each origin's front page.
    let (found, headers_check) = web_headers::origin(&front, &host);
    let assessable = headers::assessable(&front);
    if !assessable {
        notes.push(format!("not assessable: {}", headers_check.detail));
    }
    findings.extend(found);
    findings.retain(|f| ctx.wants(f.risk_vector));
    findings.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.code.cmp(&b.code)));
    let (score, grade) = web_headers::observatory_score(findings.iter().map(|f| f.code.as_str()));
    let checks = vec![headers_check];
    let seen = scanner::fingerprint::Observation::http(&front.origin, &front.headers, &front.body);
    let technologies = scanner::fingerprint::analyze(&ctx.fingerprints, &seen);
    let final_url = format!("{origin}{}", followed.path);
    match opts.format {
        Format::Json => {
            #[derive(serde::Serialize)]
            struct Hop<'a> {
                url: &'a str,
                status: u16,
                location: Option<&'a str>,
            }
            #[derive(serde::Serialize)]
            struct Out<'a> {
                url: String,
                origin: &'a str,
                final_url: &'a str,
                redirects: Vec<Hop<'a>>,
                /// For an http:// URL: whether its redirects end on https://.
                https_redirect: Option<bool>,
                status: u16,
                technologies: &'a [scanner::fingerprint::Detection],
                assessable: bool,
                observatory_score: Option<u32>,
                observatory_grade: Option<&'a str>,
                notes: &'a [String],
                findings: &'a [ScanFinding],
                checks: &'a [Check],
            }
            let out = Out {
                url: format!("{start}{path}"),
                origin: &origin,
                final_url: &final_url,
                redirects: followed
                    .hops
                    .iter()
                    .map(|h| Hop { url: &h.url, status: h.status, location: h.location.as_deref() })
                    .collect(),
                https_redirect,
                status: front.status,
                technologies: &technologies,
                assessable,
                observatory_score: assessable.then_some(score),
                observatory_grade: assessable.then_some(grade),
                notes: &notes,
                findings: &findings,
                checks: &checks,
            };
            say!("{}", serde_json::to_string_pretty(&out)?);
        }
        Format::Table => {
            for hop in &followed.hops {
                match &hop.location {
                    Some(to) => say!("{} -> {} {to}", hop.url, hop.status),
                    None => say!("{}: {}", hop.url, hop.status),
                }
            }
            if let Some(to_https) = https_redirect {
                say!("http -> https: {}", if to_https { "yes" } else { "no" });
            }
            for t in &technologies {
                let version = t.version.as_deref().map(|v| format!(" {v}")).unwrap_or_default();
                say!(
                    "technology: {}{version} ({}; confidence {}) — {}",
                    t.name,
                    t.categories.join(", "),
                    t.confidence,
                    t.evidence
                );
            }
            for n in &notes {
                say!("{n}");
            }
            if assessable {
                say!("Observatory-style score: {score} ({grade})");
            }
            say!();
            print(&final_url, "web findings", &findings, Format::Table)?;
            say!();
            print_checks(&checks);
        }
    }
    Ok(())
}

/// `rampart probe ports HOST`.
async fn probe_ports(host: &str, ports: &str, opts: &ScanOpts) -> Result<()> {
    let ctx = opts.context()?;
    // An address (`[fd00::1]` too) or a host name, as the guard takes a target.
    scanner::guard::target(host).with_context(|| format!("{host:?} is not an address or a host name"))?;
    let ports = port_list(ports)?;
    let spinner = indicatif::ProgressBar::new_spinner();
    spinner.set_message(format!("scanning {} ports of {host}", ports.len()));
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    let started = std::time::Instant::now();
    let scanned = scanner::probes::ports::scan(&ctx.guard, host, &ports).await;
    spinner.finish_and_clear();
    // A host the guard refuses is not scanned: that is said, never "0 ports open".
    let open = scanned
        .map_err(|why| anyhow::anyhow!("{host} was not scanned ({why}); an internal address needs --allow-private"))?;
    let mut findings = scanner::checks::open_ports::judge(&open);
    findings.retain(|f| ctx.wants(f.risk_vector));
    findings.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.asset.cmp(&b.asset)));
    let checks = vec![scanner::checks::open_ports::judged(host, &open, ports.len(), &findings)];
    match opts.format {
        Format::Json => {
            #[derive(serde::Serialize)]
            struct Out<'a> {
                host: &'a str,
                ports_scanned: usize,
                open: &'a [scanner::probes::ports::OpenPort],
                findings: &'a [ScanFinding],
                checks: &'a [Check],
                seconds: f64,
            }
            let out = Out {
                host,
                ports_scanned: ports.len(),
                open: &open,
                findings: &findings,
                checks: &checks,
                seconds: started.elapsed().as_secs_f64(),
            };
            say!("{}", serde_json::to_string_pretty(&out)?);
        }
        Format::Table => {
            say!("{host}: {} of {} ports open ({:.2} s)", open.len(), ports.len(), started.elapsed().as_secs_f64());
            say!("{:<7} {:<14} {:<16} {:<12} BANNER", "PORT", "SERVICE", "PRODUCT", "VERSION");
            for p in &open {
                say!(
                    "{:<7} {:<14} {:<16} {:<12} {}",
                    p.port,
                    p.service,
                    p.product.as_deref().unwrap_or("-"),
                    p.version.as_deref().unwrap_or("-"),
                    p.banner.chars().take(70).collect::<String>()
                );
            }
            say!();
            print(host, "open_ports findings", &findings, Format::Table)?;
            say!();
            print_checks(&checks);
        }
    }
    Ok(())
}

/// `rampart probe tls HOST[:PORT]`.
async fn probe_tls(
    target: &str,
    sni: Option<String>,
    ca: Option<&Path>,
    starttls: Option<&str>,
    opts: &ScanOpts,
) -> Result<()> {
    let ctx = opts.context()?;
    let (host, port) = match target.rsplit_once(':') {
        Some((h, p)) => (h, p.parse::<u16>().with_context(|| format!("{p:?} is not a port"))?),
        None => (target, 443),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.parse::<std::net::IpAddr>().is_err() {
        model::Domain::parse(host).with_context(|| format!("{host:?} is not a host name"))?;
    }
    let mut t = scanner::tlsprobe::Target::new(host, port);
    t.sni = sni;
    if let Some(kind) = starttls {
        t.starttls = scanner::tlsprobe::Starttls::parse(kind);
    }
    let ca_der = match ca {
        Some(path) => Some(pem_to_der(&read(path)?).with_context(|| format!("{}", path.display()))?),
        None => ctx.lab_root.clone(),
    };
    let spinner = indicatif::ProgressBar::new_spinner();
    spinner.set_message(format!("probing TLS of {}", t.asset()));
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    let started = std::time::Instant::now();
    let result = scanner::tlsprobe::probe(&ctx.guard, &t, ca_der.as_deref(), ctx.now).await;
    spinner.finish_and_clear();
    let report = result?;
    let took = started.elapsed();
    let mut findings = scanner::checks::tls_findings(&report);
    findings.retain(|f| ctx.wants(f.risk_vector));
    findings.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.code.cmp(&b.code)));
    let mut checks = scanner::checks::tls_checks(&report.target, &findings);
    checks.retain(|c| ctx.wants(c.risk_vector));
    match opts.format {
        Format::Json => {
            #[derive(serde::Serialize)]
            struct Out<'a> {
                target: &'a str,
                report: &'a scanner::tlsprobe::TlsReport,
                findings: &'a [ScanFinding],
                checks: &'a [Check],
                seconds: f64,
            }
            let out = Out {
                target: &report.target,
                report: &report,
                findings: &findings,
                checks: &checks,
                seconds: took.as_secs_f64(),
            };
            say!("{}", serde_json::to_string_pretty(&out)?);
        }
        Format::Table => {
            say!(
                "TLS of {} ({}) in {:.2} s, {} connections",
                report.target,
                report.ip.map(|i| i.to_string()).unwrap_or_default(),
                took.as_secs_f64(),
                report.connections
            );
            let versions: Vec<&str> = report.versions.iter().map(|v| v.name()).collect();
            say!("versions: {}", if versions.is_empty() { "none".to_owned() } else { versions.join(", ") });
            if !report.ssl2_ciphers.is_empty() {
                say!("SSLv2 cipher kinds: {}", report.ssl2_ciphers.join(", "));
            }
            for s in &report.suites {
                let order = match s.server_preference {
                    Some(true) => "server order",
                    Some(false) => "client order",
                    None => "",
                };
                say!(
                    "{} ({} suites{}{}):",
                    s.version.name(),
                    s.suites.len(),
                    if order.is_empty() { "" } else { ", " },
                    order
                );
                for name in &s.suites {
                    say!("    {name}");
                }
            }
            say!("groups: {}", report.groups.join(", "));
            if let Some(b) = report.dh_bits {
                say!("smallest DH group: {b} bits");
            }
            say!(
                "secure renegotiation: {:?}; compression: {}; OCSP stapling: {}; ALPN h2: {}; fallback SCSV: {:?}; heartbleed: {}",
                report.secure_renegotiation,
                report.compression,
                report.ocsp_stapling,
                report.alpn_h2,
                report.fallback_scsv,
                report.heartbleed.as_ref().map_or("not tested".to_owned(), |h| if h.vulnerable {
                    format!("VULNERABLE ({} bytes leaked)", h.leaked)
                } else {
                    "no".into()
                }),
            );
            if let Some(c) = &report.certificate {
                say!(
                    "certificate: {} (issuer {}), {}, {} → {} ({} days left), names [{}]",
                    c.subject,
                    c.issuer,
                    c.key,
                    c.not_before,
                    c.not_after,
                    c.days_left,
                    c.names.join(", ")
                );
            }
            say!("Mozilla profile met: {}", report.mozilla_profile);
            say!();
            print(&report.target, "TLS findings", &findings, Format::Table)?;
            say!();
            print_checks(&checks);
        }
    }
    Ok(())
}
