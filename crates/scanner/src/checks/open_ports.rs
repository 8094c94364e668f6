//! open_ports: the open ports of every host with an address, judged by the service
//! that answers: risky exposures are findings by class (databases and caches, remote
//! administration, file sharing); web, mail and TLS ports produce none. A host the port
//! scan did not reach, or did not finish in time, is not assessable.

use model::RiskVector;

use super::Judged;
use crate::check::{self, Check};
use crate::finding::ScanFinding;
use crate::gather::{Observations, PORT_SCAN_TIME};
use crate::probes::ports::OpenPort;

const CHECK: &str = "port scan";

/// The hosts not reached, each host's port scan, and the findings of every open port.
pub fn rest(obs: &Observations, out: &mut Judged) {
    let v = RiskVector::OpenPorts;
    for (host, refusal) in &obs.unreached {
        out.checks.push(Check::unreached(v, CHECK, host, refusal.to_string()));
    }
    if let Some(scans) = &obs.port_scans {
        for host in &scans.hosts {
            let check = match scans.scanned.get(host) {
                Some(Some(Err(why))) => Check::unreached(v, CHECK, host, why.to_string()),
                Some(Some(Ok(open))) => judged(host, open, scans.tried, &judge(open)),
                Some(None) => Check::not_assessable(
                    v,
                    CHECK,
                    host,
                    format!("the host's port scan took more than {} s", PORT_SCAN_TIME.as_secs()),
                ),
                None => Check::not_assessable(v, CHECK, host, "the port scan stage ran out of time before this host"),
            };
            out.checks.push(check);
        }
    }
    out.findings.extend(judge(&obs.open_ports));
}

/// The port-scan check of `host`: `open` its open ports of the `tried`, `found` the
/// findings they raised.
pub fn judged(host: &str, open: &[OpenPort], tried: usize, found: &[ScanFinding]) -> Check {
    let observed = format!("{} of {tried} ports open, none exposing a risky service", open.len());
    check::judged(RiskVector::OpenPorts, CHECK, host, found, observed)
}

/// The open_ports findings of the open ports found: risky services by exposure class;
/// web, mail and TLS ports produce none.
pub fn judge(open: &[OpenPort]) -> Vec<ScanFinding> {
    let mut out = Vec::new();
    for p in open {
        let code = match p.service.as_str() {
            "redis" => "open_ports.redis_exposed",
            "mongodb" => "open_ports.mongodb_exposed",
            "elasticsearch" => "open_ports.elasticsearch_exposed",
            "memcached" => "open_ports.memcached_exposed",
            "mysql" => "open_ports.mysql_exposed",
            "postgresql" => "open_ports.postgresql_exposed",
            "telnet" => "open_ports.telnet_exposed",
            "ftp" => "open_ports.ftp_exposed",
            "rdp" => "open_ports.rdp_exposed",
            "smb" => "open_ports.smb_exposed",
            "ssh" => "open_ports.ssh_exposed",
            _ => continue,
        };
        let software = match (&p.product, &p.version) {
            (Some(prod), Some(v)) => format!(" ({prod} {v})"),
            (Some(prod), None) => format!(" ({prod})"),
            _ => String::new(),
        };
        let asset = format!("{}:{}", p.host, p.port);
        out.push(ScanFinding::new(
            code,
            asset,
            format!("{} on {}:{}{software}: {}", p.service, p.ip, p.port, p.banner),
        ));
    }
    out
}
