//! STARTTLS before the ClientHello: IMAP (`a1 STARTTLS`), POP3 (`STLS`) and FTP
//! (`AUTH TLS`) servers that upgrade to a rustls endpoint; the prober sees its versions
//! and certificate through each, and a server that refuses the upgrade is an error.

use std::net::SocketAddr;

use labtls::{CertVariant, LabCa, TlsVersion, modern_server_config};
use scanner::tlsprobe::{Starttls, Target, Version, probe};
use scanner::{Dns, Guard, Policy};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// Serves `kind`'s plaintext part, then TLS, on every connection.
async fn server(addr: &str, kind: Starttls, ca: &LabCa, refuse: bool) -> SocketAddr {
    let cert = ca.issue(&["mail.starttls.test".to_owned()], CertVariant::Valid).unwrap();
    let config = modern_server_config(&cert, &[TlsVersion::Tls12, TlsVersion::Tls13]).unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    let listener = TcpListener::bind(addr).await.unwrap();
    let local = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { return };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let mut stream = BufReader::new(stream);
                let (greeting, ok) = match kind {
                    Starttls::Imap => ("* OK IMAP4rev1 ready\r\n", "a1 OK Begin TLS negotiation now\r\n"),
                    Starttls::Pop3 => ("+OK POP3 ready\r\n", "+OK Begin TLS negotiation\r\n"),
                    Starttls::Ftp => ("220 FTP ready\r\n", "234 AUTH TLS successful\r\n"),
                    Starttls::Smtp => unreachable!("SMTP is covered by the lab"),
                };
                let refusal = match kind {
                    Starttls::Imap => "a1 NO STARTTLS disabled\r\n",
                    Starttls::Pop3 => "-ERR not now\r\n",
                    _ => "502 not implemented\r\n",
                };
                if stream.get_mut().write_all(greeting.as_bytes()).await.is_err() {
                    return;
                }
                let mut line = String::new();
                if stream.read_line(&mut line).await.unwrap_or(0) == 0 {
                    return;
                }
                let answer = if refuse { refusal } else { ok };
                if stream.get_mut().write_all(answer.as_bytes()).await.is_err() || refuse {
                    return;
                }
                let _ = acceptor.accept(stream.into_inner()).await;
            });
        }
    });
    local
}

fn guard(standard: u16, actual: u16) -> Guard {
    let policy =
        Policy { allow_private: true, port_map: [(standard, actual)].into_iter().collect(), ..Policy::default() };
    Guard::new(policy, Dns::with_server("127.0.0.1:9".parse().unwrap()).unwrap())
}

#[tokio::test]
async fn imap_pop3_and_ftp_upgrade_before_the_probe() {
    let ca = LabCa::new().unwrap();
    let root = ca.root_der();
    for (i, (kind, port)) in
        [(Starttls::Imap, 143u16), (Starttls::Pop3, 110), (Starttls::Ftp, 21)].into_iter().enumerate()
    {
        let addr = server(&format!("127.77.82.{}:0", i + 1), kind, &ca, false).await;
        let mut target = Target::new(&addr.ip().to_string(), port);
        assert_eq!(target.starttls, Some(kind), "by port");
        target.sni = Some("mail.starttls.test".into());
        let r = probe(&guard(port, addr.port()), &target, Some(&root), time::OffsetDateTime::now_utc()).await.unwrap();
        assert_eq!(r.versions, [Version::Tls12, Version::Tls13], "{kind:?}");
        let c = r.certificate.as_ref().unwrap();
        assert!(c.hostname_matches && c.untrusted.is_none(), "{kind:?}: {c:?}");

        let refusing = server(&format!("127.77.82.{}:0", i + 11), kind, &ca, true).await;
        let target = Target::new(&refusing.ip().to_string(), port);
        let err = probe(&guard(port, refusing.port()), &target, Some(&root), time::OffsetDateTime::now_utc())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("STARTTLS"), "{kind:?}: {err}");
    }
}

/// A black hole (accepts, never answers) costs a few read timeouts, not one per suite
/// chunk and version: the probe gives up after three silent hellos.
#[tokio::test]
async fn a_silent_endpoint_is_given_up_quickly() {
    let listener = TcpListener::bind("127.77.82.30:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let policy = Policy {
        allow_private: true,
        port_map: [(443, addr.port())].into_iter().collect(),
        read_timeout: std::time::Duration::from_millis(200),
        ..Policy::default()
    };
    let guard = Guard::new(policy, Dns::with_server("127.0.0.1:9".parse().unwrap()).unwrap());
    let target = Target::new(&addr.ip().to_string(), 443);
    let err = probe(&guard, &target, None, time::OffsetDateTime::now_utc()).await.unwrap_err();
    assert!(err.to_string().contains("no answer to 3 ClientHellos"), "{err}");
}
