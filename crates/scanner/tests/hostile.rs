//! Zones written by an attacker (docs/SECURITY.md §1): a name whose labels spell an
//! address cannot steer a connection, and a zone whose pages link thousands of names
//! makes a scan that stops at its budget and says so.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use lab::{Lab, LabFile};
use scanner::guard::GuardError;

/// Listeners on `ip` at the standard and lab web ports that count the connections they
/// accept. Ports it cannot bind (not root) are left out, said on stderr.
async fn counting_listeners(ip: &str) -> Arc<AtomicUsize> {
    let count = Arc::new(AtomicUsize::new(0));
    for port in [80, 443, 10080, 10443] {
        match tokio::net::TcpListener::bind((ip, port)).await {
            Ok(listener) => {
                let count = count.clone();
                tokio::spawn(async move {
                    while let Ok((stream, _)) = listener.accept().await {
                        count.fetch_add(1, Ordering::SeqCst);
                        drop(stream);
                    }
                });
            }
            Err(e) => eprintln!("note: cannot listen on {ip}:{port} ({e}); that port is not watched"),
        }
    }
    count
}

/// A silent host on `ip`: it accepts connections on `ports` and holds them open,
/// never answering.
async fn silent_host(ip: &str, ports: &[u16]) {
    for &port in ports {
        let listener = tokio::net::TcpListener::bind((ip, port)).await.unwrap();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((s, _)) = listener.accept().await {
                held.push(s);
            }
        });
    }
}

