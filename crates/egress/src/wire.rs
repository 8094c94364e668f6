//! DNS exchanges with a name server: the transport under the scanner's DNS client and
//! its DNSSEC validator.
//!
//! Queries go out over a small pool of long-lived UDP sockets per server (a socket per
//! query costs a socket, a bind and a close each time — the largest part of a scan's
//! system time). Each socket has a random source port and is connected to its server,
//! so the kernel drops datagrams from anywhere else; each query has a random id, and a
//! response must carry that id and repeat the question asked. A truncated answer is
//! asked again over TCP. Every try has a timeout, a lost answer is retried (on the next
//! server when there are several), and responses are bounded (65,535 bytes).

use std::collections::HashMap;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use hickory_resolver::proto::op::{Message, MessageType};
use hickory_resolver::proto::rr::{DNSClass, Name, RecordType};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UdpSocket};
use tokio::sync::{OnceCell, oneshot};
use tokio::task::AbortHandle;

/// The largest response read (UDP datagram or TCP message).
pub const MAX_RESPONSE: usize = 65_535;
/// UDP sockets kept per server.
const SOCKETS_PER_SERVER: usize = 4;

/// Datagrams sent by every exchanger of the process (benchmarks report queries per
/// domain from it).
static SENT: AtomicU64 = AtomicU64::new(0);

/// Queries sent over UDP so far, by all exchangers of the process.
pub fn queries_sent() -> u64 {
    SENT.load(Ordering::Relaxed)
}

/// Why an exchange gave no usable answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ExchangeError {
    /// No answer in time, or a socket error, on every try.
    #[error("{0}")]
    Failed(String),
    /// A response that does not parse, or answers another question.
    #[error("{0}")]
    Malformed(String),
}

/// Exchanges queries with a list of name servers. Cheap to clone (shared sockets).
#[derive(Clone)]
pub struct Exchanger {
    inner: Arc<Inner>,
}

struct Inner {
    servers: Vec<SocketAddr>,
    timeout: Duration,
    tries: usize,
    pools: OnceCell<Vec<Vec<Slot>>>,
    next: AtomicUsize,
}

/// The queries waiting on one socket, by id.
type Waiting = HashMap<u16, oneshot::Sender<Vec<u8>>>;

/// One UDP socket and the queries waiting for an answer on it.
struct Slot {
    socket: Arc<UdpSocket>,
    waiting: Arc<Mutex<Waiting>>,
    reader: AbortHandle,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(pools) = self.pools.get() {
            for slot in pools.iter().flatten() {
                slot.reader.abort();
            }
        }
    }
}

impl std::fmt::Debug for Exchanger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exchanger").field("servers", &self.inner.servers).finish()
    }
}

impl Exchanger {
    /// `tries` UDP tries of `timeout` each, rotating over `servers` (at least one).
    pub fn new(servers: Vec<SocketAddr>, timeout: Duration, tries: usize) -> Exchanger {
        Exchanger {
            inner: Arc::new(Inner {
                servers,
                timeout,
                tries: tries.max(1),
                pools: OnceCell::new(),
                next: AtomicUsize::new(0),
            }),
        }
    }

    pub fn servers(&self) -> &[SocketAddr] {
        &self.inner.servers
    }

