//! The one-door rule, checked: outside this crate, no source file of the workspace opens
//! an outbound socket or builds an HTTP client. The lab (`lab`, `labtls`) is exempt: it is
//! the simulated internet, whose servers bind their own listening sockets. Test code
//! (`tests/`, and `#[cfg(test)]` modules at the end of a file) is exempt too: tests talk
//! to the servers they start.

use std::path::{Path, PathBuf};

const FORBIDDEN: &[&str] = &[
    "TcpStream::connect",
    "TcpSocket::new",
    "UdpSocket::bind",
    "Client::builder",
    "ClientBuilder",
    "reqwest::Client::new",
    "reqwest::get(",
    "std::net::TcpStream",
    "hyper::client",
];

const EXEMPT_CRATES: &[&str] = &["egress", "lab", "labtls"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The part of a file that is not a test module (by convention they come last).
fn non_test(text: &str) -> &str {
    match text.find("#[cfg(test)]") {
        Some(at) => &text[..at],
        None => text,
    }
}

/// Where `text` (not test code) uses a forbidden call: (line, pattern).
fn violations(text: &str) -> Vec<(usize, &'static str)> {
    let mut out = Vec::new();
    for (n, line) in non_test(text).lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for pattern in FORBIDDEN {
            if code.contains(pattern) {
                out.push((n + 1, *pattern));
            }
        }
    }
    out
}

#[test]
fn no_crate_but_egress_opens_a_connection() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    let mut checked = 0;
    for entry in std::fs::read_dir(&crates).expect("the crates directory").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if EXEMPT_CRATES.contains(&name.as_str()) {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&entry.path().join("src"), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).expect("readable source");
            checked += 1;
            for (line, pattern) in violations(&text) {
                found.push(format!("{}:{line}: {pattern}", file.display()));
            }
        }
    }
    assert!(checked > 50, "only {checked} files checked: the walk is broken");
    assert!(found.is_empty(), "outbound connections outside egress:\n{}", found.join("\n"));
}

#[test]
fn the_check_sees_what_it_forbids() {
    let bad = "fn f() {\n    let s = tokio::net::TcpStream::connect(addr);\n}\n";
    assert_eq!(violations(bad), [(2, "TcpStream::connect")]);
    let client = "let c = reqwest::Client::builder().build();";
    assert!(violations(client).iter().any(|(_, p)| *p == "Client::builder"));
    let commented = "// TcpStream::connect is forbidden here\nfn g() {}";
    assert!(violations(commented).is_empty());
    let test_only = "fn h() {}\n#[cfg(test)]\nmod tests { fn t() { UdpSocket::bind(x); } }";
    assert!(violations(test_only).is_empty());
}
