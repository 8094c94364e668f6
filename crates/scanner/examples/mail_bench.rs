//! The DNS and mail checks (spf, dkim, dmarc, it_standardization) over N lab domains
//! `bench0.test …`, 64 at a time (`BENCH_CONCURRENCY`), through the lab written by
//! `rampart lab up --out DIR`:
//!
//!     mail_bench DIR N
//!
//! Prints domains per second and the findings found (bench/mail.sh runs it beside
//! checkdmarc).

use std::sync::Arc;
use std::time::Instant;

use scanner::probes::Context;
use scanner::scan::mail_and_standards;
use tokio::sync::Semaphore;

#[derive(serde::Deserialize)]
struct ScannerFile {
    resolver: std::net::SocketAddr,
    port_map: std::collections::BTreeMap<u16, u16>,
}

// One thread, as checkdmarc runs in one Python thread; on a two-core machine the lab's
// DNS server (a thread of its own) has the other core.
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(dir), Some(n)) = (args.get(1), args.get(2).and_then(|n| n.parse::<usize>().ok())) else {
        eprintln!("usage: mail_bench LAB_DIR N");
        std::process::exit(2);
    };
    let dir = std::path::Path::new(dir);
    let lab: ScannerFile = serde_json::from_str(&std::fs::read_to_string(dir.join("scanner.json"))?)?;
    let anchors = std::fs::read_to_string(dir.join("trust-anchor.txt"))?;
    let ctx = Arc::new(Context::lab(lab.resolver, lab.port_map, None, &anchors)?);
    let limit =
        Arc::new(Semaphore::new(std::env::var("BENCH_CONCURRENCY").ok().and_then(|c| c.parse().ok()).unwrap_or(64)));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..n {
        let (ctx, limit) = (ctx.clone(), limit.clone());
        tasks.spawn(async move {
            let _permit = limit.acquire_owned().await;
            mail_and_standards(&ctx, &format!("bench{i}.test"), None).await.map(|f| f.len())
        });
    }
    let (mut findings, mut failed) = (0, 0);
    while let Some(r) = tasks.join_next().await {
        match r {
            Ok(Ok(n)) => findings += n,
            _ => failed += 1,
        }
    }
    let took = started.elapsed().as_secs_f64();
    let queries = scanner::wire::queries_sent();
    println!(
        "rampart: {n} domains in {took:.2} s = {:.1} domains/s ({findings} findings, {failed} failed, {:.1} queries/domain)",
        n as f64 / took,
        queries as f64 / n as f64
    );
    Ok(())
}
