//! `rampart openapi`: the OpenAPI document of the API, printed (the one the server
//! serves at /openapi.json and docs/openapi.json keeps).

use anyhow::Result;

pub(crate) fn run() -> Result<()> {
    say!("{}", api::openapi::document().to_pretty_json()?);
    Ok(())
}
