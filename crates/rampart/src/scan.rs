//! `rampart probe …`: the scanner's probes on one target, without a database, printed as
//! a table or JSON.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use clap::{Args, ValueEnum};
use scanner::check::Check;
use scanner::probes::Context;
use scanner::{Dns, Guard, Policy, ScanFinding};

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    Table,
    Json,
}

/// Options every `rampart probe` and `rampart scan` command takes.
#[derive(Args, Clone)]
pub struct ScanOpts {
    #[command(flatten)]
    pub net: NetOpts,
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// The risk vectors to probe, comma-separated (all when absent).
    #[arg(long, value_delimiter = ',', value_parser = parse_vector)]
    vectors: Vec<model::RiskVector>,
    /// A database whose CVEs the detected software is matched against (`rampart scan`;
    /// its fingerprints and end-of-life data are used too).
    #[arg(long, value_name = "URL")]
    cve_db: Option<String>,
    /// The DKIM selectors the domain's owner names, comma-separated: tried first, and
    /// no key at them is `dkim.missing` (no key at the curated selectors alone is not
    /// assessable: a key at another selector cannot be seen from outside).
    #[arg(long, value_delimiter = ',', value_parser = parse_selector)]
    pub dkim_selectors: Vec<String>,
}

impl NetOpts {
    /// Lab mode (`--allow-private` or `--lab`): the guard admits special addresses.
    pub fn lab_mode(&self) -> bool {
        self.allow_private || self.lab.is_some()
    }
}

impl ScanOpts {
    fn context(&self) -> Result<Context> {
        let mut ctx = self.net.context()?;
        ctx.vectors = self.vectors.clone();
        Ok(ctx)
    }
}

/// How the scanner reaches its targets (also for `rampart worker` and `serve --workers`).
#[derive(Args, Clone)]
pub struct NetOpts {
    /// The DNS server to ask (IP:PORT); the system's resolvers when absent.
    #[arg(long)]
    resolver: Option<SocketAddr>,
    /// Lab mode: the guard admits loopback and private targets.
    #[arg(long)]
    allow_private: bool,
    /// Lab mode from the files `rampart lab up --out DIR` wrote (resolver, port map,
    /// lab CA, DNSSEC trust anchor); implies --allow-private.
    #[arg(long)]
    lab: Option<PathBuf>,
    /// A DNSSEC trust-anchor file (DNSKEY lines); the IANA root key when absent.
    #[arg(long)]
    trust_anchor: Option<PathBuf>,
    /// DKIM selectors to probe, comma-separated (the curated list when absent).
    #[arg(long, value_delimiter = ',')]
    selectors: Vec<String>,
    /// A crt.sh-compatible certificate-transparency search, `{domain}` where the domain
    /// goes (e.g. 'https://crt.sh/?q=%25.{domain}&output=json'); off when absent.
    #[arg(long, value_name = "URL")]
    ct_search: Option<String>,
    /// A Wappalyzer technologies tree (categories.json, technologies/*.json) added to the
    /// built-in fingerprint rules.
    #[arg(long, value_name = "DIR")]
    fingerprints: Option<PathBuf>,
    /// endoflife.date product data (JSON) for the sbom end-of-life and outdated checks.
    #[arg(long, value_name = "FILE")]
    eol: Option<PathBuf>,
    /// A domain scan's budget: candidate names resolved, over every source.
    #[arg(long, default_value_t = 5_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_names: u64,
    /// Hosts kept as assets of one domain.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    max_hosts: u64,
    /// Hosts visited by the web rounds of one domain.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    max_visits: u64,
    /// Seconds one domain's scan may take; a stage that runs out keeps what it has.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    scan_secs: u64,
    /// Endpoints (host and port that answered) kept for one domain.
    #[arg(long, default_value_t = 5_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_endpoints: u64,
    /// MiB of page bodies the web visits of one domain hold at once (8 MiB per visit
    /// running).
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u64).range(8..=4_096))]
    page_memory_mib: u64,
    /// The time of one stage of a domain's scan, as STAGE=SECONDS (discovery, mail, web,
    /// ports, other-web, tls); repeat for several. Defaults: discovery=120, mail=60,
    /// web=180, ports=180, other-web=60, tls=240.
    #[arg(long = "stage-secs", value_name = "STAGE=SECONDS", value_parser = parse_stage_time)]
    stage_secs: Vec<(String, u64)>,
}

