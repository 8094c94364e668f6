//! The network guard against real DNS (the lab's server): a name that resolves to a
//! loopback address is refused outside lab mode, admitted in lab mode, and connections go
//! to the address that was checked, on the lab port of the port map.

use std::collections::BTreeMap;

use lab::{Lab, LabFile};
use scanner::Dns;
use scanner::guard::{Guard, GuardError, Policy};
use tokio::io::AsyncReadExt;

const FILE: &str = r#"{
  "dns": {"address": "127.77.50.53"},
  "port_map": {"53": 10053, "22": 10022},
  "zones": [{"origin": "looks-public.test", "records": ["rebind A 127.0.0.1", "dual A 127.77.50.3", "dual AAAA 2001:db8::3"]}],
  "hosts": [{"name": "shell.looks-public.test", "address": "127.77.50.2", "services": [{"port": 22, "kind": "ssh"}]}]
}"#;

#[tokio::test]
async fn a_name_resolving_to_loopback_is_refused_outside_lab_mode() {
    let lab = Lab::up(&LabFile::parse(FILE).unwrap()).await.unwrap();
    let dns = Dns::with_server(lab.resolver.unwrap()).unwrap();
    let strict = Guard::new(Policy::default(), dns.clone());
    for name in ["rebind.looks-public.test", "shell.looks-public.test"] {
        match strict.resolve(name).await {
            Err(GuardError::Refused { why, .. }) => assert_eq!(why, "loopback"),
            other => panic!("{name}: {other:?}", other = other.map(|_| ())),
        }
        assert!(matches!(strict.connect_host(name, 22).await, Err(GuardError::Refused { .. })));
    }
    // An address given directly is checked the same way.
    assert!(matches!(strict.resolve("10.1.2.3").await, Err(GuardError::Refused { .. })));

    let lab_mode =
        Guard::new(Policy { allow_private: true, port_map: BTreeMap::from([(22, 10022)]), ..Policy::default() }, dns);
    let mut c = lab_mode.connect_host("shell.looks-public.test", 22).await.unwrap();
    assert_eq!(c.addr.to_string(), "127.77.50.2:10022", "the checked address, on the lab port");
    let mut banner = [0u8; 32];
    let n = c.read(&mut banner).await.unwrap();
    assert!(banner[..n].starts_with(b"SSH-2.0-"));
    assert!(matches!(lab_mode.resolve("missing.looks-public.test").await, Err(GuardError::NoAddress(_))));
    // Documentation and other never-routable addresses are refused even in lab mode, and
    // dropped from a name's addresses: the lab's AAAA records (2001:db8::/32) are never
    // connected to.
    assert!(matches!(lab_mode.resolve("2001:db8::1").await, Err(GuardError::NoAddress(_))));
    assert!(matches!(
        lab_mode.connect("x.test", &["192.0.2.1".parse().unwrap()], 22).await,
        Err(GuardError::Refused { .. })
    ));
    let dual = lab_mode.resolve("dual.looks-public.test").await.unwrap();
    assert_eq!(dual, ["127.77.50.3".parse::<std::net::IpAddr>().unwrap()]);
    lab.down().await;
}
