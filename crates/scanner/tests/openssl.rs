//! The TLS prober against real OpenSSL (`openssl s_server`, Debian's OpenSSL 3): what the
//! enumeration lists must be exactly what the server was told to accept — versions,
//! suites per version, the server's order, named groups. Skipped, with a printed
//! reason, when the `openssl` CLI is absent (`.ci/run` installs it).

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine as _;
use labtls::{CertVariant, LabCa};
use scanner::tlsprobe::{Target, TlsReport, Version, probe};
use scanner::{Dns, Guard, Policy};

fn openssl_available() -> bool {
    match Command::new("openssl").arg("version").output() {
        Ok(out) if out.status.success() => true,
        _ => {
            println!("SKIPPED: the openssl CLI is not on this machine");
            false
        }
    }
}

fn pem(label: &str, der: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// An `openssl s_server` on `addr` with `args`, killed on drop.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn s_server(dir: &std::path::Path, addr: SocketAddr, args: &[&str]) -> Server {
    let server = Server(
        Command::new("openssl")
            .arg("s_server")
            .arg("-accept")
            .arg(addr.to_string())
            .arg("-cert")
            .arg(dir.join("cert.pem"))
            .arg("-key")
            .arg(dir.join("key.pem"))
            .arg("-cert_chain")
            .arg(dir.join("chain.pem"))
            .args(["-quiet", "-no_ticket"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(addr).await.is_ok() {
            return server;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("openssl s_server did not start on {addr}");
}

async fn run(addr: SocketAddr, root: &[u8]) -> TlsReport {
    let policy =
        Policy { allow_private: true, port_map: [(443, addr.port())].into_iter().collect(), ..Policy::default() };
    // No name is resolved: the target is the address itself; SNI carries the name.
    let guard = Guard::new(policy, Dns::with_server("127.0.0.1:9".parse().unwrap()).unwrap());
    let mut target = Target::new(&addr.ip().to_string(), 443);
    target.sni = Some("openssl.test".into());
    probe(&guard, &target, Some(root), time::OffsetDateTime::now_utc()).await.unwrap()
}

fn suites(r: &TlsReport, v: Version) -> Vec<String> {
    r.suites.iter().find(|s| s.version == v).map(|s| s.suites.clone()).unwrap_or_default()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[tokio::test]
async fn the_enumeration_lists_exactly_what_openssl_accepts() {
    if !openssl_available() {
        return;
    }
    let ca = LabCa::new().unwrap();
    let cert = ca.issue(&["openssl.test".to_owned()], CertVariant::Rsa2048).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cert.pem"), pem("CERTIFICATE", &cert.chain[0])).unwrap();
    std::fs::write(dir.path().join("chain.pem"), pem("CERTIFICATE", &cert.chain[1])).unwrap();
    std::fs::write(dir.path().join("key.pem"), pem("PRIVATE KEY", cert.key.secret_der())).unwrap();
    let root = ca.root_der();

    // TLS 1.2 only, three suites in the server's order.
    let addr: SocketAddr = "127.77.81.1:44301".parse().unwrap();
    let server = s_server(
        dir.path(),
        addr,
        &["-tls1_2", "-serverpref", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256:AES256-SHA:DHE-RSA-AES128-SHA"],
    )
    .await;
    let r = run(addr, &root).await;
    drop(server);
    assert_eq!(r.versions, [Version::Tls12]);
    assert_eq!(
        suites(&r, Version::Tls12),
        ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_RSA_WITH_AES_256_CBC_SHA", "TLS_DHE_RSA_WITH_AES_128_CBC_SHA"],
        "the server's order"
    );
    assert_eq!(r.suites[0].server_preference, Some(true));
    assert!(r.dh_bits.is_some_and(|b| b >= 2048), "{:?}", r.dh_bits);
    assert_eq!(r.secure_renegotiation, Some(true));
    let c = r.certificate.as_ref().unwrap();
    assert!(c.untrusted.is_none() && c.hostname_matches && c.key == "RSA 2048", "{c:?}");

    // TLS 1.0 to 1.3, two suites below 1.3 and two in 1.3, two groups, client order.
    let addr: SocketAddr = "127.77.81.2:44302".parse().unwrap();
    let server = s_server(
        dir.path(),
        addr,
        &[
            "-min_protocol",
            "TLSv1",
            "-max_protocol",
            "TLSv1.3",
            "-cipher",
            "AES128-SHA:ECDHE-RSA-AES256-SHA:@SECLEVEL=0",
            "-ciphersuites",
            "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256",
            "-groups",
            "X25519:P-256",
        ],
    )
    .await;
    let r = run(addr, &root).await;
    drop(server);
    assert_eq!(r.versions, [Version::Tls10, Version::Tls11, Version::Tls12, Version::Tls13]);
    for v in [Version::Tls10, Version::Tls11, Version::Tls12] {
        assert_eq!(
            sorted(suites(&r, v)),
            ["TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "TLS_RSA_WITH_AES_128_CBC_SHA"],
            "{}",
            v.name()
        );
    }
    assert_eq!(sorted(suites(&r, Version::Tls13)), ["TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"]);
    assert_eq!(sorted(r.groups.clone()), ["secp256r1", "x25519"]);
    assert_eq!(r.fallback_scsv, Some(true), "OpenSSL refuses a fallback hello");
    let codes: Vec<String> = scanner::checks::tls_findings(&r).into_iter().map(|f| f.code).collect();
    assert!(codes.contains(&"certificate_conf.tls10_enabled".to_owned()), "{codes:?}");
    assert!(codes.contains(&"certificate_cve.beast".to_owned()), "{codes:?}");
    assert!(!codes.iter().any(|c| c == "certificate_conf.no_tls13"), "{codes:?}");
}
