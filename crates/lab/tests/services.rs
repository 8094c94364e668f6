//! The lab's TCP services checked with raw sockets, as a scanner would meet them.

use std::net::SocketAddr;
use std::time::Duration;

use lab::{Lab, LabError, LabFile};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const FILE: &str = r#"{
  "hosts": [
    {"name": "shell.acme.test", "address": "127.77.0.2", "services": [
      {"port": 22, "kind": "ssh", "version": "OpenSSH_7.4"},
      {"port": 21, "kind": "ftp"},
      {"port": 23, "kind": "telnet"},
      {"port": 3389, "kind": "rdp"}]},
    {"name": "mail.acme.test", "address": "127.77.0.3", "services": [{"port": 25, "kind": "smtp"}]},
    {"name": "db.acme.test", "address": "127.77.0.4", "services": [
      {"port": 6379, "kind": "redis", "version": "5.0.7"},
      {"port": 11211, "kind": "memcached"},
      {"port": 3306, "kind": "mysql"},
      {"port": 5432, "kind": "postgresql"},
      {"port": 27017, "kind": "mongodb", "version": "3.6.8"},
      {"port": 445, "kind": "smb"}]}
  ],
  "port_map": {"3389": 13389, "6379": 16379, "11211": 21211, "3306": 13306, "5432": 15432, "27017": 37017}
}"#;

async fn connect(lab: &Lab, host: &str, port: u16) -> TcpStream {
    let addr: SocketAddr = lab.endpoint(host, port).unwrap_or_else(|| panic!("{host}:{port} is not in the lab"));
    TcpStream::connect(addr).await.unwrap()
}

/// Reads what arrives within a short wait (bounded).
async fn read_some(s: &mut TcpStream) -> Vec<u8> {
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await.unwrap().unwrap();
    buf.truncate(n);
    buf
}

async fn text(s: &mut TcpStream) -> String {
    String::from_utf8_lossy(&read_some(s).await).into_owned()
}

