//! `rampart lab up`: the lab, a simulated internet of fictional companies on
//! 127.0.0.0/8 (docs/LAB.md), served until Ctrl-C or SIGTERM.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use clap::Subcommand;

use crate::common::shutdown_signal;

#[derive(Subcommand)]
pub(crate) enum Action {
    /// Bring the lab up (the built-in one unless --file), print the resolver address and
    /// the hosts, serve until Ctrl-C.
    Up {
        /// A lab file (docs/LAB.md); the built-in lab when absent.
        #[arg(long)]
        file: Option<PathBuf>,
        /// Where to write the lab CA root (lab-ca.pem) and the DNSSEC trust anchor
        /// (trust-anchor.txt) a scanner in lab mode loads.
        #[arg(long, default_value = "target/lab")]
        out: PathBuf,
    },
}

pub(crate) async fn run(action: Action) -> Result<()> {
    match action {
        Action::Up { file, out } => up(lab_file(file.as_deref())?, &out).await,
    }
}

/// The lab `--file` describes, read and checked; the built-in one when absent.
fn lab_file(file: Option<&Path>) -> Result<lab::LabFile> {
    Ok(match file {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            lab::LabFile::parse(&text).with_context(|| format!("lab file {}", path.display()))?
        }
        None => lab::LabFile::builtin()?,
    })
}

async fn up(lab_file: lab::LabFile, out: &Path) -> Result<()> {
    let started = std::time::Instant::now();
    let running = lab::Lab::up(&lab_file).await?;
    let took = started.elapsed();
    running.write_scanner_files(&lab_file, out).with_context(|| format!("writing to {}", out.display()))?;
    say!(
        "lab up in {} ms: {} companies, {} hosts, {} services, {} zones",
        took.as_millis(),
        lab_file.companies.len(),
        lab_file.hosts.len(),
        running.endpoints.len(),
        lab_file.zones.len()
    );
    if let Some(resolver) = running.resolver {
        say!("resolver        {resolver} (UDP and TCP)");
    }
    for a in &running.trust_anchors {
        say!("DNSSEC anchor   {}", a.ds);
    }
    if running.ca_root_pem.is_some() {
        say!("lab CA root     {}", out.join("lab-ca.pem").display());
    }
    say!("scanner files   {} (rampart probe … --lab {})", out.display(), out.display());
    for (host, port, addr) in &running.endpoints {
        say!("{host:<40} port {port:<5} listening on {addr}");
    }
    shutdown_signal().await;
    running.down().await;
    Ok(())
}