/// One selector of `--dkim-selectors`.
fn parse_selector(text: &str) -> Result<String, String> {
    let mut one = model::dkim_selectors(&[text]).map_err(|e| e.to_string())?;
    one.pop().ok_or_else(|| "an empty selector".to_owned())
}

/// `STAGE=SECONDS` of `--stage-secs`.
fn parse_stage_time(text: &str) -> Result<(String, u64), String> {
    let (stage, secs) = text.split_once('=').ok_or_else(|| format!("{text:?} is not STAGE=SECONDS"))?;
    let stage = stage.trim().to_ascii_lowercase();
    if !STAGES.contains(&stage.as_str()) {
        return Err(format!("no stage {stage:?}; the stages are {}", STAGES.join(", ")));
    }
    let secs: u64 = secs.trim().parse().map_err(|_| format!("{secs:?} is not a number of seconds"))?;
    if !(1..=86_400).contains(&secs) {
        return Err(format!("{secs} seconds is not in 1..=86400"));
    }
    Ok((stage, secs))
}

/// The stages `--stage-secs` names.
const STAGES: [&str; 6] = ["discovery", "mail", "web", "ports", "other-web", "tls"];

fn parse_vector(text: &str) -> Result<model::RiskVector, String> {
    model::RiskVector::parse(text).map_err(|e| e.to_string())
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

impl NetOpts {
    pub fn context(&self) -> Result<Context> {
        let anchor_text = self.trust_anchor.as_deref().map(read).transpose()?;
        let mut ctx = match &self.lab {
            Some(dir) => {
                let lab: lab::ScannerFile = serde_json::from_str(&read(&dir.join(lab::ScannerFile::NAME))?)
                    .with_context(|| format!("{}/{}", dir.display(), lab::ScannerFile::NAME))?;
                // A lab without TLS services has no CA; one without signed zones no anchor.
                let ca = dir.join("lab-ca.pem");
                let lab_root = if ca.exists() { Some(pem_to_der(&read(&ca)?).context("lab-ca.pem")?) } else { None };
                let anchor = dir.join("trust-anchor.txt");
                let anchors = match anchor_text {
                    Some(text) => text,
                    None if anchor.exists() => read(&anchor)?,
                    None => String::new(),
                };
                Context::lab(self.resolver.unwrap_or(lab.resolver), lab.port_map, lab_root, &anchors)?
            }
            None => {
                let policy = Policy { allow_private: self.allow_private, ..Policy::default() };
                let dns = match self.resolver {
                    Some(addr) => Dns::with_server(addr)?,
                    None => Dns::system()?,
                };
                let mut ctx = Context::new(Guard::new(policy, dns));
                // DNSSEC is validated through a resolver given on the command line.
                if let Some(server) = self.resolver {
                    let anchors = match &anchor_text {
                        Some(text) => scanner::dnssec::TrustAnchor::parse(text)?,
                        None => vec![scanner::dnssec::TrustAnchor::iana_root()],
                    };
                    ctx.validator = Some(scanner::dnssec::Validator::new(server, anchors));
                }
                ctx
            }
        };
        let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let mut stages = scanner::probes::StageTimes::default();
        for (stage, secs) in &self.stage_secs {
            let time = std::time::Duration::from_secs(*secs);
            match stage.as_str() {
                "discovery" => stages.discovery = time,
                "mail" => stages.mail = time,
                "web" => stages.web = time,
                "ports" => stages.ports = time,
                "other-web" => stages.other_web = time,
                _ => stages.tls = time,
            }
        }
        ctx.limits = scanner::probes::Limits {
            names: count(self.max_names),
            hosts: count(self.max_hosts),
            endpoints: count(self.max_endpoints),
            visits: count(self.max_visits),
            page_bytes: count(self.page_memory_mib).saturating_mul(1024 * 1024),
            time: std::time::Duration::from_secs(self.scan_secs),
            stages,
        };
        if !self.selectors.is_empty() {
            ctx.selectors = self.selectors.clone();
        }
        if let Some(template) = &self.ct_search {
            if !template.contains("{domain}") {
                bail!("--ct-search {template:?} has no {{domain}} in it");
            }
            ctx.ct_search = Some(template.clone());
        }
        if let Some(dir) = &self.fingerprints {
            let (rules, report) = scanner::fingerprint::RuleSet::load_wappalyzer_dir(dir)?;
            tracing::info!(technologies = report.technologies, skipped = report.skipped.len(), "fingerprints loaded");
            ctx.fingerprints = Arc::new(scanner::fingerprint::RuleSet::builtin().clone().merged(&rules));
        }
        if let Some(file) = &self.eol {
            let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("product");
            let rows = scanner::software::Eol::rows(&read(file)?, stem)?;
            ctx.eol =
                Some(Arc::new(scanner::software::Eol::from_rows(rows.iter().map(|(a, b)| (a.as_str(), b.as_str())))));
        }
        Ok(ctx)
    }
}

fn pem_to_der(pem: &str) -> Result<Vec<u8>> {
    use base64::Engine as _;
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD.decode(body.trim()).context("PEM body is not base64")?;
    if der.is_empty() {
        bail!("no certificate in the PEM file");
    }
    Ok(der)
}

/// `rampart probe mail DOMAIN`.
pub async fn probe_mail(domain: &str, website: Option<&str>, opts: &ScanOpts) -> Result<()> {
    let ctx = opts.context()?;
    let domain = model::Domain::parse(domain).with_context(|| format!("{domain:?} is not a domain"))?;
    let checked =
        scanner::probes::mail_and_standards_checked(&ctx, domain.as_str(), website, &opts.dkim_selectors).await?;
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
pub async fn probe_http(url: &str, ca: Option<&Path>, opts: &ScanOpts) -> Result<()> {
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
            findings.extend(headers::redirect_finding(&start.to_string(), first.status, first.location.as_deref()));
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
            findings.extend(headers::redirect_finding(&plain.to_string(), answer.status, location.as_deref()));
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
    let assessable = headers::assessable(&front);
    if assessable {
        findings.extend(headers::assess(&front, &host));
    } else {
        let why = headers::parked_or_default(&front.body).map_or_else(
            || format!("{} answered {}", followed.path, front.status),
            |w| format!("{} is {w}", followed.path),
        );
        notes.push(format!("not assessable: {why}"));
    }
    findings.retain(|f| ctx.wants(f.risk_vector));
    findings.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.code.cmp(&b.code)));
    let (score, grade) = headers::observatory_score(findings.iter().map(|f| f.code.as_str()));
    let headers_check = if assessable {
        let observed = "every header the method asks for";
        scanner::check::judged(model::RiskVector::WebHeaders, "security headers", &front.origin, &findings, observed)
    } else {
        let why = notes.last().cloned().unwrap_or_default();
        Check::not_assessable(model::RiskVector::WebHeaders, "security headers", &front.origin, why)
    };
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
pub async fn probe_ports(host: &str, ports: &str, opts: &ScanOpts) -> Result<()> {
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
    let mut findings = scanner::probes::ports::judge(&open);
    findings.retain(|f| ctx.wants(f.risk_vector));
    findings.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.asset.cmp(&b.asset)));
    let observed = format!("{} of {} ports open, none exposing a risky service", open.len(), ports.len());
    let checks = vec![scanner::check::judged(model::RiskVector::OpenPorts, "port scan", host, &findings, observed)];
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
pub async fn probe_tls(
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
    let mut findings = scanner::tlsprobe::findings::judge(&report);
    findings.retain(|f| ctx.wants(f.risk_vector));
    findings.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.code.cmp(&b.code)));
    let mut checks = scanner::probes::tls_checks(&report.target, &findings);
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

