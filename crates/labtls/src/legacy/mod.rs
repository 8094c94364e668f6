//! The legacy TLS responder: SSLv2 (ServerHello only), SSLv3 and TLS 1.0–1.2 first
//! flights for the suites modern stacks no longer have.
//!
//! One connection goes: read a ClientHello (TLS records, possibly fragmented, or the
//! SSLv2 format; at most [`MAX_HELLO`](hello::MAX_HELLO) bytes, [`READ_TIMEOUT`] per
//! read) → pick the version (the highest configured ≤ the client's) and the suite (the
//! client's order, or the server's with `server_preference`) → send ServerHello,
//! Certificate (not for anonymous suites), ServerKeyExchange (when the suite has one) and
//! ServerHelloDone in one write → answer heartbeat requests (leaking fake memory when
//! `heartbleed`) → close on anything else, on end of stream or after [`READ_TIMEOUT`] of
//! silence. No version in common: a fatal `protocol_version` alert; no suite in common: a
//! fatal `handshake_failure` alert. The whole connection is bounded by
//! [`CONNECTION_DEADLINE`].
//!
//! The handshake is never completed: see the crate docs for what is placeholder.

mod hello;
mod kx;
mod suites;

use std::time::Duration;

use ring::rand::{SecureRandom, SystemRandom};
use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub use suites::{
    Authentication, CipherSuite, KeyExchange, SSL2_CIPHERS, SUITES, Ssl2Cipher, ssl2_cipher_by_name, suite_by_code,
    suite_by_name,
};

use crate::{IssuedCert, KeyType, TlsError, TlsVersion};
use hello::{ClientHello, MAX_FRAGMENT, Parsed};

/// Silence allowed between two reads.
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest one connection may last.
pub const CONNECTION_DEADLINE: Duration = Duration::from_secs(60);
/// Heartbeat responses never claim more than this.
pub const MAX_HEARTBEAT_PAYLOAD: usize = 16384;
/// Records after the first flight the responder reads before it closes.
const MAX_RECORDS_AFTER_FLIGHT: usize = 64;
/// Largest record body accepted after the first flight (TLSCiphertext limit).
const MAX_RECORD_BODY: usize = 16384 + 2048;

const ALERT_HANDSHAKE_FAILURE: u8 = 40;
const ALERT_DECODE_ERROR: u8 = 50;
const ALERT_PROTOCOL_VERSION: u8 = 70;

const EXT_SUPPORTED_GROUPS: u16 = 10;
const EXT_EC_POINT_FORMATS: u16 = 11;
const EXT_HEARTBEAT: u16 = 15;
const EXT_RENEGOTIATION_INFO: u16 = 0xff01;
const SCSV_EMPTY_RENEGOTIATION_INFO: u16 = 0x00ff;

/// The "process memory" a Heartbleed response leaks after the echoed payload.
const FAKE_MEMORY: &[u8] = b"\x00\x00\x00\x01\x17\x03\x01\x02\x00POST /account/login HTTP/1.1\r\n\
Host: legacy.lab.rampart.test\r\nUser-Agent: Mozilla/5.0 (lab)\r\n\
Cookie: session=lab-secret-7f3a9c2e41d8b6f0; csrftoken=lab-csrf-0d9e8f7a\r\n\
Authorization: Basic bGFiLWFkbWluOmxhYi1wYXNzd29yZC1odW50ZXIy\r\n\
Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 52\r\n\r\n\
username=lab-admin&password=lab-password-hunter2&remember=1\x00\xde\xad\xbe\xef\
-----BEGIN LAB PRIVATE KEY (fake)-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ\n\x00\x00";

fn yes() -> bool {
    true
}

