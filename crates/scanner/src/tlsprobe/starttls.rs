//! STARTTLS for SMTP (RFC 3207), IMAP (RFC 3501 §6.2.1), POP3 (RFC 2595) and FTP
//! (RFC 4217 AUTH TLS): the plaintext exchange up to the point where the client starts
//! the TLS handshake. Every read has a timeout and a size bound.

use std::time::Duration;

use crate::guard::Connection;
use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The most of one server line (or multi-line reply) read.
const MAX_REPLY: usize = 16 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Starttls {
    Smtp,
    Imap,
    Pop3,
    Ftp,
}

impl Starttls {
    /// The plaintext protocol a standard port speaks before STARTTLS, if any.
    pub fn for_port(port: u16) -> Option<Starttls> {
        match port {
            25 | 587 => Some(Starttls::Smtp),
            143 => Some(Starttls::Imap),
            110 => Some(Starttls::Pop3),
            21 => Some(Starttls::Ftp),
            _ => None,
        }
    }

    pub fn parse(name: &str) -> Option<Starttls> {
        match name.to_ascii_lowercase().as_str() {
            "smtp" => Some(Starttls::Smtp),
            "imap" => Some(Starttls::Imap),
            "pop3" => Some(Starttls::Pop3),
            "ftp" => Some(Starttls::Ftp),
            _ => None,
        }
    }
}

/// Reads until `done` says the reply is complete.
async fn reply(stream: &mut Connection, timeout: Duration, done: impl Fn(&str) -> bool) -> Result<String, String> {
    // The whole reply within `timeout`: a server trickling a byte at a time cannot hold it.
    let deadline = tokio::time::Instant::now() + timeout;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 2048];
    loop {
        let n = tokio::time::timeout_at(deadline, stream.read(&mut chunk))
            .await
            .map_err(|_| "no reply in time".to_owned())?
            .map_err(|e| format!("receive: {e}"))?;
        if n == 0 {
            return Err("the server closed the connection".into());
        }
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf).into_owned();
        if done(&text) {
            return Ok(text);
        }
        if buf.len() > MAX_REPLY {
            return Err(format!("a reply longer than {MAX_REPLY} bytes"));
        }
    }
}

/// An SMTP or FTP reply is complete when its last line is `NNN text` (no dash).
fn coded_reply_done(text: &str) -> bool {
    text.ends_with('\n') && text.lines().last().is_some_and(|l| l.len() >= 3 && l.as_bytes().get(3) != Some(&b'-'))
}

fn line_done(text: &str) -> bool {
    text.ends_with('\n')
}

async fn send(stream: &mut Connection, line: &str) -> Result<(), String> {
    stream.write_all(line.as_bytes()).await.map_err(|e| format!("send: {e}"))
}

fn expect(reply: &str, ok: impl Fn(&str) -> bool, what: &str) -> Result<(), String> {
    let last = reply.lines().last().unwrap_or("").trim();
    if ok(last) { Ok(()) } else { Err(format!("{what}: {last:?}")) }
}

/// Runs the plaintext part of `kind` on `stream`; afterwards the next bytes are TLS.
pub async fn negotiate(stream: &mut Connection, kind: Starttls, timeout: Duration) -> Result<(), String> {
    match kind {
        Starttls::Smtp => {
            let greeting = reply(stream, timeout, coded_reply_done).await?;
            expect(&greeting, |l| l.starts_with("220"), "greeting")?;
            send(stream, "EHLO scanner.rampart.invalid\r\n").await?;
            let ehlo = reply(stream, timeout, coded_reply_done).await?;
            expect(&ehlo, |l| l.starts_with("250"), "EHLO")?;
            if !ehlo.lines().any(|l| l.get(4..).is_some_and(|t| t.trim().eq_ignore_ascii_case("STARTTLS"))) {
                return Err("the server does not offer STARTTLS".into());
            }
            send(stream, "STARTTLS\r\n").await?;
            let go = reply(stream, timeout, coded_reply_done).await?;
            expect(&go, |l| l.starts_with("220"), "STARTTLS")
        }
        Starttls::Imap => {
            let greeting = reply(stream, timeout, line_done).await?;
            expect(&greeting, |l| l.starts_with("* OK"), "greeting")?;
            send(stream, "a1 STARTTLS\r\n").await?;
            let go = reply(stream, timeout, |t| t.lines().any(|l| l.starts_with("a1 "))).await?;
            expect(&go, |l| l.starts_with("a1 OK"), "STARTTLS")
        }
        Starttls::Pop3 => {
            let greeting = reply(stream, timeout, line_done).await?;
            expect(&greeting, |l| l.starts_with("+OK"), "greeting")?;
            send(stream, "STLS\r\n").await?;
            let go = reply(stream, timeout, line_done).await?;
            expect(&go, |l| l.starts_with("+OK"), "STLS")
        }
        Starttls::Ftp => {
            let greeting = reply(stream, timeout, coded_reply_done).await?;
            expect(&greeting, |l| l.starts_with("220"), "greeting")?;
            send(stream, "AUTH TLS\r\n").await?;
            let go = reply(stream, timeout, coded_reply_done).await?;
            expect(&go, |l| l.starts_with("234"), "AUTH TLS")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_line_replies_end_at_the_line_without_a_dash() {
        assert!(!coded_reply_done("250-mail.test\r\n250-PIPELINING\r\n"));
        assert!(coded_reply_done("250-mail.test\r\n250 STARTTLS\r\n"));
        assert!(!coded_reply_done("220 mail.test ESMTP"));
        assert_eq!(Starttls::for_port(25), Some(Starttls::Smtp));
        assert_eq!(Starttls::for_port(443), None);
    }
}
