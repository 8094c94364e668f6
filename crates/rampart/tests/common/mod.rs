//! What the process tests share: the binary, free ports, children that stop when
//! dropped, waiting for a server to answer.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// The binary, without the settings of the environment the tests run in, and without
/// the scheduled feed sync (it would fetch from the internet; tests talk to 127.0.0.0/8).
pub fn rampart() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rampart"));
    c.env_remove("RAMPART_DB").env_remove("RAMPART_LISTEN").env("RAMPART_LOG", "warn");
    c.env("RAMPART_SYNC_EVERY", "off");
    c
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

/// A child process that is stopped with SIGTERM when dropped, and killed if it has not
/// ended 20 seconds later (so a failing test ends instead of waiting on its child).
pub struct Server(pub Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg("-TERM").arg(self.0.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if !matches!(self.0.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("the child {} did not end 20 s after SIGTERM: killed", self.0.id());
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits (at most 60 s) until the server at `base` answers `/healthz`.
pub async fn wait_healthy(base: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Ok(r) = reqwest::get(format!("{base}/healthz")).await
            && r.status().is_success()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("server at {base} did not come up");
}
