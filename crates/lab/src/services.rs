//! The TCP services of the lab: each speaks just enough of its protocol for a scanner
//! to identify it as a real peer would be identified (banner, first exchange).

use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServiceKind {
    Ssh,
    Ftp,
    Smtp,
    Telnet,
    Redis,
    Memcached,
    Mysql,
    Postgresql,
    Rdp,
    Mongodb,
    Elasticsearch,
    Smb,
    /// Plain HTTP per the service's `http` spec.
    Http,
    /// TLS per the service's `tls` spec, then HTTP per its `http` spec.
    Https,
    /// A TLS endpoint only (IMAPS, SMTPS, …) per the service's `tls` spec.
    Tls,
}

/// The longest line or request a lab service reads.
const MAX_LINE: u64 = 4096;

type Io = BufReader<TcpStream>;

async fn line(io: &mut Io) -> std::io::Result<Option<String>> {
    let mut buf = String::new();
    let n = (&mut *io).take(MAX_LINE).read_line(&mut buf).await?;
    Ok((n > 0).then(|| buf.trim_end_matches(['\r', '\n']).to_owned()))
}

async fn send(io: &mut Io, bytes: &[u8]) -> std::io::Result<()> {
    io.get_mut().write_all(bytes).await
}

/// Serves one client of a `kind` service announcing `version` on host `name`.
pub(crate) async fn serve(
    kind: ServiceKind,
    stream: TcpStream,
    version: Option<&str>,
    name: &str,
    tls: Option<tokio_rustls::TlsAcceptor>,
) -> std::io::Result<()> {
    let mut io = BufReader::new(stream);
    match kind {
        ServiceKind::Ssh => {
            let v = version.unwrap_or("OpenSSH_7.4");
            send(&mut io, format!("SSH-2.0-{v}\r\n").as_bytes()).await?;
            // The client's identification, then the lab ends the exchange.
            line(&mut io).await?;
        }
        ServiceKind::Ftp => {
            send(&mut io, format!("220 ({})\r\n", version.unwrap_or("vsFTPd 2.3.4")).as_bytes()).await?;
            while let Some(l) = line(&mut io).await? {
                let verb = l.split_whitespace().next().unwrap_or("").to_ascii_uppercase();
                let reply: &[u8] = match verb.as_str() {
                    "USER" => b"331 Please specify the password.\r\n",
                    "PASS" => b"530 Login incorrect.\r\n",
                    "SYST" => b"215 UNIX Type: L8\r\n",
                    "QUIT" => {
                        send(&mut io, b"221 Goodbye.\r\n").await?;
                        break;
                    }
                    _ => b"500 Unknown command.\r\n",
                };
                send(&mut io, reply).await?;
            }
        }
        ServiceKind::Smtp => {
            let v = version.unwrap_or("Postfix");
            send(&mut io, format!("220 {name} ESMTP {v}\r\n").as_bytes()).await?;
            if smtp(&mut io, name, tls.is_some()).await? == Smtp::StartTls
                && let Some(acceptor) = tls
            {
                // Bytes a client pipelined after STARTTLS are dropped, as Postfix does.
                let stream = io.into_inner();
                let mut tls = BufReader::new(acceptor.accept(stream).await?);
                smtp(&mut tls, name, false).await?;
                tls.get_mut().shutdown().await.ok();
            }
            return Ok(());
        }
        ServiceKind::Telnet => {
            // IAC DO TERMINAL-TYPE, DO TERMINAL-SPEED, DO X-DISPLAY-LOCATION, DO NEW-ENVIRON.
            send(&mut io, &[255, 253, 24, 255, 253, 32, 255, 253, 35, 255, 253, 39]).await?;
            send(&mut io, format!("\r\n{name} login: ").as_bytes()).await?;
            line(&mut io).await?;
        }
        ServiceKind::Redis => redis(&mut io, version.unwrap_or("6.0.5")).await?,
        ServiceKind::Memcached => {
            let v = version.unwrap_or("1.4.15");
            while let Some(l) = line(&mut io).await? {
                let reply = match l.trim() {
                    "version" => format!("VERSION {v}\r\n"),
                    "stats" => format!("STAT pid 1\r\nSTAT version {v}\r\nEND\r\n"),
                    "quit" => break,
                    _ => "ERROR\r\n".to_owned(),
                };
                send(&mut io, reply.as_bytes()).await?;
            }
        }
        ServiceKind::Mysql => {
            send(&mut io, &mysql_handshake(version.unwrap_or("5.7.33-0ubuntu0.18.04.1"))).await?;
            // The client's login packet, then "access denied".
            let mut header = [0u8; 4];
            if io.read_exact(&mut header).await.is_ok() {
                let len = u32::from_le_bytes([header[0], header[1], header[2], 0]).min(MAX_LINE as u32);
                let mut body = vec![0u8; len as usize];
                io.read_exact(&mut body).await?;
                send(&mut io, &mysql_error(header[3].wrapping_add(1), "Access denied for user")).await?;
            }
        }
        ServiceKind::Postgresql => postgres(&mut io).await?,
        ServiceKind::Mongodb => mongodb(&mut io, version.unwrap_or("3.6.8")).await?,
        ServiceKind::Smb => {
            // A NetBIOS session message holding an SMB1 or SMB2 NEGOTIATE; the answer is
            // an SMB2 NEGOTIATE response selecting dialect 2.1 without signing required.
            let mut header = [0u8; 4];
            io.read_exact(&mut header).await?;
            let len = u32::from_be_bytes([0, header[1], header[2], header[3]]).min(MAX_LINE as u32);
            let mut body = vec![0u8; len as usize];
            io.read_exact(&mut body).await?;
            if body.starts_with(b"\xffSMB") || body.starts_with(b"\xfeSMB") {
                send(&mut io, &smb2_negotiate_response()).await?;
            }
        }
        ServiceKind::Http | ServiceKind::Https | ServiceKind::Tls | ServiceKind::Elasticsearch => {}
        ServiceKind::Rdp => {
            // An X.224 Connection Request in a TPKT; answered with a Connection Confirm
            // whose negotiation response selects TLS.
            let mut tpkt = [0u8; 4];
            io.read_exact(&mut tpkt).await?;
            if tpkt[0] == 3 {
                let len = u16::from_be_bytes([tpkt[2], tpkt[3]]).saturating_sub(4).min(MAX_LINE as u16);
                let mut rest = vec![0u8; usize::from(len)];
                io.read_exact(&mut rest).await?;
                send(&mut io, &[3, 0, 0, 19, 14, 0xd0, 0, 0, 0x12, 0x34, 0, 2, 0x01, 8, 0, 1, 0, 0, 0]).await?;
            }
        }
    }
    io.get_mut().shutdown().await.ok();
    Ok(())
}

