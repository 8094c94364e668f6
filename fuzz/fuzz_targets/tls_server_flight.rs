#![no_main]
//! A server's first TLS flight is untrusted bytes: the record, handshake, ServerHello,
//! Certificate, ServerKeyExchange and SSLv2 SERVER-HELLO parsers return a value or an
//! error on any input, and a certificate judged from garbage is reported, not panicked.

use libfuzzer_sys::fuzz_target;
use scanner::tlsprobe::{cert, suites::Kx, wire};

fuzz_target!(|data: &[u8]| {
    let _ = wire::flight(data);
    let _ = wire::record(data);
    let _ = wire::handshake_message(data);
    let _ = wire::server_hello(data);
    let _ = wire::ssl2_server_hello(data);
    if let Ok(chain) = wire::certificates(data) {
        let _ = cert::analyse(&chain, "fuzz.test", None, time::OffsetDateTime::UNIX_EPOCH);
    }
    for kx in [Kx::Dhe, Kx::Ecdhe, Kx::Rsa, Kx::AnonDh] {
        let _ = wire::server_key_exchange(data, kx);
    }
});