/// The labels `127`,`77`,`66`,`9\.x` under the zone print as `127.77.66.9\.x.ssrf.test`;
/// a URL built from that text reads as host 127.77.66.9 with the rest as its path. The
/// name is the zone's NS and MX target and has an A record on a real web host.
#[tokio::test]
async fn a_name_spelling_an_address_reaches_nothing() {
    let file = r#"{
      "dns": {"address": "127.77.66.53"},
      "port_map": {"53": 10053, "80": 10080, "443": 10443},
      "zones": [{"origin": "ssrf.test", "records": [
        "@ MX 10 127.77.66.9\\.x", "@ NS 127.77.66.9\\.x", "127.77.66.9\\.x A 127.77.66.2",
        "@ TXT \"v=spf1 -all\""]}],
      "hosts": [
        {"name": "www.ssrf.test", "address": "127.77.66.2", "services": [
          {"port": 80, "kind": "http"}, {"port": 443, "kind": "https"}]}
      ]
    }"#;
    let lab_file = LabFile::parse(file).unwrap();
    let lab = Lab::up(&lab_file).await.unwrap();
    let seen = counting_listeners("127.77.66.9").await;
    let ctx = scanner::probes::Context::lab(
        lab.resolver.unwrap(),
        lab_file.effective_port_map(),
        lab.ca_root_der.clone(),
        "",
    )
    .unwrap();

    // The guard refuses the name itself, unresolved.
    let crafted = "127.77.66.9\\.x.ssrf.test";
    assert!(matches!(ctx.guard.resolve(crafted).await, Err(GuardError::BadName(_))));
    assert!(matches!(ctx.guard.connect_host(crafted, 80).await, Err(GuardError::BadName(_))));
    let fetched = scanner::http::get(&ctx.guard, None, false, crafted, "/", scanner::http::Verify::No).await;
    assert!(fetched.is_err(), "an HTTP fetch of the crafted name must fail");

    let words = vec!["www".to_owned()];
    let scan = scanner::scan::scan_domain(&ctx, "ssrf.test", Some("www.ssrf.test"), &words).await.unwrap();
    assert_eq!(seen.load(Ordering::SeqCst), 0, "the address the name spells was connected to");
    let names: Vec<&str> = scan.assets.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["www.ssrf.test"], "the crafted name is not an asset");
    let skipped: Vec<(&str, &str)> = scan.skipped.iter().map(|s| (s.name.as_str(), s.source.as_str())).collect();
    assert_eq!(skipped, [("127.77.66.9\\.x.ssrf.test", "mx"), ("127.77.66.9\\.x.ssrf.test", "ns")]);
    assert!(scan.skipped[0].reason.contains("escaped"), "{:?}", scan.skipped[0]);
    // The web host the crafted name's A record points at was visited under its own name.
    assert!(scan.endpoints.iter().any(|e| e.host == "www.ssrf.test" && e.port == 443), "{:?}", scan.endpoints);
    lab.down().await;
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A wildcard zone whose front page links 4,096 names of the zone, each of which has its
/// own address on a host serving the same page: the scan stops at its host and visit
/// caps, says so, and holds little memory. Names that only the wildcard answers (here
/// linked from the same page) are not hosts, whatever source names them.
#[tokio::test]
async fn a_zone_linking_thousands_of_names_is_scanned_within_its_budget() {
    let mut records = vec!["* A 127.77.67.4".to_owned(), "@ TXT \"v=spf1 -all\"".to_owned()];
    let mut body = String::from("<html><body>");
    for i in 0..4096 {
        records.push(format!("n{i:04} A 127.77.67.3"));
        body.push_str(&format!(
            "<a href=\"https://n{i:04}.flood.test/\">{i}</a><a href=\"http://w{i:04}.flood.test/\">w</a>\n"
        ));
    }
    body.push_str("</body></html>");
    let page = serde_json::json!({"pages": [{"path": "/", "body": body}]});
    let file = serde_json::json!({
        "dns": {"address": "127.77.67.53"},
        "port_map": {"53": 10053, "80": 10080, "443": 10443},
        "zones": [{"origin": "flood.test", "records": records}],
        "hosts": [
            {"name": "www.flood.test", "address": "127.77.67.2", "services": [{"port": 80, "kind": "http", "http": page}]},
            {"name": "deep.flood.test", "address": "127.77.67.3", "services": [{"port": 80, "kind": "http", "http": page}]}
        ]
    });
    let lab_file = LabFile::parse(&file.to_string()).unwrap();
    let lab = Lab::up(&lab_file).await.unwrap();
    let mut ctx = scanner::probes::Context::lab(
        lab.resolver.unwrap(),
        lab_file.effective_port_map(),
        lab.ca_root_der.clone(),
        "",
    )
    .unwrap();
    ctx.ports = vec![22, 80, 443];
    // The default caps; a shorter deadline than the default's ten minutes, so that a
    // debug build (whose lab DNS server answers slowly from a zone of 4,098 names) meets
    // it and the test shows the deadline at work too.
    ctx.limits.time = std::time::Duration::from_secs(45);
    let deadline = ctx.limits.time + std::time::Duration::from_secs(15);
    let started = std::time::Instant::now();
    let words = vec!["www".to_owned()];
    let scan = scanner::scan::scan_domain(&ctx, "flood.test", Some("www.flood.test"), &words).await.unwrap();
    let took = started.elapsed();
    assert!(took < deadline, "took {took:?}");
    assert!(scan.truncated());
    assert!(scan.notes.iter().any(|n| n.starts_with("truncated: 500 hosts, the cap")), "{:?}", scan.notes);
    assert!(
        scan.notes.iter().any(|n| n.starts_with("truncated: 300 host visits, the cap")
            || n.starts_with("truncated: the 45-second deadline passed during the web rounds")),
        "{:?}",
        scan.notes
    );
    assert_eq!(scan.assets.len(), ctx.limits.hosts);
    assert!(scan.assets.iter().all(|a| !a.name.starts_with('w') || a.name == "www.flood.test"), "wildcard names kept");
    let stages: Vec<&str> = scan.stages.iter().map(|s| s.name).collect();
    assert_eq!(
        stages,
        ["discovery", "mail and standards", "web rounds", "ports", "other web ports", "tls", "software"]
    );
    let peak = peak_rss_kib().expect("VmHWM in /proc/self/status");
    eprintln!(
        "flood scan: {took:?}, {} assets, peak RSS {} MiB, notes {:?}, stages {:?}",
        scan.assets.len(),
        peak / 1024,
        scan.notes,
        scan.stages
    );
    assert!(peak < 300 * 1024, "peak RSS {} MiB", peak / 1024);
    lab.down().await;
}

/// The certificate-transparency search follows no redirect: a search answering 302 to an
/// internal address is an error naming it, and nothing connects there.
#[tokio::test]
async fn the_ct_search_follows_no_redirect() {
    let target = tokio::net::TcpListener::bind("127.77.68.9:0").await.unwrap();
    let target_addr = target.local_addr().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    tokio::spawn(async move {
        while let Ok((s, _)) = target.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(s);
        }
    });
    let search = tokio::net::TcpListener::bind("127.77.68.2:0").await.unwrap();
    let search_addr = search.local_addr().unwrap();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut s, _)) = search.accept().await {
            let mut buf = [0u8; 2048];
            let _ = s.read(&mut buf).await;
            let reply = format!(
                "HTTP/1.1 302 Found\r\nlocation: http://{target_addr}/?q=x\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
            let _ = s.write_all(reply.as_bytes()).await;
        }
    });
    let template = format!("http://{search_addr}/?q=%25.{{domain}}&output=json");
    let err =
        scanner::discovery::ct_search(&template, "acme.test", std::time::Duration::from_secs(5)).await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("302") && text.contains("not followed") && text.contains(&target_addr.to_string()), "{text}");
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}