    /// Sends `query` (its id is replaced by a fresh random one) and returns the response
    /// to it, which asks the same question `name`/`kind`. The response code is not
    /// judged here.
    pub async fn exchange(&self, mut query: Message, name: &Name, kind: RecordType) -> Result<Message, ExchangeError> {
        let inner = &self.inner;
        if inner.servers.is_empty() {
            return Err(ExchangeError::Failed("no name server configured".into()));
        }
        let pools = inner.pools.get_or_try_init(|| bind_pools(&inner.servers)).await?;
        let mut last = String::new();
        for attempt in 0..inner.tries {
            let server_index = attempt % inner.servers.len();
            let server = inner.servers[server_index];
            let pool = &pools[server_index];
            let slot = &pool[inner.next.fetch_add(1, Ordering::Relaxed) % pool.len()];
            let (id, answer) = slot.register();
            query.metadata.id = id;
            let bytes =
                query.to_vec().map_err(|e| ExchangeError::Malformed(format!("cannot encode the query: {e}")))?;
            SENT.fetch_add(1, Ordering::Relaxed);
            if let Err(e) = slot.socket.send(&bytes).await {
                slot.forget(id);
                last = format!("UDP send to {server}: {e}");
                continue;
            }
            let datagram = match tokio::time::timeout(inner.timeout, answer).await {
                Ok(Ok(datagram)) => datagram,
                Ok(Err(_)) => {
                    last = format!("UDP socket to {server} closed");
                    continue;
                }
                Err(_) => {
                    slot.forget(id);
                    last = format!("no answer from {server} over UDP within {:?}", inner.timeout);
                    continue;
                }
            };
            let message = match parse_response(&datagram, id, name, kind) {
                Ok(m) => m,
                // Something answered with our id but not our question: try again.
                Err(e) => {
                    last = e;
                    continue;
                }
            };
            if !message.metadata.truncation {
                return Ok(message);
            }
            return match tokio::time::timeout(inner.timeout, tcp(server, &bytes, id, name, kind)).await {
                Ok(result) => result,
                Err(_) => {
                    Err(ExchangeError::Failed(format!("no answer from {server} over TCP within {:?}", inner.timeout)))
                }
            };
        }
        Err(ExchangeError::Failed(last))
    }
}

impl Slot {
    /// A fresh random id on this socket and where its answer will arrive.
    fn register(&self) -> (u16, oneshot::Receiver<Vec<u8>>) {
        let (tx, rx) = oneshot::channel();
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            let id: u16 = rand::random();
            if let std::collections::hash_map::Entry::Vacant(v) = waiting.entry(id) {
                v.insert(tx);
                return (id, rx);
            }
        }
    }

    fn forget(&self, id: u16) {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
    }
}

async fn bind_pools(servers: &[SocketAddr]) -> Result<Vec<Vec<Slot>>, ExchangeError> {
    let mut pools = Vec::with_capacity(servers.len());
    for server in servers {
        let mut pool = Vec::with_capacity(SOCKETS_PER_SERVER);
        for _ in 0..SOCKETS_PER_SERVER {
            let failed = |what: &str, e: std::io::Error| ExchangeError::Failed(format!("UDP {what} {server}: {e}"));
            let local: SocketAddr = match server {
                SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
                SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
            };
            let socket = UdpSocket::bind(local).await.map_err(|e| failed("socket for", e))?;
            socket.connect(server).await.map_err(|e| failed("connect to", e))?;
            let socket = Arc::new(socket);
            let waiting: Arc<Mutex<Waiting>> = Arc::default();
            let reader = tokio::spawn(read_loop(socket.clone(), waiting.clone())).abort_handle();
            pool.push(Slot { socket, waiting, reader });
        }
        pools.push(pool);
    }
    Ok(pools)
}

/// Hands each datagram to the query waiting for its id; others are dropped.
async fn read_loop(socket: Arc<UdpSocket>, waiting: Arc<Mutex<Waiting>>) {
    let mut buf = vec![0u8; MAX_RESPONSE];
    loop {
        let n = match socket.recv(&mut buf).await {
            Ok(n) => n,
            // An ICMP error from an earlier send (port unreachable): the query it
            // belonged to times out; the socket stays usable.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(5)).await;
                continue;
            }
        };
        let Some(datagram) = buf.get(..n) else { continue };
        let Some(id) = datagram.get(..2).map(|b| u16::from_be_bytes([b[0], b[1]])) else { continue };
        let waiter = waiting.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
        if let Some(tx) = waiter {
            let _ = tx.send(datagram.to_vec());
        }
    }
}

async fn tcp(
    server: SocketAddr,
    request: &[u8],
    id: u16,
    name: &Name,
    kind: RecordType,
) -> Result<Message, ExchangeError> {
    let failed = |what: &str, e: std::io::Error| ExchangeError::Failed(format!("TCP {what} {server}: {e}"));
    let mut stream = TcpStream::connect(server).await.map_err(|e| failed("connect to", e))?;
    let length = u16::try_from(request.len()).map_err(|_| ExchangeError::Failed("query too long".to_owned()))?;
    let mut framed = length.to_be_bytes().to_vec();
    framed.extend_from_slice(request);
    stream.write_all(&framed).await.map_err(|e| failed("send to", e))?;
    let mut prefix = [0u8; 2];
    stream.read_exact(&mut prefix).await.map_err(|e| failed("receive from", e))?;
    // A u16 length: at most MAX_RESPONSE bytes.
    let mut buf = vec![0; usize::from(u16::from_be_bytes(prefix))];
    stream.read_exact(&mut buf).await.map_err(|e| failed("receive from", e))?;
    parse_response(&buf, id, name, kind).map_err(ExchangeError::Malformed)
}