#[derive(PartialEq, Eq)]
enum Smtp {
    Quit,
    StartTls,
}

/// An SMTP dialogue after the greeting: EHLO/HELO/NOOP/QUIT, and STARTTLS when `tls`
/// is offered (the caller then upgrades the connection).
async fn smtp<S: AsyncRead + AsyncWrite + Unpin>(
    io: &mut BufReader<S>,
    name: &str,
    offer_tls: bool,
) -> std::io::Result<Smtp> {
    loop {
        let mut buf = String::new();
        if (&mut *io).take(MAX_LINE).read_line(&mut buf).await? == 0 {
            return Ok(Smtp::Quit);
        }
        let verb = buf.split_whitespace().next().unwrap_or("").to_ascii_uppercase();
        let reply = match verb.as_str() {
            "EHLO" if offer_tls => {
                format!("250-{name}\r\n250-PIPELINING\r\n250-SIZE 10240000\r\n250-STARTTLS\r\n250 8BITMIME\r\n")
            }
            "EHLO" => format!("250-{name}\r\n250-PIPELINING\r\n250-SIZE 10240000\r\n250 8BITMIME\r\n"),
            "HELO" => format!("250 {name}\r\n"),
            "STARTTLS" if offer_tls => {
                io.get_mut().write_all(b"220 2.0.0 Ready to start TLS\r\n").await?;
                return Ok(Smtp::StartTls);
            }
            "STARTTLS" => "454 4.7.0 TLS not available due to local problem\r\n".to_owned(),
            "NOOP" => "250 2.0.0 Ok\r\n".to_owned(),
            "QUIT" => {
                io.get_mut().write_all(b"221 2.0.0 Bye\r\n").await?;
                return Ok(Smtp::Quit);
            }
            _ => "502 5.5.2 Error: command not recognized\r\n".to_owned(),
        };
        io.get_mut().write_all(reply.as_bytes()).await?;
    }
}