/// A listener on `addr` that sends `prefix` at once, then `byte` every `every` to each
/// client, forever.
async fn trickler(addr: &str, prefix: &'static [u8], byte: u8, every: std::time::Duration) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let at = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                if s.write_all(prefix).await.is_err() {
                    return;
                }
                while s.write_all(&[byte]).await.is_ok() {
                    tokio::time::sleep(every).await;
                }
            });
        }
    });
    at
}

/// A service that sends a byte every 30 ms (inside the banner grace of 40 ms) cannot hold
/// a port probe: the answer has an overall time.
#[tokio::test]
async fn a_trickling_service_cannot_hold_the_port_scan() {
    let at = trickler("127.77.68.20:0", b"", b'x', std::time::Duration::from_millis(30)).await;
    let policy = scanner::Policy {
        allow_private: true,
        port_map: [(2222u16, at.port())].into_iter().collect(),
        ..scanner::Policy::default()
    };
    let guard = scanner::Guard::new(policy, scanner::Dns::with_server("127.0.0.1:1".parse().unwrap()).unwrap());
    let started = std::time::Instant::now();
    let open = scanner::probes::ports::scan(&guard, "127.77.68.20", &[2222]).await.unwrap();
    let took = started.elapsed();
    assert_eq!(open.len(), 1, "{open:?}");
    assert!(took < std::time::Duration::from_secs(15), "took {took:?}");
}

/// A TLS endpoint that answers a ClientHello with a handshake record header and then one
/// byte every second: each flight has an overall time, so the enumeration ends.
#[tokio::test]
async fn a_trickling_tls_endpoint_cannot_hold_the_tls_probe() {
    // A TLS 1.2 handshake record of 16 KiB, whose body never finishes arriving.
    let at =
        trickler("127.77.68.21:0", &[0x16, 0x03, 0x03, 0x40, 0x00], 0x0b, std::time::Duration::from_millis(500)).await;
    let policy = scanner::Policy {
        allow_private: true,
        port_map: [(443u16, at.port())].into_iter().collect(),
        read_timeout: std::time::Duration::from_secs(2),
        ..scanner::Policy::default()
    };
    let guard = scanner::Guard::new(policy, scanner::Dns::with_server("127.0.0.1:1".parse().unwrap()).unwrap());
    let target = scanner::tlsprobe::Target::new("127.77.68.21", 443);
    let started = std::time::Instant::now();
    let now = time::OffsetDateTime::now_utc();
    let _ = scanner::tlsprobe::probe(&guard, &target, None, now).await;
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(40), "took {took:?}");
}

/// One silent host (it accepts connections and never answers), shared by 50 names of one
/// company, does not delay the scan of another company that shares the guard: a task
/// waiting on the silent address never holds a global permit, and a connection holds
/// its permits only while it is open.
#[tokio::test]
async fn a_silent_host_shared_by_many_names_starves_no_other_scan() {
    let mut records: Vec<String> = (0..50).map(|i| format!("s{i:02} A 127.77.69.2")).collect();
    records.push("@ TXT \"v=spf1 -all\"".into());
    let file = serde_json::json!({
        "dns": {"address": "127.77.69.53"},
        "port_map": {"53": 10053, "80": 10080, "443": 10443, "22": 10022},
        "zones": [
            {"origin": "silent.test", "records": records},
            {"origin": "quick.test", "records": ["@ TXT \"v=spf1 -all\""]}
        ],
        "hosts": [
            {"name": "www.quick.test", "address": "127.77.69.3", "services": [
                {"port": 80, "kind": "http"}, {"port": 22, "kind": "ssh"}]}
        ]
    });
    let lab_file = LabFile::parse(&file.to_string()).unwrap();
    let lab = Lab::up(&lab_file).await.unwrap();
    silent_host("127.77.69.2", &[10080, 10443, 10022]).await;
    let policy = scanner::Policy {
        allow_private: true,
        lab_only: true,
        port_map: lab_file.effective_port_map(),
        global_limit: 8,
        per_host_limit: 2,
        read_timeout: std::time::Duration::from_secs(2),
        connect_timeout: std::time::Duration::from_secs(1),
    };
    let guard = scanner::Guard::new(policy, scanner::Dns::with_server(lab.resolver.unwrap()).unwrap());
    let mut ctx = scanner::probes::Context::new(guard);
    ctx.lab_root = lab.ca_root_der.clone();
    ctx.ports = vec![22, 80, 443];
    ctx.limits.time = std::time::Duration::from_secs(40);
    let ctx = Arc::new(ctx);
    let quick_words = vec!["www".to_owned()];

    let started = std::time::Instant::now();
    let alone = scanner::scan::scan_domain(&ctx, "quick.test", None, &quick_words).await.unwrap();
    let normal = started.elapsed();

    let silent_words: Vec<String> = (0..50).map(|i| format!("s{i:02}")).collect();
    let busy = ctx.clone();
    let noisy =
        tokio::spawn(async move { scanner::scan::scan_domain(&busy, "silent.test", None, &silent_words).await });
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    assert!(!noisy.is_finished(), "the silent company's scan should still be waiting on its host");
    let started = std::time::Instant::now();
    let beside = scanner::scan::scan_domain(&ctx, "quick.test", None, &quick_words).await.unwrap();
    let took = started.elapsed();
    noisy.abort();
    eprintln!("quick.test alone {normal:?}, beside the silent company {took:?}");
    assert_eq!(beside.endpoints.len(), alone.endpoints.len(), "{:?}", beside.endpoints);
    assert!(took < normal * 2 + std::time::Duration::from_secs(3), "alone {normal:?}, beside {took:?}");
    lab.down().await;
}

