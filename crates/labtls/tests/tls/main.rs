//! labtls against real peers: rustls clients, hand-built ClientHellos parsed back with
//! tls-parser, x509-parser on every certificate variant, and the `openssl` CLI when the
//! machine has it.

mod certs;
mod legacy;
mod modern;
mod openssl;
mod support;