/// `rampart scan DOMAIN`: discovery, then every probe of this stage, with a progress
/// line on stderr.
pub async fn scan(domain: &str, website: Option<&str>, opts: &ScanOpts) -> Result<()> {
    let mut ctx = opts.context()?;
    let db = match &opts.cve_db {
        Some(url) => {
            let store = store::open(url).await.with_context(|| format!("opening {}", store::redact_url(url)))?;
            ctx = worker::with_store_data(ctx, &*store).await?;
            Some(store)
        }
        None => None,
    };
    let domain = model::Domain::parse(domain).with_context(|| format!("{domain:?} is not a domain"))?;
    let spinner = indicatif::ProgressBar::new_spinner();
    spinner.set_message(format!("scanning {domain}: discovery, DNS and mail checks, a visit to every host"));
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    let result =
        scanner::probes::scan_domain_with(&ctx, domain.as_str(), website, &ctx.wordlist, &opts.dkim_selectors).await;
    spinner.finish_and_clear();
    let mut scan = result?;
    if let Some(store) = &db
        && ctx.wants(model::RiskVector::Vulnerabilities)
    {
        let now = time::OffsetDateTime::now_utc();
        let inventory = worker::software::inventory(&**store, &scan.software, ctx.eol.as_deref(), now).await?;
        scan.findings.extend(inventory.findings);
        scan.checks.extend(inventory.checks);
    }
    scan.findings.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.code.cmp(&b.code)).then(a.asset.cmp(&b.asset)));
    let rating = rate(&scan, &ctx, website, db.as_deref()).await?;
    match opts.format {
        Format::Json => {
            #[derive(serde::Serialize)]
            struct Report<'a> {
                #[serde(flatten)]
                scan: &'a scanner::probes::DomainScan,
                rating: &'a rating::Rating,
            }
            say!("{}", serde_json::to_string_pretty(&Report { scan: &scan, rating: &rating })?)
        }
        Format::Table => {
            say!("assets of {domain}: {}", scan.assets.len());
            say!("{:<40} {:<11} EVIDENCE", "HOST", "SOURCE");
            for a in &scan.assets {
                say!("{:<40} {:<11} {}", a.name, a.source, a.evidence);
            }
            say!();
            if !scan.skipped.is_empty() {
                say!("names skipped: {}", scan.skipped.len());
                say!("{:<40} {:<11} REASON (EVIDENCE)", "NAME", "SOURCE");
                for s in &scan.skipped {
                    say!("{:<40} {:<11} {} ({})", s.name, s.source, s.reason, s.evidence);
                }
                say!();
            }
            say!("endpoints that answered: {}", scan.endpoints.len());
            say!("{:<40} {:<16} {:<6} {:<6} SERVER", "HOST", "ADDRESS", "PORT", "SERVICE");
            for e in &scan.endpoints {
                say!("{:<40} {:<16} {:<6} {:<6} {}", e.host, e.ip.to_string(), e.port, e.service, e.banner);
            }
            say!();
            say!("software detected: {}", scan.software.len());
            say!("{:<40} {:<28} {:<16} {:<4} EVIDENCE", "HOST", "TECHNOLOGY", "VERSION", "CONF");
            for s in &scan.software {
                let evidence: String = s.evidence.chars().take(70).collect();
                let version = s.version.as_deref().unwrap_or("-");
                say!("{:<40} {:<28} {:<16} {:<4} {evidence}", s.host, s.name, version, s.confidence);
            }
            say!();
            print(domain.as_str(), "findings", &scan.findings, Format::Table)?;
            say!();
            print_checks(&scan.checks);
            say!();
            match rating.score {
                Some(s) => say!(
                    "rating of {domain} (this domain alone, methodology {}): {s:.1} ({})",
                    rating.methodology,
                    rating.grade.map_or("—", |g| g.as_str())
                ),
                None => say!("rating of {domain}: nothing was assessable"),
            }
            for cap in &rating.caps {
                say!("capped at {:.1}: {} ({})", cap.max_score, cap.reason, cap.findings.join(", "));
            }
            crate::explain::print_components(&rating);
            say!();
            say!("stages:");
            for st in &scan.stages {
                say!(
                    "  {:<20} {:>8} ms of {:>4} s  {}",
                    st.name,
                    st.millis,
                    st.budget_millis.div_ceil(1000),
                    st.summary
                );
            }
            for note in &scan.notes {
                say!("note: {note}");
            }
        }
    }
    Ok(())
}