#[tokio::test]
async fn every_service_answers_like_the_real_thing_and_down_leaves_nothing() {
    let file = LabFile::parse(FILE).unwrap();
    assert_eq!(file.lab_port(22), 10_022, "privileged ports move up by 10000");
    assert_eq!(file.lab_port(6379), 16_379, "the port map wins");
    let lab = Lab::up(&file).await.unwrap();

    let mut ssh = connect(&lab, "shell.acme.test", 22).await;
    assert_eq!(text(&mut ssh).await, "SSH-2.0-OpenSSH_7.4\r\n");

    let mut ftp = connect(&lab, "shell.acme.test", 21).await;
    assert_eq!(text(&mut ftp).await, "220 (vsFTPd 2.3.4)\r\n");
    ftp.write_all(b"USER anonymous\r\n").await.unwrap();
    assert!(text(&mut ftp).await.starts_with("331 "));
    ftp.write_all(b"QUIT\r\n").await.unwrap();
    assert!(text(&mut ftp).await.starts_with("221 "));

    let mut telnet = connect(&lab, "shell.acme.test", 23).await;
    let hello = read_some(&mut telnet).await;
    assert_eq!(&hello[..3], &[255, 253, 24], "IAC DO TERMINAL-TYPE");

    let mut rdp = connect(&lab, "shell.acme.test", 3389).await;
    // TPKT + X.224 Connection Request with an RDP negotiation request for TLS.
    rdp.write_all(&[3, 0, 0, 19, 14, 0xe0, 0, 0, 0, 0, 0, 1, 0, 8, 0, 1, 0, 0, 0]).await.unwrap();
    let confirm = read_some(&mut rdp).await;
    assert_eq!((confirm[0], confirm[5], confirm[11]), (3, 0xd0, 2), "X.224 Connection Confirm, RDP_NEG_RSP");

    let mut smtp = connect(&lab, "mail.acme.test", 25).await;
    assert_eq!(text(&mut smtp).await, "220 mail.acme.test ESMTP Postfix\r\n");
    smtp.write_all(b"EHLO scanner.test\r\n").await.unwrap();
    let ehlo = text(&mut smtp).await;
    assert!(!ehlo.contains("STARTTLS") && ehlo.ends_with("250 8BITMIME\r\n"), "no TLS configured: {ehlo}");
    smtp.write_all(b"STARTTLS\r\n").await.unwrap();
    assert!(text(&mut smtp).await.starts_with("454 "), "STARTTLS refused without TLS");

    let mut redis = connect(&lab, "db.acme.test", 6379).await;
    redis.write_all(b"PING\r\n").await.unwrap();
    assert_eq!(text(&mut redis).await, "+PONG\r\n");
    redis.write_all(b"*1\r\n$4\r\nINFO\r\n").await.unwrap();
    assert!(text(&mut redis).await.contains("redis_version:5.0.7"));

    let mut mc = connect(&lab, "db.acme.test", 11211).await;
    mc.write_all(b"version\r\n").await.unwrap();
    assert_eq!(text(&mut mc).await, "VERSION 1.4.15\r\n");

    let mut mysql = connect(&lab, "db.acme.test", 3306).await;
    let greeting = read_some(&mut mysql).await;
    assert_eq!(greeting[4], 10, "protocol 10");
    assert!(String::from_utf8_lossy(&greeting).contains("5.7.33-0ubuntu0.18.04.1"));

    let mut pg = connect(&lab, "db.acme.test", 5432).await;
    pg.write_all(&[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]).await.unwrap();
    assert_eq!(read_some(&mut pg).await, b"N", "no TLS");
    let mut startup = vec![0, 0, 0, 0, 0, 3, 0, 0];
    startup.extend_from_slice(b"user\0scanner\0\0");
    let len = startup.len() as u32;
    startup[..4].copy_from_slice(&len.to_be_bytes());
    pg.write_all(&startup).await.unwrap();
    assert_eq!(read_some(&mut pg).await[0], b'R', "an authentication request");

    // MongoDB: an OP_QUERY isMaster on admin.$cmd, answered by an OP_REPLY whose BSON
    // document carries the version.
    let mut mongo = connect(&lab, "db.acme.test", 27017).await;
    let mut q = Vec::new();
    q.extend_from_slice(&0u32.to_le_bytes()); // flags
    q.extend_from_slice(b"admin.$cmd\0");
    q.extend_from_slice(&0u32.to_le_bytes()); // skip
    q.extend_from_slice(&1i32.to_le_bytes()); // return
    q.extend_from_slice(&[19, 0, 0, 0, 0x10, b'i', b's', b'M', b'a', b's', b't', b'e', b'r', 0, 1, 0, 0, 0, 0]);
    let mut msg = ((q.len() + 16) as u32).to_le_bytes().to_vec();
    msg.extend_from_slice(&7i32.to_le_bytes());
    msg.extend_from_slice(&0i32.to_le_bytes());
    msg.extend_from_slice(&2004i32.to_le_bytes());
    msg.extend_from_slice(&q);
    mongo.write_all(&msg).await.unwrap();
    let reply = read_some(&mut mongo).await;
    assert_eq!(i32::from_le_bytes(reply[8..12].try_into().unwrap()), 7, "responseTo");
    assert_eq!(i32::from_le_bytes(reply[12..16].try_into().unwrap()), 1, "OP_REPLY");
    let doc = String::from_utf8_lossy(&reply);
    assert!(doc.contains("version") && doc.contains("3.6.8"), "{doc:?}");

    // SMB: an SMB1 NEGOTIATE offering "SMB 2.002" in a NetBIOS session message.
    let mut smb = connect(&lab, "db.acme.test", 445).await;
    let mut negotiate = b"\xffSMB\x72".to_vec();
    negotiate.extend_from_slice(&[0; 27]);
    negotiate.extend_from_slice(&[0, 12, 0, 2]);
    negotiate.extend_from_slice(b"SMB 2.002\0");
    let mut frame = vec![0, 0, 0, negotiate.len() as u8];
    frame.extend_from_slice(&negotiate);
    smb.write_all(&frame).await.unwrap();
    let answer = read_some(&mut smb).await;
    assert_eq!(&answer[4..8], b"\xfeSMB", "an SMB2 header");
    assert_eq!(u16::from_le_bytes([answer[4 + 64 + 4], answer[4 + 64 + 5]]), 0x0210, "dialect 2.1");

    let addrs: Vec<SocketAddr> = lab.endpoints.iter().map(|(_, _, a)| *a).collect();
    assert_eq!(addrs.len(), 11);
    lab.down().await;
    for a in addrs {
        assert!(TcpStream::connect(a).await.is_err(), "{a} still listens after down");
    }
}

#[test]
fn only_loopback_addresses_are_accepted() {
    let outside = r#"{"hosts": [{"name": "x.test", "address": "10.0.0.1"}]}"#;
    assert!(matches!(LabFile::parse(outside), Err(LabError::NotLoopback { .. })));
    assert!(matches!(LabFile::parse(r#"{"hosts": [], "extra": 1}"#), Err(LabError::File(_))));
}

/// A second lab on the addresses of one that runs says, in one line, which address is
/// taken and which process holds it (here: this test's own process).
#[tokio::test]
async fn a_second_lab_on_taken_addresses_names_the_holder() {
    let file = LabFile::parse(
        r#"{"hosts": [{"name": "mail.taken.test", "address": "127.77.91.1", "services": [{"port": 25, "kind": "smtp"}]}]}"#,
    )
    .unwrap();
    let first = Lab::up(&file).await.unwrap();
    let err = Lab::up(&file).await.err().expect("the addresses are taken");
    let message = err.to_string();
    assert!(matches!(err, LabError::Taken { .. }), "{message}");
    assert!(
        message.starts_with("the lab's address 127.77.91.1:10025 (mail.taken.test) is taken by process "),
        "{message}"
    );
    assert!(message.contains(&format!("process {} (", std::process::id())), "{message}");
    assert!(!message.contains('\n'), "one line: {message}");
    first.down().await;
    Lab::up(&file).await.expect("free again once the first is down").down().await;
}