/// How a legacy host answers (one per host in the lab file).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LegacyConfig {
    /// Accepted: `ssl2`, `ssl3`, `tls1.0`, `tls1.1`, `tls1.2`.
    pub versions: Vec<TlsVersion>,
    /// IANA (`TLS_RSA_WITH_RC4_128_MD5`) or OpenSSL (`RC4-MD5`) names from [`SUITES`], in
    /// the server's order; SSLv2 kinds (`SSL_CK_RC4_128_WITH_MD5`, [`SSL2_CIPHERS`]) for
    /// an `ssl2` host. Unknown names are a config error.
    pub suites: Vec<String>,
    /// DH group for DHE/ADH suites: 1024 (RFC 2409 group 2) or 2048 (RFC 3526 group 14,
    /// the default); 512 is accepted too. EXPORT DH suites always use a 512-bit group.
    #[serde(default)]
    pub dh_bits: Option<u16>,
    /// Answer heartbeat requests with the length they claim, filled from fake memory.
    #[serde(default)]
    pub heartbleed: bool,
    /// Send renegotiation_info when the client sent it or the SCSV.
    #[serde(default = "yes")]
    pub secure_renegotiation: bool,
    /// Select DEFLATE (1) when the client offers it (CRIME).
    #[serde(default)]
    pub compression: bool,
    /// Pick by the server's suite order instead of the client's.
    #[serde(default)]
    pub server_preference: bool,
}

/// A config with its names looked up.
#[derive(Debug)]
struct Resolved {
    /// TLS-family wire versions, highest first.
    versions: Vec<u16>,
    ssl2: bool,
    suites: Vec<&'static CipherSuite>,
    ssl2_ciphers: Vec<&'static Ssl2Cipher>,
    dh_bits: u16,
}

impl LegacyConfig {
    /// Checks names, versions and the DH size (what `serve_legacy` would refuse).
    pub fn validate(&self) -> Result<(), TlsError> {
        self.resolve().map(|_| ())
    }

    /// Also checks that every authenticated suite matches the leaf's key (RSA suites need
    /// `Rsa2048`/`Rsa1024`, ECDSA suites a P-256 leaf). The responder serves mismatches
    /// anyway — a client that checks will then refuse the certificate — so this is for a
    /// lab loader that wants faithful hosts.
    pub fn validate_for(&self, cert: &IssuedCert) -> Result<(), TlsError> {
        let resolved = self.resolve()?;
        let leaf_auth = match cert.variant.key_type() {
            KeyType::EcdsaP256 => Authentication::Ecdsa,
            KeyType::Rsa1024 | KeyType::Rsa2048 => Authentication::Rsa,
        };
        for suite in resolved.suites {
            if suite.auth != Authentication::Anonymous && suite.auth != leaf_auth {
                return Err(TlsError::Config(format!(
                    "{} needs a {:?} certificate but the {:?} leaf is {:?}",
                    suite.iana,
                    suite.auth,
                    cert.variant,
                    cert.variant.key_type()
                )));
            }
        }
        Ok(())
    }

    fn resolve(&self) -> Result<Resolved, TlsError> {
        let mut versions = Vec::new();
        let mut ssl2 = false;
        for &v in &self.versions {
            match v {
                TlsVersion::Ssl2 => ssl2 = true,
                TlsVersion::Tls13 => {
                    return Err(TlsError::UnsupportedVersion { version: v, host: "legacy" });
                }
                other => versions.push(other.wire()),
            }
        }
        versions.sort_unstable_by(|a, b| b.cmp(a));
        versions.dedup();
        let mut suites = Vec::new();
        let mut ssl2_ciphers = Vec::new();
        for name in &self.suites {
            if let Some(s) = suite_by_name(name) {
                if !suites.contains(&s) {
                    suites.push(s);
                }
            } else if let Some(c) = ssl2_cipher_by_name(name) {
                if !ssl2_ciphers.contains(&c) {
                    ssl2_ciphers.push(c);
                }
            } else {
                return Err(TlsError::UnknownSuite(name.clone()));
            }
        }
        if versions.is_empty() && !ssl2 {
            return Err(TlsError::Config("no versions".into()));
        }
        if !versions.is_empty() && suites.is_empty() {
            return Err(TlsError::Config("SSLv3/TLS versions but no TLS cipher suites".into()));
        }
        if ssl2 && ssl2_ciphers.is_empty() {
            return Err(TlsError::Config("ssl2 but no SSL_CK_* ciphers".into()));
        }
        let dh_bits = self.dh_bits.unwrap_or(2048);
        if kx::dh_prime(dh_bits).is_none() {
            return Err(TlsError::Config(format!("dh_bits {dh_bits}: use 1024 or 2048 (or 512)")));
        }
        Ok(Resolved { versions, ssl2, suites, ssl2_ciphers, dh_bits })
    }
}

