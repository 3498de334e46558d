//! Soak tests: a bot that runs for weeks must not grow. Each test repeats a
//! cycle many times over real sockets on loopback (a reconnect, handlers
//! that time out, panic or outlive their connection, REST credentials
//! minted again, subscribers and channels that come and go) and proves,
//! structurally, that nothing accumulates: the runtime's alive tasks
//! (`RuntimeMetrics::num_alive_tasks`), the live heap blocks and bytes
//! counted by a global allocator wrapper (`stats_alloc`: allocated minus
//! freed, no `unsafe` in this crate), the client's own figures
//! (`Client::stats`, `Client::channels`) and the connections the service
//! holds are the same after the last cycle as after an early one.
//!
//! The allocator counts the whole process, so the tests run one at a time
//! (a lock), each on its own runtime; neither RSS nor wall-clock time is
//! measured. Run alone: `cargo test -p botlane --test soak`; with
//! `-- --nocapture` each test prints its series.

#![allow(clippy::unwrap_used)]

mod peer;
mod soak_harness;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use botlane::crypto::ChannelKey;
use botlane::rest::Method;
use botlane::{
    Client, ClientOptions, CommandContext, CommandDeclaration, CommandErrorReason, Event,
};
use botlane_devserver::{DevServer, DevServerConfig, Limits};
use peer::{eventually, eventually_within, login, next_frame, send, serve, upgrade};
use soak_harness::{soak, soak_on, Series, SETTLE};
use tokio::sync::mpsc;

/// What the test tells the fake service's live connection to do.
enum Order {
    /// Push a message (op 32) in channel `c1` with this text, sealed.
    Say(String),
    /// Push a frame as it is.
    Raw(String),
    /// Push a new key for this channel (op 50), wrapped to the bot.
    Key(String),
    /// Drop the connection without a close frame, as a network failure would.
    Drop,
}

/// A fake realtime service whose connections log the bot in as a member
/// of `c1`, share `c1`'s key with it, answer every request, and take the
/// test's [`Order`]s.
struct Fake {
    addr: std::net::SocketAddr,
    accepted: Arc<AtomicUsize>,
    /// Connections whose handler has not ended yet.
    open: Arc<AtomicUsize>,
    orders: mpsc::UnboundedSender<Order>,
}

