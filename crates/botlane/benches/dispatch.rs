//! Dispatch throughput: text invocations per second through a bot with a
//! trivial handler, over loopback through the devserver, beside a raw
//! WebSocket echo of frames of the same size in the same run.
//!
//! Run with `cargo bench -p botlane --bench dispatch`.

#![allow(missing_docs, clippy::unwrap_used)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use botlane::{Client, ClientOptions, CommandContext, CommandDeclaration};
use botlane_devserver::{DevServer, DevServerConfig, TestUser};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::Message;

const BATCH: u64 = 200;
const LINE: &str = "/tick";

struct Bot {
    _server: DevServer,
    _client: Client,
    _dir: tempfile::TempDir,
    alice: TestUser,
    channel: String,
    handled: Arc<AtomicU64>,
    progress: Arc<Notify>,
}

async fn bot() -> Bot {
    let server = DevServer::start(DevServerConfig::default()).await.unwrap();
    let account = server.add_bot("bench");
    let human = server.add_user("alice");
    let space = server.create_server("s");
    let channel = server.create_channel(&space, "c").unwrap();
    server.add_member(&channel, &account.id).unwrap();
    server.add_member(&channel, &human.id).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let client = Client::new(ClientOptions::new(
        account.token.clone(),
        dir.path().join("k"),
        server.ws_url(),
    ))
    .unwrap();
    let handled = Arc::new(AtomicU64::new(0));
    let progress = Arc::new(Notify::new());
    let (h, p) = (handled.clone(), progress.clone());
    client
        .commands()
        .register(
            CommandDeclaration::new("tick", "Count"),
            move |_ctx: CommandContext| {
                h.fetch_add(1, Ordering::SeqCst);
                p.notify_one();
                async { Ok::<(), std::io::Error>(()) }
            },
        )
        .unwrap();
    client.login().await.unwrap();
    let alice = TestUser::connect(&server.ws_url(), &human.token)
        .await
        .unwrap();
    alice.open_channel(&channel).await.unwrap();
    Bot {
        _server: server,
        _client: client,
        _dir: dir,
        alice,
        channel,
        handled,
        progress,
    }
}

impl Bot {
    /// Sends `n` lines (pipelined) and waits until the bot has handled them all.
    async fn run(&self, n: u64) -> Duration {
        let start = Instant::now();
        let target = self.handled.load(Ordering::SeqCst) + n;
        let sends = (0..n).map(|_| self.alice.send_text(&self.channel, LINE));
        for sent in futures_util::future::join_all(sends).await {
            sent.unwrap();
        }
        while self.handled.load(Ordering::SeqCst) < target {
            let _ = tokio::time::timeout(Duration::from_millis(50), self.progress.notified()).await;
        }
        start.elapsed()
    }
}

/// A WebSocket server on loopback that echoes every text frame.
async fn echo_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            stream.set_nodelay(true).unwrap();
            tokio::spawn(async move {
                let mut ws = tokio_tungstenite::accept_async(stream).await.unwrap();
                while let Some(Ok(msg)) = ws.next().await {
                    if msg.is_text() && ws.send(msg).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    format!("ws://{addr}")
}

fn bench_dispatch(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let bot = rt.block_on(bot());
    // A frame the size of what the bot receives for one line: a sealed
    // message_create push.
    let frame = rt.block_on(async {
        let id = bot.alice.send_text(&bot.channel, LINE).await.unwrap();
        let stored = bot
            ._server
            .messages(&bot.channel)
            .into_iter()
            .find(|m| m.id == id)
            .unwrap();
        botlane_proto::encode_frame(
            botlane_proto::OpCode::MessageCreate,
            &botlane_proto::payload::MessageCreate::new(stored),
        )
    });
    let url = rt.block_on(echo_server());
    let (mut ws, _) = rt
        .block_on(tokio_tungstenite::connect_async_with_config(
            url, None, true,
        ))
        .unwrap();

    let mut group = c.benchmark_group("dispatch");
    group.throughput(Throughput::Elements(BATCH));
    group.sample_size(20);
    group.bench_function("text_invocations_through_bot", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += bot.run(BATCH).await;
                }
                total
            })
        })
    });
    group.bench_function("baseline_raw_websocket_echo", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    for _ in 0..BATCH {
                        ws.send(Message::text(frame.clone())).await.unwrap();
                    }
                    for _ in 0..BATCH {
                        ws.next().await.unwrap().unwrap();
                    }
                }
                start.elapsed()
            })
        })
    });
    group.finish();
}

criterion_group!(benches, bench_dispatch);
criterion_main!(benches);