/// The rating of one domain's scan: each component judged against what the scan
/// assessed; components left out by `--vectors` are not assessable.
async fn rate(
    scan: &scanner::probes::DomainScan,
    ctx: &Context,
    website: Option<&str>,
    db: Option<&dyn store::Store>,
) -> Result<rating::Rating> {
    let mut assessed = worker::rate::Assessed::default();
    assessed.add_scan(scan);
    assessed.set_software(&scan.software);
    let mut assets = assessed.per_component();
    for (v, n) in assets.iter_mut() {
        if !ctx.wants(*v) {
            *n = 0;
        }
    }
    let findings = worker::to_findings(scan.findings.clone(), time::OffsetDateTime::now_utc());
    let kev = match db {
        Some(store) => worker::rate::kev_among(store, &findings).await?,
        None => std::collections::BTreeSet::new(),
    };
    let website = website.map(str::to_ascii_lowercase);
    let mut rating = rating::rate(&rating::Input {
        findings: &findings,
        assets_checked: &assets,
        kev: &kev,
        website_host: website.as_deref(),
    });
    worker::rate::explain(&mut rating, &assessed.not_assessable_reasons());
    for c in &mut rating.components {
        if !ctx.wants(c.risk_vector) {
            c.not_assessable = Some("not scanned (--vectors)".to_owned());
        }
    }
    Ok(rating)
}

