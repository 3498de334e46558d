//! Memory of a bot under hostile realtime peers: a benchmark, not a test.
//!
//! Each scenario runs in a child process of its own (peak RSS only grows),
//! against a fake service on loopback written here with tokio-tungstenite:
//!
//! - `flood`: after login the peer pushes 200,000 small `message_create`
//!   frames for a channel the bot has no key for, as fast as it can write.
//! - `large`: after login the peer sends eight 15 MiB text frames.
//! - `idle`: 200 bot clients log in and stay idle.
//!
//! It prints VmRSS and VmHWM (from `/proc/self/status`) before and after.
//! Run with `cargo run -p botlane --example memory_hostile` (all scenarios) or
//! pass one scenario name. Figures are in `docs/benchmarks.md`.

// The figures on stdout are this example's whole point.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::error::Error;
use std::time::{Duration, Instant};

use botlane::{Client, ClientOptions};
use futures_util::{SinkExt, StreamExt};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

const FLOOD_PUSHES: usize = 200_000;
const LARGE_FRAMES: usize = 8;
const LARGE_FRAME_BYTES: usize = 15 * 1024 * 1024;

const IDLE_SESSIONS: usize = 200;

type BoxResult<T> = Result<T, Box<dyn Error>>;

/// (VmRSS, VmHWM) in KiB.
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

#[derive(Clone, Copy)]
enum Mode {
    Flood,
    Large,
    Idle,
}

/// The fake service: answers login, menu and heartbeat, then misbehaves.
async fn serve(listener: TcpListener, mode: Mode) {
    let mut n = 0u64;
    while let Ok((tcp, _)) = listener.accept().await {
        n += 1;
        tokio::spawn(session(tcp, mode, n));
    }
}

async fn session(tcp: TcpStream, mode: Mode, n: u64) {
    let config = WebSocketConfig::default()
        .max_message_size(None)
        .max_frame_size(None);
    let Ok(mut ws) = tokio_tungstenite::accept_async_with_config(tcp, Some(config)).await else {
        return;
    };
    // Login, ready, menu: answered in order.
    loop {
        let Some(Ok(Message::Text(text))) = ws.next().await else {
            return;
        };
        let v: serde_json::Value = serde_json::from_str(text.as_str()).unwrap_or_default();
        let op = v["op"].as_u64().unwrap_or(0);
        let reply = if op == 10 {
            format!(r#"{{"op":10,"d":{{"code":0,"user_id":"bot-{n}"}}}}"#)
        } else {
            format!(r#"{{"op":{op},"d":{{"code":0}}}}"#)
        };
        if ws.send(Message::text(reply)).await.is_err() {
            return;
        }
        if op == 10 {
            let ready = format!(
                r#"{{"op":11,"d":{{"user_id":"bot-{n}","name":"b","kind":"bot","channels":[]}}}}"#
            );
            let _ = ws.send(Message::text(ready)).await;
        }
        if op == 20 {
            break;
        }
    }
    match mode {
        Mode::Idle => {
            while let Some(Ok(msg)) = ws.next().await {
                if let Message::Text(text) = msg {
                    let v: serde_json::Value =
                        serde_json::from_str(text.as_str()).unwrap_or_default();
                    let op = v["op"].as_u64().unwrap_or(0);
                    let _ = ws
                        .send(Message::text(format!(r#"{{"op":{op},"d":{{"code":0}}}}"#)))
                        .await;
                }
            }
        }
        Mode::Flood => {
            for i in 0..FLOOD_PUSHES {
                let push = format!(
                    r#"{{"op":32,"d":{{"message":{{"id":"m{i}","channel_id":"nokey","author_id":"u","content":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","created_at":1}}}}}}"#
                );
                if ws.feed(Message::text(push)).await.is_err() {
                    return;
                }
            }
            let _ = ws.flush().await;
            println!("  peer: wrote {FLOOD_PUSHES} pushes");
            while let Some(Ok(_)) = ws.next().await {}
        }
        Mode::Large => {
            // Raw server frames written in 64 KiB chunks, so that the peer
            // itself holds no large buffer: what grows is the client's.
            let tcp = ws.get_mut();
            let chunk = vec![b'x'; 64 * 1024];
            for _ in 0..LARGE_FRAMES {
                let mut header = vec![0x81u8, 127];
                header.extend_from_slice(&(LARGE_FRAME_BYTES as u64).to_be_bytes());
                if tcp.write_all(&header).await.is_err() {
                    println!("  peer: the client hung up");
                    return;
                }
                for _ in 0..LARGE_FRAME_BYTES / chunk.len() {
                    if tcp.write_all(&chunk).await.is_err() {
                        println!("  peer: the client hung up");
                        return;
                    }
                }
            }
            println!("  peer: wrote {LARGE_FRAMES} frames of 15 MiB");
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
    }
}

async fn run(mode: Mode) -> BoxResult<()> {
    // Warnings are formatted (to nowhere), as an application's logger would.
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_writer(std::io::sink)
        .init();
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("ws://{}/ws", listener.local_addr()?);
    let dir = tempfile::tempdir()?;
    let (rss0, _) = memory();
    // The fake service runs on a runtime of its own, so that its memory
    // is there before the baseline and does not compete for the client's.
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(serve(listener, mode));
    });
    let sessions = if matches!(mode, Mode::Idle) {
        IDLE_SESSIONS
    } else {
        1
    };
    let started = Instant::now();
    let mut clients = Vec::new();
    for i in 0..sessions {
        let options = ClientOptions::new("token", dir.path().join(format!("k{i}")), url.clone())
            .heartbeat_interval(Duration::from_secs(15));
        let client = Client::new(options)?;
        client.login().await?;
        clients.push(client);
    }
    let (rss1, _) = memory();
    // Let the peer do its worst, then let the client settle.
    let settle = match mode {
        Mode::Idle => Duration::from_secs(1),
        Mode::Flood => Duration::from_secs(8),
        Mode::Large => Duration::from_secs(6),
    };
    tokio::time::sleep(settle).await;
    let (rss2, hwm) = memory();
    println!(
        "  baseline VmRSS {} KiB; after login {} KiB; after {:.1} s VmRSS {} KiB, VmHWM {} KiB (peak {:+} KiB over baseline)",
        rss0,
        rss1,
        started.elapsed().as_secs_f64(),
        rss2,
        hwm,
        hwm.saturating_sub(rss0)
    );
    if matches!(mode, Mode::Idle) {
        println!(
            "  {sessions} idle sessions: {} KiB each",
            rss2.saturating_sub(rss0) / sessions as u64
        );
    }
    for client in &clients {
        client.shutdown();
    }
    Ok(())
}

fn main() -> BoxResult<()> {
    let arg = std::env::args().nth(1);
    let mode = match arg.as_deref() {
        Some("flood") => Mode::Flood,
        Some("large") => Mode::Large,
        Some("idle") => Mode::Idle,
        Some(other) => {
            return Err(format!("unknown scenario {other:?}: flood, large or idle").into())
        }
        None => {
            let me = std::env::current_exe()?;
            for scenario in ["flood", "large", "idle"] {
                println!("{scenario}:");
                let status = std::process::Command::new(&me).arg(scenario).status()?;
                if !status.success() {
                    println!("  (exited with {status})");
                }
            }
            return Ok(());
        }
    };
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(run(mode))
}