/// Answers one connection as a legacy TLS server (see the module docs).
///
/// Returns `Ok` when the exchange ended as designed (flight sent, alert sent, client
/// gone, idle); errors on a bad config, malformed client bytes (after a `decode_error`
/// alert), I/O failures, or a client too slow for [`READ_TIMEOUT`] before its ClientHello.
pub async fn serve_legacy(mut stream: TcpStream, config: &LegacyConfig, cert: &IssuedCert) -> Result<(), TlsError> {
    let resolved = config.resolve()?;
    match tokio::time::timeout(CONNECTION_DEADLINE, serve(&mut stream, config, &resolved, cert)).await {
        Ok(result) => result,
        Err(_) => Err(TlsError::Timeout),
    }
}

async fn serve(
    stream: &mut TcpStream,
    config: &LegacyConfig,
    resolved: &Resolved,
    cert: &IssuedCert,
) -> Result<(), TlsError> {
    let mut buf = Vec::with_capacity(1024);
    let hello = match read_client_hello(stream, &mut buf).await {
        Ok(hello) => hello,
        Err(TlsError::Malformed(what)) => {
            if buf.first() == Some(&22) {
                let _ = write_all(stream, &alert(0x0301, ALERT_DECODE_ERROR)).await;
            }
            return Err(TlsError::Malformed(what));
        }
        Err(e) => return Err(e),
    };
    let rng = SystemRandom::new();

    if hello.sslv2_format && hello.client_version == TlsVersion::Ssl2.wire() {
        if !resolved.ssl2 {
            return Ok(()); // a server without SSLv2 just hangs up
        }
        let reply = ssl2_server_hello(&hello, resolved, cert, &rng)?;
        write_all(stream, &reply).await?;
        let _ = read_record(stream, &mut buf).await;
        return Ok(());
    }

    let alert_version = if (0x0300..=0x0303).contains(&hello.record_version) { hello.record_version } else { 0x0301 };
    let Some(version) = resolved.versions.iter().copied().find(|&v| v <= hello.client_version) else {
        write_all(stream, &alert(alert_version, ALERT_PROTOCOL_VERSION)).await?;
        return Ok(());
    };
    let Some(suite) = choose_suite(&hello, resolved, config.server_preference, version) else {
        write_all(stream, &alert(version, ALERT_HANDSHAKE_FAILURE)).await?;
        return Ok(());
    };

    let flight = first_flight(&hello, config, resolved, cert, version, suite, &rng)?;
    write_all(stream, &flight).await?;
    after_flight(stream, &mut buf, version, config.heartbleed).await
}