/// [`print`] and every check made: in the JSON report beside the findings, as a
/// second table after them.
fn print_checked(target: &str, what: &str, findings: &[ScanFinding], checks: &[Check], format: Format) -> Result<()> {
    report(target, what, findings, Some(checks), format)
}

/// The checks table: every check made, pass, finding or not assessable (and why).
fn print_checks(checks: &[Check]) {
    use scanner::check::Outcome;
    let count = |o: Outcome| checks.iter().filter(|c| c.outcome == o).count();
    say!(
        "checks: {} ({} pass, {} finding, {} not assessable)",
        checks.len(),
        count(Outcome::Pass),
        count(Outcome::Finding),
        count(Outcome::NotAssessable)
    );
    if checks.is_empty() {
        return;
    }
    say!("{:<19} {:<19} {:<40} {:<15} DETAIL", "COMPONENT", "CHECK", "ASSET", "OUTCOME");
    for c in checks {
        let detail = crate::clip(&c.detail, 110);
        say!("{:<19} {:<19} {:<40} {:<15} {detail}", c.risk_vector.as_str(), c.check, c.asset, c.outcome.as_str());
    }
}

fn print(target: &str, what: &str, findings: &[ScanFinding], format: Format) -> Result<()> {
    report(target, what, findings, None, format)
}

/// The findings of `target` (and the checks made, when given): a JSON report, or a
/// findings table followed by the checks table.
fn report(target: &str, what: &str, findings: &[ScanFinding], checks: Option<&[Check]>, format: Format) -> Result<()> {
    match format {
        Format::Json => {
            #[derive(serde::Serialize)]
            struct Report<'a> {
                domain: &'a str,
                findings: &'a [ScanFinding],
                #[serde(skip_serializing_if = "Option::is_none")]
                checks: Option<&'a [Check]>,
            }
            say!("{}", serde_json::to_string_pretty(&Report { domain: target, findings, checks })?);
        }
        Format::Table => {
            say!("{what} of {target}: {} finding(s)", findings.len());
            if !findings.is_empty() {
                say!("{:<9} {:<42} {:<40} EVIDENCE", "SEVERITY", "CODE", "ASSET");
            }
            for f in findings {
                let evidence = crate::clip(&f.evidence, 100);
                say!("{:<9} {:<42} {:<40} {evidence}", f.severity.as_str(), f.code, f.asset);
            }
            if let Some(checks) = checks {
                say!();
                print_checks(checks);
            }
        }
    }
    Ok(())
}