async fn redis(io: &mut Io, version: &str) -> std::io::Result<()> {
    while let Some(first) = line(io).await? {
        // A RESP array of bulk strings, or an inline command.
        let mut words: Vec<String> = Vec::new();
        if let Some(n) = first.strip_prefix('*').and_then(|n| n.parse::<usize>().ok()) {
            for _ in 0..n.min(16) {
                let Some(_len) = line(io).await? else { return Ok(()) };
                let Some(word) = line(io).await? else { return Ok(()) };
                words.push(word);
            }
        } else {
            words = first.split_whitespace().map(str::to_owned).collect();
        }
        let command = words.first().map(|w| w.to_ascii_uppercase()).unwrap_or_default();
        let reply = match command.as_str() {
            "PING" => "+PONG\r\n".to_owned(),
            "INFO" => {
                let info = format!(
                    "# Server\r\nredis_version:{version}\r\nredis_mode:standalone\r\nos:Linux 5.4.0 x86_64\r\n"
                );
                format!("${}\r\n{info}\r\n", info.len())
            }
            "QUIT" => {
                send(io, b"+OK\r\n").await?;
                return Ok(());
            }
            other => format!("-ERR unknown command '{}'\r\n", other.to_ascii_lowercase()),
        };
        send(io, reply.as_bytes()).await?;
    }
    Ok(())
}

async fn postgres(io: &mut Io) -> std::io::Result<()> {
    loop {
        let mut header = [0u8; 8];
        io.read_exact(&mut header).await?;
        let len = u32::from_be_bytes([header[0], header[1], header[2], header[3]]);
        let code = u32::from_be_bytes([header[4], header[5], header[6], header[7]]);
        if code == 80_877_103 {
            // SSLRequest: no TLS here; the client goes on in the clear.
            send(io, b"N").await?;
            continue;
        }
        let rest = len.saturating_sub(8).min(MAX_LINE as u32);
        let mut body = vec![0u8; rest as usize];
        io.read_exact(&mut body).await?;
        // AuthenticationMD5Password with a salt, as a server with md5 auth answers.
        send(io, &[b'R', 0, 0, 0, 12, 0, 0, 0, 5, 0x12, 0x34, 0x56, 0x78]).await?;
        return Ok(());
    }
}

/// MongoDB's wire protocol: an OP_QUERY or OP_MSG asking `isMaster`/`hello`/`buildInfo`
/// is answered with a BSON document carrying the server version.
async fn mongodb(io: &mut Io, version: &str) -> std::io::Result<()> {
    loop {
        let mut header = [0u8; 16];
        if io.read_exact(&mut header).await.is_err() {
            return Ok(());
        }
        let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        let request_id = i32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        let opcode = i32::from_le_bytes([header[12], header[13], header[14], header[15]]);
        let rest = len.saturating_sub(16).min(MAX_LINE as u32);
        let mut body = vec![0u8; rest as usize];
        io.read_exact(&mut body).await?;
        let doc = bson_doc(&[
            ("ismaster", Bson::Bool(true)),
            ("maxWireVersion", Bson::Int(6)),
            ("minWireVersion", Bson::Int(0)),
            ("version", Bson::Str(version)),
            ("gitVersion", Bson::Str("8e540c0b6db93ce994cc548f000900bdc740f80a")),
            ("ok", Bson::Double(1.0)),
        ]);
        let reply = match opcode {
            // OP_MSG: flags, section kind 0, the document.
            2013 => {
                let mut b = 0u32.to_le_bytes().to_vec();
                b.push(0);
                b.extend_from_slice(&doc);
                mongo_message(request_id, 2013, &b)
            }
            // OP_QUERY → OP_REPLY: flags, cursor id, starting from, number returned, docs.
            2004 => {
                let mut b = 0u32.to_le_bytes().to_vec();
                b.extend_from_slice(&0u64.to_le_bytes());
                b.extend_from_slice(&0u32.to_le_bytes());
                b.extend_from_slice(&1u32.to_le_bytes());
                b.extend_from_slice(&doc);
                mongo_message(request_id, 1, &b)
            }
            _ => return Ok(()),
        };
        send(io, &reply).await?;
    }
}

enum Bson<'a> {
    Bool(bool),
    Int(i32),
    Double(f64),
    Str(&'a str),
}

