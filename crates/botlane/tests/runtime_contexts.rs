//! The client in the places a real application puts it: outside any
//! runtime, across runtimes, after its runtime is gone, on either flavour,
//! in `spawn_blocking`, with options at their extremes. Nothing here may
//! panic, on the caller's thread or on a task of botlane's: a panic hook
//! records every panic of the binary, and each test checks that it saw
//! none.

#![allow(clippy::unwrap_used)]

mod support;

use std::sync::Mutex;
use std::time::Duration;

use botlane::{Client, ClientError, CommandContext, CommandDeclaration, Event};
use support::{next_event, World, WAIT};

static PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Records every panic from now on (once per binary), whatever thread or
/// task it happens on: a panic on a spawned task is otherwise only a log
/// line.
fn watch_panics() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(info.to_string());
            previous(info);
        }));
    });
}

fn assert_no_panics() {
    let panics = PANICS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    assert!(panics.is_empty(), "panicked: {panics:#?}");
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

fn ping() -> CommandDeclaration {
    CommandDeclaration::new("ping", "Check that the bot is alive")
}

/// Registers `/ping`, answered `pong`.
fn register_ping(client: &Client) {
    client
        .commands()
        .register(ping(), |ctx: CommandContext| async move {
            ctx.reply("pong").await
        })
        .unwrap();
}

/// A world and a client logged in to it on a runtime that is then dropped.
fn logged_in_on_a_runtime_that_is_gone() -> (World, Client) {
    let rt = runtime();
    let world = rt.block_on(World::new());
    let client = world.client();
    rt.block_on(client.login()).unwrap();
    drop(rt);
    (world, client)
}

#[test]
fn a_client_is_built_used_and_dropped_outside_any_runtime() {
    watch_panics();
    let dir = tempfile::tempdir().unwrap();
    let options = botlane::ClientOptions::new("t", dir.path().join("k"), "ws://127.0.0.1:1/ws");
    let client = Client::new(options).unwrap();
    register_ping(&client);
    let mut events = client.events();
    assert!(matches!(events.try_recv(), Ok(None)));
    let _rest = client.rest();
    assert!(client.channels().is_empty() && client.bot_id().is_none());
    let _ = client.stats();
    client.shutdown();
    let clone = client.clone();
    drop(client);
    drop(clone);
    assert!(matches!(
        events.try_recv(),
        Err(botlane::EventRecvError::Closed)
    ));
    assert_no_panics();
}

#[test]
fn a_client_logged_in_on_a_runtime_is_dropped_after_that_runtime_is_gone() {
    watch_panics();
    let (world, client) = logged_in_on_a_runtime_that_is_gone();
    let mut events = client.events();
    register_ping(&client);
    client.shutdown();
    drop(client);
    let _ = events.try_recv();
    drop(world);
    assert_no_panics();
}

#[test]
fn a_client_logged_in_on_a_runtime_that_is_gone_is_closed_on_another() {
    watch_panics();
    let (world, client) = logged_in_on_a_runtime_that_is_gone();
    let second = runtime();
    second.block_on(async {
        // The first runtime's tasks are gone: the close frame cannot be
        // written and the keystore's writer lived on that runtime. Either
        // way, an answer and no panic.
        let _ = client.close().await;
        let _ = client.history(&world.channel, 5).await;
        let _ = client.send(&world.channel, "hello").await;
        let _ = client
            .rest()
            .json::<serde_json::Value>(botlane::rest::Method::GET, "/api/files/list", None)
            .await;
        assert!(matches!(
            client.login().await,
            Err(ClientError::AlreadyLoggedIn)
        ));
    });
    drop(client);
    drop(second);
    assert_no_panics();
}

#[test]
fn a_runtime_dropped_while_a_login_is_pending() {
    watch_panics();
    let server_rt = runtime();
    let world = server_rt.block_on(World::new());
    let rt = runtime();
    let client = world.client();
    let pending = client.clone();
    rt.spawn(async move { pending.login().await });
    std::thread::sleep(Duration::from_millis(20));
    drop(rt);
    // Tried again on a new runtime, the login starts over.
    let again = runtime();
    again.block_on(async {
        let _ = tokio::time::timeout(WAIT, client.login()).await;
        let _ = client.close().await;
    });
    drop(client);
    drop(again);
    drop(world);
    drop(server_rt);
    assert_no_panics();
}

#[test]
fn a_client_is_built_and_dropped_in_spawn_blocking_and_on_a_plain_thread() {
    watch_panics();
    let rt = runtime();
    let world = rt.block_on(World::new());
    let options = world.options();
    let client = rt.block_on(async {
        tokio::task::spawn_blocking(move || Client::new(options).unwrap())
            .await
            .unwrap()
    });
    rt.block_on(client.login()).unwrap();
    std::thread::spawn(move || {
        client.shutdown();
        drop(client);
    })
    .join()
    .unwrap();
    drop(world);
    assert_no_panics();
}

#[tokio::test]
async fn concurrent_logins_closes_and_shutdowns_end_in_answers() {
    watch_panics();
    let world = World::new().await;
    let client = world.client();
    let mut tasks = Vec::new();
    for n in 0..12 {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            match n % 3 {
                0 => drop(client.login().await),
                1 => drop(client.close().await),
                _ => client.shutdown(),
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    drop(client);
    assert_no_panics();
}

#[tokio::test]
async fn a_handler_that_drops_the_last_client_handle() {
    watch_panics();
    let world = World::new().await;
    let client = world.client();
    let held = std::sync::Arc::new(Mutex::new(Some(client.clone())));
    let in_handler = held.clone();
    client
        .commands()
        .register(ping(), move |ctx: CommandContext| {
            let held = in_handler.clone();
            async move {
                let last = held.lock().unwrap().take();
                if let Some(client) = last {
                    client.shutdown();
                    drop(client);
                }
                ctx.reply("pong").await
            }
        })
        .unwrap();
    let mut events = client.events();
    let alice = world.start(&client).await;
    drop(client);
    alice.send_text(&world.channel, "/ping").await.unwrap();
    let _ = tokio::time::timeout(Duration::from_secs(2), events.recv()).await;
    assert_no_panics();
}

/// Logs in with `options`, has alice trigger an error answer, drops the
/// connection, and closes: every timer and budget of the session is used
/// once.
async fn exercise(world: &World, options: botlane::ClientOptions) -> Result<(), ClientError> {
    let client = Client::new(options)?;
    register_ping(&client);
    let mut events = client.events();
    tokio::time::timeout(WAIT, client.login())
        .await
        .expect("the login returns")?;
    let alice = world.alice().await;
    alice.send_text(&world.channel, "/ping").await.unwrap();
    alice
        .send_text(&world.channel, "/ping extra")
        .await
        .unwrap();
    alice
        .send_text(&world.channel, "/ping extra")
        .await
        .unwrap();
    next_event(&mut events, |e| matches!(e, Event::CommandError(_))).await;
    world.server.drop_connections();
    next_event(&mut events, |e| matches!(e, Event::Disconnected { .. })).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    client.close().await
}

type SetOption = fn(botlane::ClientOptions) -> botlane::ClientOptions;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn options_at_their_extremes_are_refused_or_work() {
    watch_panics();
    let cases: Vec<(&str, SetOption)> = vec![
        ("request_timeout MAX", |o| o.request_timeout(Duration::MAX)),
        ("connect_timeout MAX", |o| o.connect_timeout(Duration::MAX)),
        ("idle_timeout MAX", |o| o.idle_timeout(Duration::MAX)),
        ("heartbeat_interval near MAX", |o| {
            o.heartbeat_interval(Duration::MAX - Duration::from_secs(1))
                .idle_timeout(Duration::MAX)
        }),
        ("reconnect MAX", |o| {
            o.reconnect_delays(Duration::MAX, Duration::MAX)
        }),
        ("reconnect 1ns..MAX", |o| {
            o.reconnect_delays(Duration::from_nanos(1), Duration::MAX)
        }),
        ("reconnect_reset_after MAX", |o| {
            o.reconnect_reset_after(Duration::MAX)
        }),
        ("reconnect_reset_after 0", |o| {
            o.reconnect_reset_after(Duration::ZERO)
        }),
        ("keystore_save_window 0", |o| {
            o.keystore_save_window(Duration::ZERO)
        }),
        ("push_queue_capacity MAX", |o| {
            o.push_queue_capacity(usize::MAX)
        }),
        ("push_queue_capacity 1", |o| o.push_queue_capacity(1)),
        ("push_queue_bytes MAX", |o| o.push_queue_bytes(usize::MAX)),
        ("push_queue_bytes 1", |o| o.push_queue_bytes(1)),
        ("control_queue_bytes MAX", |o| {
            o.control_queue_bytes(usize::MAX)
        }),
        ("control_queue_bytes 1", |o| o.control_queue_bytes(1)),
        ("max_concurrent_handlers 1", |o| {
            o.max_concurrent_handlers(1)
        }),
        ("max_concurrent_handlers MAX", |o| {
            o.max_concurrent_handlers(usize::MAX)
        }),
        ("handler_timeout MAX", |o| o.handler_timeout(Duration::MAX)),
        ("handler_timeout 1ns", |o| {
            o.handler_timeout(Duration::from_nanos(1))
        }),
        ("error_answer MAX", |o| {
            o.error_answer_limit(u32::MAX, Duration::MAX)
        }),
        ("error_answer 1, MAX", |o| {
            o.error_answer_limit(1, Duration::MAX)
        }),
        ("error_answer 0", |o| {
            o.error_answer_limit(0, Duration::from_secs(1))
        }),
        ("rest_timeout MAX", |o| o.rest_timeout(Duration::MAX)),
        ("rest_refresh_margin MAX", |o| {
            o.rest_refresh_margin(Duration::MAX)
        }),
        ("rest_json_limit MAX", |o| o.rest_json_limit(usize::MAX)),
        ("rest_binary_limit MAX", |o| o.rest_binary_limit(usize::MAX)),
    ];
    for (name, set) in cases {
        let world = World::new().await;
        let result = exercise(&world, set(world.options())).await;
        eprintln!("{name}: {result:?}");
        let panics = std::mem::take(&mut *PANICS.lock().unwrap());
        assert!(panics.is_empty(), "{name}: panicked: {panics:#?}");
        if let Err(e) = result {
            assert!(
                matches!(e, ClientError::InvalidOption { .. }),
                "{name}: {e}"
            );
        }
    }
}
