//! A memory benchmark of the devserver binary under hostile clients (not a
//! test: it prints a table and asserts nothing).
//!
//! ```text
//! cargo build -p botlane-devserver --bin botlane-devserver --example memory
//! target/debug/examples/memory            # every case
//! target/debug/examples/memory flood      # one case
//! ```
//!
//! Each case starts a fresh `botlane-devserver` child (the binary next to
//! this example's directory), drives it over loopback with raw clients, and
//! reads the child's `VmRSS` and `VmHWM` from `/proc/<pid>/status`: at start,
//! at the end of the load, and two seconds after every client has gone. The
//! clients live in this process, so their own memory is not counted.
#![allow(
    clippy::print_stdout,
    clippy::unwrap_used,
    reason = "a benchmark program: its table is its output, and any failure ends it"
)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{connect_async, MaybeTlsStream, WebSocketStream};

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

const SENDER: &str = "bench-sender-token";
const SINK: &str = "bench-sink-token";

/// One devserver child and where it listens.
struct Server {
    child: Child,
    ws_url: String,
    rest_url: String,
    channel: String,
}

impl Server {
    fn start() -> Self {
        let exe = std::env::current_exe().unwrap();
        let bin = exe
            .parent()
            .and_then(|examples| examples.parent())
            .unwrap()
            .join("botlane-devserver");
        let config =
            std::env::temp_dir().join(format!("botlane-memory-{}.json", std::process::id()));
        std::fs::write(
            &config,
            json!({
                "users": [
                    {"name": "sender", "token": SENDER},
                    {"name": "sink", "token": SINK},
                ],
                "servers": [{"name": "bench", "id": "s-bench", "channels": [
                    {"name": "flood", "id": "c-flood", "members": ["sender", "sink"]}
                ]}],
            })
            .to_string(),
        )
        .unwrap();
        let mut child = Command::new(&bin)
            .args([
                "--listen",
                "127.0.0.1:0",
                "--rest-listen",
                "127.0.0.1:0",
                "--config",
            ])
            .arg(&config)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e} (build it first)", bin.display()));
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ws_url = lines.next().unwrap().unwrap();
        let ws_url = ws_url.strip_prefix("realtime: ").unwrap().to_owned();
        let rest = lines.next().unwrap().unwrap();
        let rest_url = rest
            .strip_prefix("rest: ")
            .and_then(|r| r.split(' ').next())
            .unwrap()
            .to_owned();
        // Keep draining stdout so the child never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Self {
            child,
            ws_url,
            rest_url,
            channel: "c-flood".into(),
        }
    }

    /// `(VmRSS, VmHWM)` in KiB.
    fn memory(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }

    fn rest_addr(&self) -> String {
        self.rest_url.trim_start_matches("http://").to_owned()
    }

    fn ws_addr(&self) -> String {
        self.ws_url
            .trim_start_matches("ws://")
            .trim_end_matches("/ws")
            .to_owned()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn login(url: &str, token: &str) -> Socket {
    let (mut ws, _) = connect_async(url).await.unwrap();
    // A real public key: the service refuses low-order points such as zeros.
    let key = botlane_proto::crypto::IdentityKeyPair::from_secret_bytes([7; 32])
        .public_key()
        .to_base64();
    let frame =
        json!({"op": 10, "d": {"token": token, "public_key": key, "client": "memory-bench"}});
    ws.send(Message::text(frame.to_string())).await.unwrap();
    // The login reply, then ready (and any channel keys).
    for _ in 0..2 {
        ws.next().await.unwrap().unwrap();
    }
    ws
}

/// What a case reports: what happened, and the child's RSS (KiB) while its
/// clients were still connected.
type Notes = (String, u64);

async fn flood(server: &Server) -> Notes {
    const N: usize = 200_000;
    let ws = login(&server.ws_url, SENDER).await;
    let (mut sink, mut stream) = ws.split();
    let writer = tokio::spawn(async move {
        for _ in 0..N {
            sink.feed(Message::text(r#"{"op":12,"d":{}}"#))
                .await
                .unwrap();
        }
        sink.flush().await.unwrap();
        sink
    });
    let mut replies = 0;
    while replies < N {
        match tokio::time::timeout(Duration::from_secs(30), stream.next()).await {
            Ok(Some(Ok(Message::Text(_)))) => replies += 1,
            Ok(Some(Ok(_))) => {}
            _ => break,
        }
    }
    let _ = writer.await;
    let rss = server.memory().0;
    (format!("{N} heartbeats pipelined, {replies} replies"), rss)
}

async fn large_frames(server: &Server) -> Notes {
    const N: usize = 300;
    let (mut ws, _) = connect_async(&server.ws_url).await.unwrap();
    let filler = "x".repeat(1_000_000);
    let frame = format!(r#"{{"op":9999,"d":"{filler}"}}"#);
    let mut sent = 0;
    for _ in 0..N {
        if ws.send(Message::text(frame.clone())).await.is_err() {
            break;
        }
        sent += 1;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss = server.memory().0;
    (
        format!("{sent} of {N} frames of 1 MB from a connection that never logs in"),
        rss,
    )
}

async fn http_bodies(server: &Server) -> Notes {
    const N: usize = 300;
    let body = vec![b'x'; 1_000_000];
    let mut answered = 0;
    for _ in 0..N {
        let Ok(mut tcp) = TcpStream::connect(server.rest_addr()).await else {
            continue;
        };
        let head = format!(
            "POST /api/anything HTTP/1.1\r\nHost: bench\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        if tcp.write_all(head.as_bytes()).await.is_err() || tcp.write_all(&body).await.is_err() {
            continue;
        }
        let mut reply = Vec::new();
        let _ = tokio::time::timeout(
            Duration::from_secs(5),
            tokio::io::AsyncReadExt::read_to_end(&mut tcp, &mut reply),
        )
        .await;
        if reply.starts_with(b"HTTP/1.1 ") {
            answered += 1;
        }
    }
    let rss = server.memory().0;
    (
        format!("{N} unauthenticated POSTs of 1 MB, {answered} answered"),
        rss,
    )
}

/// Whether a socket is still open: no EOF and no reset pending.
fn is_open(tcp: &TcpStream) -> bool {
    let mut buf = [0u8; 512];
    loop {
        match tcp.try_read(&mut buf) {
            Ok(0) => return false,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
            Err(_) => return false,
        }
    }
}

async fn idle_connections(server: &Server) -> Notes {
    const N: usize = 2_000;
    let mut open = Vec::new();
    let mut refused = 0;
    for _ in 0..N {
        match connect_async(&server.ws_url).await {
            Ok((ws, _)) => open.push(ws),
            Err(_) => refused += 1,
        }
    }
    let accepted = open.len();
    let wait = Duration::from_secs(15);
    tokio::time::sleep(wait).await;
    let still = open
        .iter()
        .filter(|ws| match ws.get_ref() {
            MaybeTlsStream::Plain(tcp) => is_open(tcp),
            _ => true,
        })
        .count();
    let rss = server.memory().0;
    (format!(
        "{N} WebSockets that never log in: {accepted} upgraded, {refused} refused, {still} still open after {}s",
        wait.as_secs()
    ), rss)
}

async fn slowloris(server: &Server) -> Notes {
    const N: usize = 200;
    let mut sockets = Vec::new();
    for addr in [server.ws_addr(), server.rest_addr()] {
        for _ in 0..N {
            if let Ok(mut tcp) = TcpStream::connect(&addr).await {
                let _ = tcp.write_all(b"GET /ws HTTP/1.1\r\nHost: bench\r\n").await;
                sockets.push(tcp);
            }
        }
    }
    let started = Instant::now();
    let wait = Duration::from_secs(15);
    while started.elapsed() < wait {
        for tcp in &mut sockets {
            let _ = tcp.write_all(b"X-Slow: 1\r\n").await;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let still = sockets.iter().filter(|tcp| is_open(tcp)).count();
    let rss = server.memory().0;
    (format!(
        "{} slowloris connections ({N} per listener), one header line a second: {still} still open after {}s",
        sockets.len(),
        wait.as_secs()
    ), rss)
}

async fn never_reading(server: &Server) -> Notes {
    const N: usize = 20_000;
    // Logged in and a member of the channel, but never reads again.
    let sink = login(&server.ws_url, SINK).await;
    let sender = login(&server.ws_url, SENDER).await;
    let (mut tx, mut rx) = sender.split();
    let content = "c".repeat(4096);
    let channel = server.channel.clone();
    let writer = tokio::spawn(async move {
        for _ in 0..N {
            let frame = json!({"op": 30, "d": {"channel_id": channel, "content": content}});
            tx.feed(Message::text(frame.to_string())).await.unwrap();
        }
        tx.flush().await.unwrap();
        tx
    });
    let mut accepted = 0;
    let mut replies = 0;
    while replies < N {
        match tokio::time::timeout(Duration::from_secs(30), rx.next()).await {
            Ok(Some(Ok(Message::Text(text)))) => {
                let frame: Value = serde_json::from_str(text.as_str()).unwrap();
                if frame["op"] == 30 {
                    replies += 1;
                    if frame["d"]["code"] == 0 {
                        accepted += 1;
                    }
                }
            }
            Ok(Some(Ok(_))) => {}
            _ => break,
        }
    }
    let _ = writer.await;
    let sink_open = match sink.get_ref() {
        MaybeTlsStream::Plain(tcp) => is_open(tcp),
        _ => true,
    };
    let rss = server.memory().0;
    (format!(
        "{N} sends of 4 KB to a channel with a member that never reads: {accepted} accepted; the reader's socket {}",
        if sink_open { "still open" } else { "closed" }
    ), rss)
}

async fn many_sessions(server: &Server) -> Notes {
    const N: usize = 1_000;
    let mut sessions = Vec::new();
    for _ in 0..N {
        sessions.push(login(&server.ws_url, SENDER).await);
    }
    let rss = server.memory().0;
    (format!("{} logged-in sessions", sessions.len()), rss)
}

/// One case: drives the server and reports what happened.
type Case = fn(&Server) -> std::pin::Pin<Box<dyn std::future::Future<Output = Notes> + '_>>;

/// The soft limit on open files of this process (the child inherits it).
fn open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// Cases that hold thousands of sockets open on both sides.
const FD_HUNGRY: [&str; 2] = ["idle_connections", "many_sessions"];

/// Open files the fd-hungry cases need (2,000 sockets on each side, and slack).
const FDS_NEEDED: u64 = 4_500;

fn mib(kib: u64) -> String {
    format!("{:.1}", kib as f64 / 1024.0)
}

#[tokio::main]
async fn main() {
    let only = std::env::args().nth(1);
    let cases: [(&str, Case); 7] = [
        ("flood", |s| Box::pin(flood(s))),
        ("large_frames", |s| Box::pin(large_frames(s))),
        ("http_bodies", |s| Box::pin(http_bodies(s))),
        ("idle_connections", |s| Box::pin(idle_connections(s))),
        ("slowloris", |s| Box::pin(slowloris(s))),
        ("never_reading", |s| Box::pin(never_reading(s))),
        ("many_sessions", |s| Box::pin(many_sessions(s))),
    ];
    println!("| case | RSS at start (MiB) | RSS under load (MiB) | peak RSS (MiB) | RSS 2 s after the clients left (MiB) | what happened |");
    println!("|---|---|---|---|---|---|");
    for (name, case) in cases {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let fds = open_files_limit();
        if FD_HUNGRY.contains(&name) && fds.is_some_and(|n| n < FDS_NEEDED) {
            println!(
                "| {name} | | | | | skipped: the open-files limit is {}, the case needs {FDS_NEEDED} (raise it with `ulimit -n`) |",
                fds.unwrap_or(0)
            );
            continue;
        }
        let server = Server::start();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (start, _) = server.memory();
        // The clients are dropped at the end of the case.
        let (notes, loaded) = case(&server).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        let (after, peak) = server.memory();
        println!(
            "| {name} | {} | {} | {} | {} | {notes} |",
            mib(start),
            mib(loaded),
            mib(peak),
            mib(after)
        );
    }
}
