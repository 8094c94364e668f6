//! In-process latency of the vulnerability lookups over an existing database:
//! `search_bench DB_URL [ROUNDS] [CPE...]`. Prints p50/p99 per query kind (the first
//! call of the API's path apart); `bench/vulndb.sh`
//! runs it beside the HTTP figures. With `SEARCH_BENCH_API_PATH=1` it runs only the
//! API's path (`served_for_cpe`) for each CPE, the mode to count instructions in with
//! `valgrind --tool=callgrind`. `SEARCH_BENCH_SERVED_CACHE_MIB` sets the store's
//! served-form cache (`rampart serve --served-cache-mib`; 0 reads every record from
//! SQLite). DB_URL may name either backend (`postgres://…`).

use std::time::{Duration, Instant};

use model::{Cpe, CveId};

fn pct(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v.get(i).copied().unwrap_or_default()
}

fn report(name: &str, times: Vec<Duration>, results: usize) {
    println!(
        "{name:<58} p50 {:>9.3} ms  p99 {:>9.3} ms  ({results} results)",
        pct(times.clone(), 0.5).as_secs_f64() * 1e3,
        pct(times, 0.99).as_secs_f64() * 1e3
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // As `rampart` does (RAMPART_MALLOC_DEFAULTS=1 keeps glibc's defaults, to compare).
    store::tune_allocator();
    let mut args = std::env::args().skip(1);
    let url = args.next().ok_or("usage: search_bench DB_URL [ROUNDS]")?;
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(200);
    let given: Vec<String> = args.collect();
    let mut options = store::Options::default();
    if let Some(mib) = std::env::var("SEARCH_BENCH_SERVED_CACHE_MIB").ok().and_then(|m| m.parse::<usize>().ok()) {
        options.served_cache_bytes = mib << 20;
    }
    let store = store::open_with(&url, &options).await?;
    let store = &*store;
    let store: &dyn store::Store = store;
    if std::env::var_os("SEARCH_BENCH_API_PATH").is_some() {
        for cpe in &given {
            let cpe = Cpe::parse(cpe)?;
            let mut times = Vec::new();
            let mut n = 0;
            for _ in 0..rounds {
                let t = Instant::now();
                let served = vulndb::search::served_for_cpe(store, &cpe, 500).await?;
                times.push(t.elapsed());
                n = served.len();
                std::hint::black_box(served);
            }
            report(&format!("the API's path {cpe}"), times, n);
        }
        return Ok(());
    }

    let ids = ["CVE-2014-0160", "CVE-2021-44228", "CVE-2017-5638", "CVE-2008-0166", "CVE-2099-0001"];
    // The first read of each record (its pages possibly still on disk) is reported
    // apart, as for the lookups below.
    let mut firsts = Vec::new();
    for id in ids {
        let id = CveId::parse(id)?;
        let t = Instant::now();
        std::hint::black_box(store.cve(&id).await?);
        firsts.push(format!("{:.3}", t.elapsed().as_secs_f64() * 1e3));
    }
    println!("{:<58} {} ms", "describe, first read of each of the 5 records", firsts.join(" "));
    let mut times = Vec::new();
    for i in 0..rounds {
        let id = CveId::parse(ids[i % ids.len()])?;
        let t = Instant::now();
        let r = store.cve(&id).await?;
        times.push(t.elapsed());
        std::hint::black_box(r);
    }
    report("describe (store.cve)", times, 1);

    let defaults = [
        "cpe:2.3:a:openssl:openssl:1.0.1f",
        "cpe:2.3:a:apache:http_server:2.4.7",
        "cpe:2.3:a:apache:log4j:2.14.1",
        "cpe:2.3:o:linux:linux_kernel:3.2",
        "cpe:2.3:a:microsoft:internet_explorer:*",
    ];
    let cpes: Vec<&str> = if given.is_empty() { defaults.to_vec() } else { given.iter().map(String::as_str).collect() };
    for cpe in cpes {
        let cpe = Cpe::parse(cpe)?;
        let (mut match_t, mut served_t, mut total_t, mut n) = (Vec::new(), Vec::new(), Vec::new(), 0);
        let (mut served_only, mut one_pass) = (Vec::new(), Vec::new());
        // The first call reads everything from the database file (and the served forms
        // into the store's memory); it is reported alone, and the rounds start after it.
        let t = Instant::now();
        std::hint::black_box(vulndb::search::served_for_cpe(store, &cpe, 500).await?);
        let first = t.elapsed();
        for _ in 0..rounds {
            let t = Instant::now();
            let ids = vulndb::search::cve_ids_for_cpe(store, &cpe, 500).await?;
            match_t.push(t.elapsed());
            let s = Instant::now();
            let served = store.served_cves(&ids).await?;
            served_only.push(s.elapsed());
            served_t.push(t.elapsed());
            std::hint::black_box(served);
            let t = Instant::now();
            let served = vulndb::search::served_for_cpe(store, &cpe, 500).await?;
            one_pass.push(t.elapsed());
            std::hint::black_box(served);
            let t = Instant::now();
            let recs = store.cves(&ids).await?;
            total_t.push(t.elapsed() + *match_t.last().unwrap_or(&Duration::ZERO));
            n = recs.len();
            std::hint::black_box(recs);
        }
        report(&format!("match {cpe}"), match_t, n);
        report(&format!("served forms alone {cpe}"), served_only, n);
        report(&format!("match, then served forms {cpe}"), served_t, n);
        println!("{:<58} {:>13.3} ms", format!("first call of the API's path {cpe}"), first.as_secs_f64() * 1e3);
        report(&format!("matches with served forms (the API's path) {cpe}"), one_pass, n);
        report(&format!("match + parsed records {cpe}"), total_t, n);
    }
    Ok(())
}
