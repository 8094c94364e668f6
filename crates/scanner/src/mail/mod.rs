//! Parsers of the mail-authentication records: SPF (RFC 7208), DKIM key records
//! (RFC 6376, RFC 8301) and DMARC (RFC 7489). Pure functions over the record text; the
//! probes in `crate::probes` fetch the records and give the verdicts.

pub mod dkim;
pub mod dmarc;
pub mod spf;
