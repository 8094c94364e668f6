//! Shared helpers: a lab CA, a legacy server on an ephemeral port, a ClientHello builder
//! and a reader for the server's first flight.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use labtls::{CertVariant, IssuedCert, LabCa, LegacyConfig, serve_legacy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub const HOST: &str = "host.lab.test";

pub fn ca() -> &'static LabCa {
    static CA: OnceLock<LabCa> = OnceLock::new();
    CA.get_or_init(|| LabCa::new().unwrap())
}

pub fn issue(variant: CertVariant) -> IssuedCert {
    ca().issue(&[HOST.to_owned(), "127.0.0.1".to_owned()], variant).unwrap()
}

/// Starts a legacy host on 127.0.0.1:0 that serves every connection.
pub async fn legacy_server(config_json: &str, variant: CertVariant) -> (SocketAddr, Arc<IssuedCert>) {
    let config: Arc<LegacyConfig> = Arc::new(serde_json::from_str(config_json).unwrap());
    config.validate().unwrap();
    let cert = Arc::new(issue(variant));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = cert.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (config, cert) = (config.clone(), cert.clone());
            tokio::spawn(async move {
                let _ = serve_legacy(stream, &config, &cert).await;
            });
        }
    });
    (addr, served)
}

/// A ClientHello built by hand.
#[derive(Clone)]
pub struct Hello {
    pub record_version: u16,
    pub version: u16,
    pub suites: Vec<u16>,
    pub compression: Vec<u8>,
    pub extensions: Option<Vec<(u16, Vec<u8>)>>,
}

impl Hello {
    pub fn new(version: u16, suites: &[u16]) -> Hello {
        Hello {
            record_version: version.min(0x0301),
            version,
            suites: suites.to_vec(),
            compression: vec![0],
            extensions: None,
        }
    }

    pub fn ext(mut self, kind: u16, data: &[u8]) -> Hello {
        self.extensions.get_or_insert_with(Vec::new).push((kind, data.to_vec()));
        self
    }

    pub fn bytes(&self) -> Vec<u8> {
        let mut body = self.version.to_be_bytes().to_vec();
        body.extend((0..32u8).map(|i| i.wrapping_mul(7)));
        body.push(0);
        body.extend_from_slice(&((self.suites.len() * 2) as u16).to_be_bytes());
        for s in &self.suites {
            body.extend_from_slice(&s.to_be_bytes());
        }
        body.push(self.compression.len() as u8);
        body.extend_from_slice(&self.compression);
        if let Some(exts) = &self.extensions {
            let mut block = Vec::new();
            for (kind, data) in exts {
                block.extend_from_slice(&kind.to_be_bytes());
                block.extend_from_slice(&(data.len() as u16).to_be_bytes());
                block.extend_from_slice(data);
            }
            body.extend_from_slice(&(block.len() as u16).to_be_bytes());
            body.extend_from_slice(&block);
        }
        let mut hs = vec![1, 0, (body.len() >> 8) as u8, body.len() as u8];
        hs.extend_from_slice(&body);
        let mut rec = vec![22];
        rec.extend_from_slice(&self.record_version.to_be_bytes());
        rec.extend_from_slice(&(hs.len() as u16).to_be_bytes());
        rec.extend_from_slice(&hs);
        rec
    }
}

/// One raw record.
#[derive(Debug, Clone)]
pub struct Record {
    pub kind: u8,
    pub version: u16,
    pub body: Vec<u8>,
}

/// Reads whole records until `stop` says so, the peer closes, or 5 s pass.
pub async fn read_records(stream: &mut TcpStream, stop: impl Fn(&Record) -> bool) -> Vec<Record> {
    let mut buf = Vec::new();
    let mut records = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        while buf.len() >= 5 {
            let len = usize::from(u16::from_be_bytes([buf[3], buf[4]]));
            if buf.len() < 5 + len {
                break;
            }
            let record =
                Record { kind: buf[0], version: u16::from_be_bytes([buf[1], buf[2]]), body: buf[5..5 + len].to_vec() };
            buf.drain(..5 + len);
            let done = stop(&record);
            records.push(record);
            if done {
                return records;
            }
        }
        let mut chunk = [0u8; 8192];
        match tokio::time::timeout_at(deadline, stream.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return records,
            Ok(Ok(n)) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// The server's answer to a hello: its records up to ServerHelloDone or an alert.
pub async fn exchange(addr: SocketAddr, hello: &[u8]) -> (TcpStream, Vec<Record>) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(hello).await.unwrap();
    let records =
        read_records(&mut stream, |r| r.kind == 21 || (r.kind == 22 && r.body.ends_with(&[14, 0, 0, 0]))).await;
    (stream, records)
}