impl Fake {
    async fn start() -> Self {
        let (orders, taken) = mpsc::unbounded_channel::<Order>();
        let taken = Arc::new(tokio::sync::Mutex::new(taken));
        let open = Arc::new(AtomicUsize::new(0));
        let key = Arc::new(ChannelKey::generate().unwrap());
        let ids = Arc::new(AtomicUsize::new(0));
        let (addr, accepted) = {
            let open = open.clone();
            serve(move |tcp, n| {
                let (taken, open, key, ids) = (taken.clone(), open.clone(), key.clone(), ids.clone());
                async move {
                    let _open = Open::new(&open);
                    let mut ws = upgrade(tcp).await;
                    let Some(public_key) = login(&mut ws, n, &["c1"]).await else {
                        return;
                    };
                    send(&mut ws, peer::key_push(&key, &public_key, "c1")).await;
                    // One live connection at a time takes the orders.
                    let mut taken = taken.lock().await;
                    loop {
                        tokio::select! {
                            frame = next_frame(&mut ws) => {
                                let Some(op) = frame.and_then(|f| f["op"].as_u64()) else {
                                    return;
                                };
                                if !send(&mut ws, format!(r#"{{"op":{op},"d":{{"code":0}}}}"#)).await {
                                    return;
                                }
                            }
                            order = taken.recv() => match order {
                                Some(Order::Say(text)) => {
                                    let id = format!("m{}", ids.fetch_add(1, Ordering::SeqCst));
                                    let content = key.seal(text.as_bytes(), b"c1").unwrap();
                                    let push = serde_json::json!({"op": 32, "d": {"message": {
                                        "id": id, "channel_id": "c1", "author_id": "u1",
                                        "content": content, "created_at": 1
                                    }}});
                                    send(&mut ws, push.to_string()).await;
                                }
                                Some(Order::Raw(frame)) => {
                                    send(&mut ws, frame).await;
                                }
                                Some(Order::Key(channel)) => {
                                    let (_, push) = peer::channel_key_for(&public_key, &channel);
                                    send(&mut ws, push).await;
                                }
                                Some(Order::Drop) | None => return,
                            },
                        }
                    }
                }
            })
            .await
        };
        Self {
            addr,
            accepted,
            open,
            orders,
        }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    fn open(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    fn order(&self, order: Order) {
        assert!(self.orders.send(order).is_ok(), "the service is up");
    }

    /// Drops the live connection and waits until the client has logged in
    /// again (session `session`) and applied its channels, with the old
    /// connection gone at the service.
    async fn reconnect(&self, client: &Client, session: u64) {
        self.order(Order::Drop);
        eventually("the client to log in again", || {
            client.stats().sessions == session && self.open() == 1 && client.channels().len() == 1
        })
        .await;
        assert_eq!(
            self.accepted() as u64,
            session,
            "one connection per session"
        );
    }
}

/// One connection handler running at the fake service.
struct Open(Arc<AtomicUsize>);

impl Open {
    fn new(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Self(count.clone())
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// `peer::options` with reconnects quick enough for many cycles: a service
/// that drops every session right after login makes the backoff grow to
/// its maximum, here 30 ms.
fn quick(addr: std::net::SocketAddr, dir: &tempfile::TempDir) -> ClientOptions {
    peer::patient(peer::options(addr, dir))
        .reconnect_delays(Duration::from_millis(5), Duration::from_millis(30))
}

/// The next `n` command failures' reasons, in the order they came.
async fn failures(events: &mut botlane::Events, n: usize) -> Vec<CommandErrorReason> {
    tokio::time::timeout(peer::WAIT, async {
        let mut reasons = Vec::new();
        while reasons.len() < n {
            if let Ok(Event::CommandError(failure)) = events.recv().await {
                reasons.push(failure.reason);
            }
        }
        reasons
    })
    .await
    .expect("the failures are reported")
}

const RECONNECTS: u64 = 60;

#[test]
fn reconnects_leave_no_task_or_heap_behind() {
    soak(|| reconnect_cycles("reconnects"));
}

/// The same on two worker threads: the client's tasks and the service's
/// run in parallel, and wake each other across threads.
#[test]
fn reconnects_on_a_multi_thread_runtime_leave_no_task_or_heap_behind() {
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.worker_threads(2);
    soak_on(runtime, || reconnect_cycles("reconnects, 2 threads"));
}

async fn reconnect_cycles(name: &'static str) {
    {
        let fake = Fake::start().await;
        let dir = tempfile::tempdir().unwrap();
        let client = peer::client(quick(fake.addr, &dir)).await;
        let mut events = client.events();
        eventually("the first session's key", || client.channels().len() == 1).await;
        let mut series = Series::new(name, 5, RECONNECTS as usize);
        for session in 2..=RECONNECTS + 1 {
            fake.reconnect(&client, session).await;
            // Read what the cycle sent: the subscriber's queue is not the subject.
            while let Ok(Some(_)) = events.try_recv() {}
            series.record().await;
        }
        let stats = client.stats();
        assert_eq!(stats.sessions, RECONNECTS + 1);
        assert_eq!(stats.connect_attempts, RECONNECTS + 1, "no attempt failed");
        assert_eq!((stats.push_queue_len, stats.handlers_running), (0, 0));
        assert_eq!(fake.open(), 1, "the service holds the live connection only");
        series.assert_flat(24, Some(8 * 1024)).await;
        client.close().await.unwrap();
    }
}

const HANDLER_CYCLES: u64 = 30;

/// Each cycle invokes a handler that never finishes (ended by its
/// timeout), one that panics, and one that is still running when the
/// connection drops (it outlives the connection, then times out), then
/// waits for the three failures: every invocation's task ends and gives
/// its permit back, whatever became of its handler.
#[test]
fn handlers_that_time_out_panic_or_outlive_their_connection_leave_nothing_behind() {
    soak(|| async {
        let fake = Fake::start().await;
        let dir = tempfile::tempdir().unwrap();
        let options = quick(fake.addr, &dir).handler_timeout(Duration::from_millis(100));
        let client = Client::new(options).unwrap();
        let started = Arc::new(AtomicUsize::new(0));
        for name in ["hang", "linger"] {
            let started = started.clone();
            client
                .commands()
                .register(
                    CommandDeclaration::new(name, "Never finishes"),
                    move |_ctx: CommandContext| {
                        started.fetch_add(1, Ordering::SeqCst);
                        async {
                            std::future::pending::<()>().await;
                            Ok::<(), std::io::Error>(())
                        }
                    },
                )
                .unwrap();
        }
        let counter = started.clone();
        client
            .commands()
            .register(
                CommandDeclaration::new("boom", "Panics"),
                move |_ctx: CommandContext| {
                    counter.fetch_add(1, Ordering::SeqCst);
                    async {
                        tokio::task::yield_now().await;
                        std::panic::panic_any(QUIET_PANIC);
                        #[allow(unreachable_code)]
                        Ok::<(), std::io::Error>(())
                    }
                },
            )
            .unwrap();
        quiet_panics();
        let mut events = client.events();
        tokio::time::timeout(peer::WAIT, client.login())
            .await
            .unwrap()
            .unwrap();
        eventually("the first session's key", || client.channels().len() == 1).await;
        let mut series = Series::new("handlers", 5, HANDLER_CYCLES as usize);
        for session in 2..=HANDLER_CYCLES + 1 {
            for line in ["/hang", "/boom", "/linger"] {
                fake.order(Order::Say(line.into()));
            }
            eventually("the three invocations to start", || {
                started.load(Ordering::SeqCst) as u64 == 3 * (session - 1)
            })
            .await;
            // `/linger` (and `/hang`) outlive the connection they came on.
            fake.reconnect(&client, session).await;
            let mut reasons = failures(&mut events, 3).await;
            reasons.sort_by_key(|r| format!("{r:?}"));
            assert_eq!(
                reasons,
                [
                    CommandErrorReason::Handler,
                    CommandErrorReason::Timeout,
                    CommandErrorReason::Timeout
                ]
            );
            eventually("the permits back", || client.stats().handlers_running == 0).await;
            while let Ok(Some(_)) = events.try_recv() {}
            series.record().await;
        }
        series.assert_flat(24, Some(8 * 1024)).await;
        client.close().await.unwrap();
    });
}

/// The payload of the panics the tests cause on purpose.
const QUIET_PANIC: &str = "soak: a handler that panics on purpose";

/// Keeps the panics caused on purpose out of the test's output.
fn quiet_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<&str>() != Some(&QUIET_PANIC) {
            default(info);
        }
    }));
}

const MEMBERSHIP_CYCLES: usize = 60;

/// Each cycle adds a channel (op 34), shares its key (op 50), sends a
/// message in it, then removes it (op 35); along the way, subscribers come
/// and go (some with unread events) and the registry changes without
/// changing the menu. The channel list, the keys (in memory and in the
/// keystore file) and the subscribers are back to what they were.
#[test]
fn channels_keys_subscribers_and_registry_changes_that_come_and_go_leave_nothing_behind() {
    soak(|| async {
        let fake = Fake::start().await;
        let dir = tempfile::tempdir().unwrap();
        let options = quick(fake.addr, &dir).keystore_save_window(Duration::ZERO);
        let client = peer::client(options).await;
        let mut events = client.events();
        eventually("the first session's key", || client.channels().len() == 1).await;
        let mut series = Series::new("membership", 5, MEMBERSHIP_CYCLES);
        for cycle in 0..MEMBERSHIP_CYCLES {
            // A few ids over and over, and a new one each time.
            let channel = if cycle % 2 == 0 {
                format!("again-{}", cycle % 6)
            } else {
                format!("new-{cycle}")
            };
            let unread: Vec<botlane::Events> = (0..4).map(|_| client.events()).collect();
            fake.order(Order::Raw(
                serde_json::json!({"op": 34, "d": {"channel": {"id": channel, "server_id": "s1", "name": channel}}})
                    .to_string(),
            ));
            fake.order(Order::Key(channel.clone()));
            eventually("the channel added", || client.channels().len() == 2).await;
            fake.order(Order::Say(format!("in {channel}")));
            fake.order(Order::Raw(
                serde_json::json!({"op": 35, "d": {"channel_id": channel}}).to_string(),
            ));
            eventually("the channel removed", || client.channels().len() == 1).await;
            drop(unread);
            // Changes that leave the menu as it was, and one that fails.
            client.commands().update(|_| Ok::<(), ()>(())).unwrap();
            let _ = client.commands().update(|registry| {
                registry.register(
                    CommandDeclaration::new("same", "Twice"),
                    |_ctx: CommandContext| async { Ok::<(), std::io::Error>(()) },
                )?;
                registry.register(
                    CommandDeclaration::new("same", "Twice"),
                    |_ctx: CommandContext| async { Ok::<(), std::io::Error>(()) },
                )?;
                Ok::<(), botlane::DeclarationError>(())
            });
            while let Ok(Some(_)) = events.try_recv() {}
            series.record().await;
        }
        assert_eq!(client.stats().sessions, 1, "one session throughout");
        let keystore = dir.path().join("k");
        let mut stored = Vec::new();
        eventually_within(SETTLE, "the keystore to keep c1's key only", || {
            stored = botlane::keystore::Keystore::open_or_create(&keystore)
                .map(|k| k.channel_ids().map(str::to_owned).collect())
                .unwrap_or_default();
            stored == ["c1"]
        })
        .await;
        series.assert_flat(24, Some(8 * 1024)).await;
        client.close().await.unwrap();
    });
}

const REST_CYCLES: usize = 60;

/// Each cycle makes REST calls, and every third one first has the service
/// forget the bot's credential (so the call gets a 401, mints again over
/// the realtime session and retries) or fail the next mint: the lane's
/// tasks, the connections at the service and the heap stay as they were.
#[test]
fn rest_credentials_minted_again_and_again_leave_nothing_behind() {
    soak(|| async {
        // The service keeps records of frames and requests, and counts mints
        // in a window: kept few, so that its figures settle within a few cycles.
        let limits = Limits::default().frame_records(4).http_records(4);
        let config = DevServerConfig::default()
            .bot_rest_credentials(true)
            .limits(limits);
        let server = DevServer::start(config).await.unwrap();
        server.set_mint_rate_limit(1_000, Duration::from_millis(1));
        let bot = server.add_bot("soakbot");
        let dir = tempfile::tempdir().unwrap();
        let options = ClientOptions::new(bot.token.clone(), dir.path().join("k"), server.ws_url())
            .rest_url(server.rest_url());
        let client = peer::client(options).await;
        let rest = client.rest();
        let mut series = Series::new("rest", 5, REST_CYCLES);
        let mut failed = 0;
        for cycle in 0..REST_CYCLES {
            match cycle % 3 {
                0 => {
                    server.purge_rest_credentials(&bot.id).unwrap();
                }
                1 => server.fail_next_mints(1),
                _ => {}
            }
            for _ in 0..3 {
                if rest
                    .request(Method::GET, "/api/files/list", None)
                    .await
                    .is_err()
                {
                    failed += 1;
                }
            }
            assert_eq!(
                server.view(|s| s.connection_count()),
                1,
                "the bot's session only"
            );
            series.record().await;
        }
        assert!(
            failed <= REST_CYCLES / 3,
            "only calls with a failed mint fail: {failed}"
        );
        let mints = server.mint_count();
        assert!(mints as usize >= REST_CYCLES / 3, "minted again: {mints}");
        // Blocks only: the service, in this process, remembers the credentials
        // that ended (up to 65,536 of them, its `MAX_ENDED`) in a set and a
        // queue whose capacity grows without new blocks.
        series.assert_flat(24, None).await;
        client.close().await.unwrap();
        server.shutdown().await;
    });
}