/// Parses a response and checks that it answers the query `id` for `name`/`kind`.
pub fn parse_response(bytes: &[u8], id: u16, name: &Name, kind: RecordType) -> Result<Message, String> {
    if bytes.len() > MAX_RESPONSE {
        return Err(format!("malformed response: {} bytes", bytes.len()));
    }
    let message = Message::from_vec(bytes).map_err(|e| format!("malformed response: {e}"))?;
    if message.metadata.message_type != MessageType::Response || message.metadata.id != id {
        return Err("malformed response: not the response to the query".to_owned());
    }
    match message.queries.as_slice() {
        [q] if q.name() == name && q.query_type() == kind && q.query_class() == DNSClass::IN => Ok(message),
        _ => Err("malformed response: the question is not the one asked".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use hickory_resolver::proto::op::Query;
    use hickory_resolver::proto::rr::rdata::A;
    use hickory_resolver::proto::rr::{RData, Record};

    use super::*;

    /// A UDP server that answers each question with an A record whose address encodes
    /// the question's first label, drops every `drop_every`-th datagram, and first sends
    /// a decoy with the wrong id.
    async fn server(drop_every: usize) -> SocketAddr {
        let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let addr = socket.local_addr().unwrap();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 4096];
            let mut seen = 0;
            loop {
                let Ok((n, from)) = socket.recv_from(&mut buf).await else { return };
                seen += 1;
                if drop_every > 0 && seen % drop_every == 0 {
                    continue;
                }
                let query = Message::from_vec(&buf[..n]).unwrap();
                let q = query.queries[0].clone();
                let label = String::from_utf8_lossy(q.name().iter().next().unwrap()).into_owned();
                let octet: u8 = label.trim_start_matches('n').parse().unwrap();
                let mut answer = Message::response(query.metadata.id, query.metadata.op_code);
                answer.add_query(q.clone());
                answer.add_answer(Record::from_rdata(q.name().clone(), 60, RData::A(A::new(127, 0, 0, octet))));
                let mut decoy = answer.clone();
                decoy.metadata.id = query.metadata.id.wrapping_add(1);
                let _ = socket.send_to(&decoy.to_vec().unwrap(), from).await;
                let _ = socket.send_to(&answer.to_vec().unwrap(), from).await;
            }
        });
        addr
    }

    fn question(i: u8) -> (Message, Name) {
        let name = Name::from_str(&format!("n{i}.wire.test.")).unwrap();
        let mut m = Message::query();
        m.add_query(Query::query(name.clone(), RecordType::A));
        (m, name)
    }

    #[tokio::test]
    async fn concurrent_questions_get_their_own_answers() {
        let exchanger = Exchanger::new(vec![server(0).await], Duration::from_secs(2), 2);
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..=250u8 {
            let exchanger = exchanger.clone();
            tasks.spawn(async move {
                let (m, name) = question(i);
                let answer = exchanger.exchange(m, &name, RecordType::A).await.unwrap();
                assert_eq!(answer.answers[0].data, RData::A(A::new(127, 0, 0, i)));
            });
        }
        while let Some(done) = tasks.join_next().await {
            done.unwrap();
        }
    }

    #[tokio::test]
    async fn a_lost_datagram_is_asked_again_and_silence_is_an_error() {
        let exchanger = Exchanger::new(vec![server(2).await], Duration::from_millis(200), 2);
        for i in 0..6u8 {
            let (m, name) = question(i);
            assert!(exchanger.exchange(m, &name, RecordType::A).await.is_ok(), "question {i}");
        }
        // Nothing listens here: every try times out (or is refused), and it says so.
        let silent = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let exchanger = Exchanger::new(vec![silent.local_addr().unwrap()], Duration::from_millis(100), 2);
        let (m, name) = question(1);
        let err = exchanger.exchange(m, &name, RecordType::A).await.unwrap_err();
        assert!(err.to_string().contains("no answer"), "{err}");
    }
}