/// Reads until a whole ClientHello is in `buf`; leaves what followed it in `buf`.
async fn read_client_hello(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<ClientHello, TlsError> {
    loop {
        if let Parsed::Hello(hello, used) = hello::parse_client_hello(buf)? {
            buf.drain(..used);
            return Ok(hello);
        }
        // Bounded: at most twice the largest hello (room for record headers of a fragmented one).
        if buf.len() > 2 * (hello::MAX_HELLO + 5) {
            return Err(TlsError::Malformed("ClientHello spread over too many records"));
        }
        if read_some(stream, buf).await? == 0 {
            return Err(TlsError::Closed);
        }
    }
}

/// One read of at most 4 KiB with [`READ_TIMEOUT`]; the number of bytes read.
async fn read_some(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<usize, TlsError> {
    let mut chunk = [0u8; 4096];
    let n = tokio::time::timeout(READ_TIMEOUT, stream.read(&mut chunk)).await.map_err(|_| TlsError::Timeout)??;
    buf.extend_from_slice(&chunk[..n]);
    Ok(n)
}

async fn write_all(stream: &mut TcpStream, bytes: &[u8]) -> Result<(), TlsError> {
    tokio::time::timeout(READ_TIMEOUT, stream.write_all(bytes)).await.map_err(|_| TlsError::Timeout)??;
    Ok(())
}

/// Reads one TLS record (type, body); `None` at end of stream.
async fn read_record(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<Option<(u8, Vec<u8>)>, TlsError> {
    loop {
        if buf.len() >= 5 {
            let len = usize::from(u16::from_be_bytes([buf[3], buf[4]]));
            if len > MAX_RECORD_BODY {
                return Err(TlsError::Malformed("record too long"));
            }
            if buf.len() >= 5 + len {
                let kind = buf[0];
                let body = buf[5..5 + len].to_vec();
                buf.drain(..5 + len);
                return Ok(Some((kind, body)));
            }
        }
        if read_some(stream, buf).await? == 0 {
            return Ok(None);
        }
    }
}

/// After ServerHelloDone: heartbeats are answered, anything else ends the connection.
async fn after_flight(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    version: u16,
    heartbleed: bool,
) -> Result<(), TlsError> {
    for _ in 0..MAX_RECORDS_AFTER_FLIGHT {
        let record = match read_record(stream, buf).await {
            Ok(Some(record)) => record,
            Ok(None) | Err(TlsError::Timeout) => return Ok(()),
            Err(e) => return Err(e),
        };
        match record {
            (24, body) => {
                if let Some(response) = heartbeat_response(&body, heartbleed) {
                    write_all(stream, &record_bytes(24, version, &response)).await?;
                }
                // Not vulnerable: a request is silently discarded (RFC 6520 §4 for the
                // malformed ones; the lab discards all of them).
            }
            _ => return Ok(()),
        }
    }
    Ok(())
}

/// The heartbeat_response body to a request, if the host answers it: with `heartbleed`,
/// a payload of the length the request *claims* (capped at [`MAX_HEARTBEAT_PAYLOAD`]):
/// the real payload, then fake memory.
pub(crate) fn heartbeat_response(request: &[u8], heartbleed: bool) -> Option<Vec<u8>> {
    let (&kind, rest) = request.split_first()?;
    if kind != 1 || rest.len() < 2 || !heartbleed {
        return None;
    }
    let claimed = usize::from(u16::from_be_bytes([rest[0], rest[1]])).min(MAX_HEARTBEAT_PAYLOAD);
    let actual = &rest[2..];
    let mut response = Vec::with_capacity(3 + claimed + 16);
    response.push(2);
    response.extend_from_slice(&(claimed as u16).to_be_bytes());
    response.extend(actual.iter().chain(FAKE_MEMORY.iter().cycle()).take(claimed));
    response.extend_from_slice(&[0u8; 16]); // padding
    Some(response)
}

fn choose_suite(
    hello: &ClientHello,
    resolved: &Resolved,
    server_preference: bool,
    version: u16,
) -> Option<&'static CipherSuite> {
    let p256 = match hello.extension(EXT_SUPPORTED_GROUPS) {
        None => true, // RFC 4492 §4: no extension, any curve
        Some(data) => {
            let mut r = hello::Reader::new(data);
            r.vec16().map(|list| list.chunks_exact(2).any(|c| c == kx::SECP256R1.to_be_bytes())).unwrap_or(false)
        }
    };
    let eligible = |s: &&'static CipherSuite| (!s.tls12_only || version >= 0x0303) && (!s.kx.elliptic() || p256);
    if server_preference {
        resolved.suites.iter().copied().filter(eligible).find(|s| hello.suites.contains(&s.code))
    } else {
        hello.suites.iter().filter_map(|&code| resolved.suites.iter().copied().find(|s| s.code == code)).find(eligible)
    }
}

fn handshake(kind: u8, body: &[u8], out: &mut Vec<u8>) {
    let len = body.len() as u32;
    out.push(kind);
    out.extend_from_slice(&len.to_be_bytes()[1..]);
    out.extend_from_slice(body);
}

/// Wraps `payload` in records of at most 16 KiB.
fn record_bytes(kind: u8, version: u16, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 5 * (payload.len() / MAX_FRAGMENT + 1));
    // Heartbeat responses may exceed one fragment (as vulnerable OpenSSL's did): one record.
    let size = if kind == 24 { MAX_RECORD_BODY } else { MAX_FRAGMENT };
    for chunk in payload.chunks(size) {
        out.push(kind);
        out.extend_from_slice(&version.to_be_bytes());
        out.extend_from_slice(&(chunk.len() as u16).to_be_bytes());
        out.extend_from_slice(chunk);
    }
    out
}

fn alert(version: u16, description: u8) -> Vec<u8> {
    record_bytes(21, version, &[2, description])
}

fn random32(rng: &SystemRandom) -> Result<[u8; 32], TlsError> {
    let mut out = [0u8; 32];
    rng.fill(&mut out).map_err(|_| TlsError::Crypto("random"))?;
    Ok(out)
}

fn first_flight(
    hello: &ClientHello,
    config: &LegacyConfig,
    resolved: &Resolved,
    cert: &IssuedCert,
    version: u16,
    suite: &'static CipherSuite,
    rng: &SystemRandom,
) -> Result<Vec<u8>, TlsError> {
    let server_random = random32(rng)?;
    let session_id = random32(rng)?;

    let mut extensions = Vec::new();
    let wants_reneg =
        hello.extension(EXT_RENEGOTIATION_INFO).is_some() || hello.suites.contains(&SCSV_EMPTY_RENEGOTIATION_INFO);
    if config.secure_renegotiation && wants_reneg {
        extensions.extend_from_slice(&EXT_RENEGOTIATION_INFO.to_be_bytes());
        extensions.extend_from_slice(&[0, 1, 0]);
    }
    if suite.kx.elliptic() && hello.extension(EXT_EC_POINT_FORMATS).is_some() {
        extensions.extend_from_slice(&EXT_EC_POINT_FORMATS.to_be_bytes());
        extensions.extend_from_slice(&[0, 2, 1, 0]); // uncompressed
    }
    if config.heartbleed && hello.extension(EXT_HEARTBEAT).is_some() {
        extensions.extend_from_slice(&EXT_HEARTBEAT.to_be_bytes());
        extensions.extend_from_slice(&[0, 1, 1]); // peer_allowed_to_send
    }

    let mut sh = Vec::with_capacity(80 + extensions.len());
    sh.extend_from_slice(&version.to_be_bytes());
    sh.extend_from_slice(&server_random);
    sh.push(32);
    sh.extend_from_slice(&session_id);
    sh.extend_from_slice(&suite.code.to_be_bytes());
    sh.push(u8::from(config.compression && hello.compression.contains(&1)));
    if !extensions.is_empty() {
        sh.extend_from_slice(&(extensions.len() as u16).to_be_bytes());
        sh.extend_from_slice(&extensions);
    }

    let mut messages = Vec::with_capacity(4096);
    handshake(2, &sh, &mut messages);
    if !suite.kx.anonymous() {
        let mut list = Vec::new();
        for c in &cert.chain {
            list.extend_from_slice(&(c.len() as u32).to_be_bytes()[1..]);
            list.extend_from_slice(c);
        }
        let mut body = Vec::with_capacity(list.len() + 3);
        body.extend_from_slice(&(list.len() as u32).to_be_bytes()[1..]);
        body.extend_from_slice(&list);
        handshake(11, &body, &mut messages);
    }
    let input = kx::KxInput {
        kx: suite.kx,
        version,
        client_random: &hello.random,
        server_random: &server_random,
        dh_bits: resolved.dh_bits,
        cert,
    };
    if let Some(ske) = kx::server_key_exchange(&input, rng)? {
        handshake(12, &ske, &mut messages);
    }
    handshake(14, &[], &mut messages);
    Ok(record_bytes(22, version, &messages))
}

/// The SSLv2 SERVER-HELLO (certificate = the leaf, cipher kinds in common), or an SSLv2
/// ERROR (NO-CIPHER) when nothing is in common.
fn ssl2_server_hello(
    hello: &ClientHello,
    resolved: &Resolved,
    cert: &IssuedCert,
    rng: &SystemRandom,
) -> Result<Vec<u8>, TlsError> {
    let common: Vec<u32> =
        resolved.ssl2_ciphers.iter().map(|c| c.code).filter(|code| hello.ssl2_ciphers.contains(code)).collect();
    let body = if common.is_empty() {
        vec![0, 0, 1]
    } else {
        let leaf = cert.leaf().map(|c| c.as_ref()).unwrap_or_default();
        let connection_id = random32(rng)?;
        let mut body = vec![4, 0, 1, 0, 2];
        body.extend_from_slice(&(leaf.len() as u16).to_be_bytes());
        body.extend_from_slice(&((common.len() * 3) as u16).to_be_bytes());
        body.extend_from_slice(&16u16.to_be_bytes());
        body.extend_from_slice(leaf);
        for code in common {
            body.extend_from_slice(&code.to_be_bytes()[1..]);
        }
        body.extend_from_slice(&connection_id[..16]);
        body
    };
    if body.len() > 0x7fff {
        return Err(TlsError::Config("certificate too large for an SSLv2 record".into()));
    }
    let mut out = vec![0x80 | (body.len() >> 8) as u8, body.len() as u8];
    out.extend_from_slice(&body);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(json: &str) -> LegacyConfig {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn config_defaults_and_errors() {
        let c = config(r#"{"versions":["ssl3","tls1.0"],"suites":["RC4-MD5","TLS_RSA_WITH_3DES_EDE_CBC_SHA"]}"#);
        assert!(c.secure_renegotiation && !c.heartbleed && !c.compression && !c.server_preference);
        let r = c.resolve().unwrap();
        assert_eq!(r.versions, vec![0x0301, 0x0300]);
        assert_eq!(r.dh_bits, 2048);
        assert!(matches!(
            config(r#"{"versions":["tls1.0"],"suites":["TLS_BOGUS"]}"#).validate(),
            Err(TlsError::UnknownSuite(_))
        ));
        assert!(config(r#"{"versions":["tls1.3"],"suites":["RC4-MD5"]}"#).validate().is_err());
        assert!(config(r#"{"versions":["tls1.0"],"suites":["RC4-MD5"],"dh_bits":768}"#).validate().is_err());
        assert!(config(r#"{"versions":["ssl2"],"suites":["RC4-MD5"]}"#).validate().is_err());
        assert!(serde_json::from_str::<LegacyConfig>(r#"{"versions":[],"suites":[],"bogus":1}"#).is_err());
    }

    #[test]
    fn heartbeat_leaks_only_when_vulnerable() {
        let request = [1u8, 0x40, 0x00, b'a', b'b', b'c'];
        let leaked = heartbeat_response(&request, true).unwrap();
        assert_eq!(leaked.len(), 3 + 16384 + 16);
        assert_eq!(&leaked[3..6], b"abc");
        assert!(leaked.windows(18).any(|w| w == b"session=lab-secret"));
        assert!(heartbeat_response(&request, false).is_none());
        assert!(heartbeat_response(&[], true).is_none());
        assert!(heartbeat_response(&[1, 0], true).is_none());
        assert!(heartbeat_response(&[2, 0, 1, 0], true).is_none());
        assert_eq!(heartbeat_response(&[1, 0xff, 0xff], true).unwrap().len(), 3 + MAX_HEARTBEAT_PAYLOAD + 16);
    }
}