/// Every stage has a time of its own (docs/SECURITY.md §1): hosts that accept connections
/// and never answer hold the web rounds and the port scan until their three seconds are
/// spent, and the stages after them still get theirs: the TLS stage probes the quick
/// host's HTTPS. What the held stages saw of the quick host in time is kept, and the scan
/// says which stages ran out and of what.
#[tokio::test]
async fn a_stage_that_runs_out_of_its_time_leaves_the_next_stages_theirs() {
    let mut records: Vec<String> = (0..10).map(|i| format!("s{i} A 127.77.74.2")).collect();
    records.push("@ TXT \"v=spf1 -all\"".into());
    let file = serde_json::json!({
        "dns": {"address": "127.77.74.53"},
        "port_map": {"53": 10053, "80": 10080, "443": 10443, "22": 10022},
        "zones": [{"origin": "held.test", "records": records}],
        "hosts": [
            {"name": "www.held.test", "address": "127.77.74.3", "services": [
                {"port": 80, "kind": "http"}, {"port": 443, "kind": "https"}]}
        ]
    });
    let lab_file = LabFile::parse(&file.to_string()).unwrap();
    let lab = Lab::up(&lab_file).await.unwrap();
    silent_host("127.77.74.2", &[10080, 10443, 10022]).await;
    let mut ctx = scanner::probes::Context::lab(
        lab.resolver.unwrap(),
        lab_file.effective_port_map(),
        lab.ca_root_der.clone(),
        "",
    )
    .unwrap();
    ctx.ports = vec![22, 80, 443];
    ctx.limits.time = std::time::Duration::from_secs(120);
    let three = std::time::Duration::from_secs(3);
    ctx.limits.stages.web = three;
    ctx.limits.stages.ports = three;
    let mut words: Vec<String> = (0..10).map(|i| format!("s{i}")).collect();
    words.push("www".into());

    let started = std::time::Instant::now();
    let scan = scanner::scan::scan_domain(&ctx, "held.test", Some("www.held.test"), &words).await.unwrap();
    let took = started.elapsed();
    eprintln!("held.test: {took:?}, notes {:?}, stages {:?}", scan.notes, scan.stages);
    assert!(scan.notes.contains(&"truncated: the web rounds ran out of its 3-second budget".to_owned()), "{scan:#?}");
    assert!(scan.notes.contains(&"truncated: the port scan ran out of its 3-second budget".to_owned()), "{scan:#?}");
    assert!(!scan.notes.iter().any(|n| n.contains("deadline")), "{:?}", scan.notes);
    // The quick host was seen by the held stages, and its TLS probed after them.
    assert!(scan.endpoints.iter().any(|e| e.host == "www.held.test" && e.port == 443), "{:?}", scan.endpoints);
    assert!(scan.open_ports.iter().any(|p| p.host == "www.held.test" && p.port == 443), "{:?}", scan.open_ports);
    assert!(scan.tls.iter().any(|r| r.target == "www.held.test:443"), "{:?}", scan.tls);
    let budget = |name: &str| scan.stages.iter().find(|s| s.name == name).map(|s| (s.millis, s.budget_millis));
    for held in ["web rounds", "ports"] {
        let (millis, budget) = budget(held).unwrap();
        assert_eq!(budget, 3_000, "{held}");
        assert!((3_000..10_000).contains(&millis), "{held} took {millis} ms");
    }
    assert!(took < std::time::Duration::from_secs(60), "took {took:?}");
    lab.down().await;
}