fn bson_doc(fields: &[(&str, Bson<'_>)]) -> Vec<u8> {
    let mut body = Vec::new();
    for (name, value) in fields {
        let kind: u8 = match value {
            Bson::Double(_) => 0x01,
            Bson::Str(_) => 0x02,
            Bson::Bool(_) => 0x08,
            Bson::Int(_) => 0x10,
        };
        body.push(kind);
        body.extend_from_slice(name.as_bytes());
        body.push(0);
        match value {
            Bson::Double(d) => body.extend_from_slice(&d.to_le_bytes()),
            Bson::Str(s) => {
                body.extend_from_slice(&(s.len() as i32 + 1).to_le_bytes());
                body.extend_from_slice(s.as_bytes());
                body.push(0);
            }
            Bson::Bool(b) => body.push(u8::from(*b)),
            Bson::Int(i) => body.extend_from_slice(&i.to_le_bytes()),
        }
    }
    let mut doc = ((body.len() + 5) as i32).to_le_bytes().to_vec();
    doc.extend_from_slice(&body);
    doc.push(0);
    doc
}

fn mongo_message(response_to: i32, opcode: i32, body: &[u8]) -> Vec<u8> {
    let mut m = ((body.len() + 16) as i32).to_le_bytes().to_vec();
    m.extend_from_slice(&1i32.to_le_bytes());
    m.extend_from_slice(&response_to.to_le_bytes());
    m.extend_from_slice(&opcode.to_le_bytes());
    m.extend_from_slice(body);
    m
}

/// An SMB2 NEGOTIATE response (MS-SMB2 2.2.4) in a NetBIOS session message.
fn smb2_negotiate_response() -> Vec<u8> {
    let mut h = Vec::with_capacity(64 + 65);
    h.extend_from_slice(b"\xfeSMB");
    h.extend_from_slice(&64u16.to_le_bytes()); // structure size
    h.extend_from_slice(&0u16.to_le_bytes()); // credit charge
    h.extend_from_slice(&0u32.to_le_bytes()); // status: success
    h.extend_from_slice(&0u16.to_le_bytes()); // command: NEGOTIATE
    h.extend_from_slice(&1u16.to_le_bytes()); // credits
    h.extend_from_slice(&1u32.to_le_bytes()); // flags: response
    h.extend_from_slice(&0u32.to_le_bytes()); // next command
    h.extend_from_slice(&0u64.to_le_bytes()); // message id
    h.extend_from_slice(&0u32.to_le_bytes()); // reserved
    h.extend_from_slice(&0u32.to_le_bytes()); // tree id
    h.extend_from_slice(&0u64.to_le_bytes()); // session id
    h.extend_from_slice(&[0u8; 16]); // signature
    let mut b = Vec::new();
    b.extend_from_slice(&65u16.to_le_bytes()); // structure size
    b.extend_from_slice(&1u16.to_le_bytes()); // security mode: signing enabled, not required
    b.extend_from_slice(&0x0210u16.to_le_bytes()); // dialect SMB 2.1
    b.extend_from_slice(&0u16.to_le_bytes());
    b.extend_from_slice(b"LAB-SMB-SERVER\0\0"); // server GUID (16 bytes)
    b.extend_from_slice(&0x7u32.to_le_bytes()); // capabilities
    for size in [65_536u32, 65_536, 65_536] {
        b.extend_from_slice(&size.to_le_bytes()); // max transact/read/write
    }
    b.extend_from_slice(&0u64.to_le_bytes()); // system time
    b.extend_from_slice(&0u64.to_le_bytes()); // boot time
    b.extend_from_slice(&128u16.to_le_bytes()); // security buffer offset
    b.extend_from_slice(&0u16.to_le_bytes()); // security buffer length
    b.extend_from_slice(&0u32.to_le_bytes());
    b.push(0);
    h.extend_from_slice(&b);
    let len = h.len() as u32;
    let mut out = vec![0u8];
    out.extend_from_slice(&len.to_be_bytes()[1..]);
    out.extend_from_slice(&h);
    out
}

fn mysql_handshake(version: &str) -> Vec<u8> {
    let mut p = vec![10u8];
    p.extend_from_slice(version.as_bytes());
    p.push(0);
    p.extend_from_slice(&7u32.to_le_bytes()); // connection id
    p.extend_from_slice(b"abcdefgh"); // auth-plugin-data part 1
    p.push(0);
    p.extend_from_slice(&0xf7ffu16.to_le_bytes()); // capabilities (low)
    p.push(8); // latin1
    p.extend_from_slice(&2u16.to_le_bytes()); // autocommit
    p.extend_from_slice(&0x81ffu16.to_le_bytes()); // capabilities (high), with plugin auth
    p.push(21);
    p.extend_from_slice(&[0; 10]);
    p.extend_from_slice(b"ijklmnopqrst\0"); // auth-plugin-data part 2
    p.extend_from_slice(b"mysql_native_password\0");
    packet(0, &p)
}

fn mysql_error(seq: u8, message: &str) -> Vec<u8> {
    let mut p = vec![0xff];
    p.extend_from_slice(&1045u16.to_le_bytes());
    p.extend_from_slice(b"#28000");
    p.extend_from_slice(message.as_bytes());
    packet(seq, &p)
}

fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut out = len.to_le_bytes()[..3].to_vec();
    out.push(seq);
    out.extend_from_slice(payload);
    out
}
