//! Where invocations run, over the real devserver. Dispatch polls an
//! invocation once where it stands (on the connection task) while its
//! command's handler keeps finishing at once, and spawns it otherwise
//! (`framework/pace.rs`). These pin what that must never cost: a handler
//! that blocks its thread holds up the connection at most once, not on
//! every invocation; and an error hook that panics during that poll does
//! not unwind through the connection task.

#![allow(clippy::unwrap_used)]

use crate::support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use botlane::framework::{CommandSettings, OnError};

use botlane::{Client, CommandContext, CommandDeclaration, Event};
use support::{bot_says, next_event, World, WAIT};

/// The first `/heavy` only blocks its thread for a moment (more than the
/// poll-in-place budget); every later one blocks it until `/light` has
/// run, which can only happen if the connection task is free to read
/// `/light` meanwhile. Its answer says whether `/light` came.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_that_blocks_its_thread_holds_up_the_connection_once_not_every_time() {
    let world = World::new().await;
    let client = world.client();
    let (signal, light_ran) = mpsc::channel::<()>();
    let light_ran = Arc::new(Mutex::new(light_ran));
    let heavy_calls = Arc::new(AtomicU64::new(0));
    let calls = heavy_calls.clone();
    client
        .commands()
        .register(
            CommandDeclaration::new("heavy", "Blocks"),
            move |ctx: CommandContext| {
                let first = calls.fetch_add(1, Ordering::SeqCst) == 0;
                // Blocking on purpose: this is the handler the pace must catch.
                let answer = if first {
                    std::thread::sleep(Duration::from_millis(5));
                    "first"
                } else {
                    let came = light_ran.lock().unwrap().recv_timeout(WAIT);
                    if came.is_ok() {
                        "light came"
                    } else {
                        "light never came"
                    }
                };
                async move { ctx.reply(answer).await }
            },
        )
        .unwrap();
    client
        .commands()
        .register(
            CommandDeclaration::new("light", "Signals"),
            move |_ctx: CommandContext| {
                let _ = signal.send(());
                async { Ok::<(), std::io::Error>(()) }
            },
        )
        .unwrap();
    let alice = world.start(&client).await;

    alice.send_text(&world.channel, "/heavy").await.unwrap();
    let first = bot_says(&alice, &world).await;
    assert_eq!(first.content, "first");

    alice.send_text(&world.channel, "/heavy").await.unwrap();
    alice.send_text(&world.channel, "/light").await.unwrap();
    let second = alice
        .wait_for_message(
            |m| m.author_id == world.bot.id && m.content != "first",
            WAIT * 2,
        )
        .await
        .unwrap();
    assert_eq!(
        second.content, "light came",
        "the second /heavy ran where the connection is read"
    );
    assert_eq!(heavy_calls.load(Ordering::SeqCst), 2);
}

/// A handler that fails at once, with an error hook that panics at once:
/// both run during the poll in place. The bot then answers the next
/// command on the same session.
#[tokio::test]
async fn an_error_hook_that_panics_leaves_the_connection_up() {
    let world = World::new().await;
    let client: Client = world.client();
    let mut events = client.events();
    client
        .commands()
        .update(|registry| {
            registry
                .register_with(
                    CommandDeclaration::new("broken", "Fails"),
                    CommandSettings::new().on_error(OnError::new(|_failure| async {
                        panic!("the error hook's own bug");
                    })),
                    |_ctx: CommandContext| async {
                        Err::<(), _>(std::io::Error::other("handler failed"))
                    },
                )
                .map(drop)
        })
        .unwrap();
    client
        .commands()
        .register(
            CommandDeclaration::new("ping", "Pong"),
            |ctx: CommandContext| async move { ctx.reply("pong").await },
        )
        .unwrap();
    let alice = world.start(&client).await;

    alice.send_text(&world.channel, "/broken").await.unwrap();
    next_event(
        &mut events,
        |e| matches!(e, Event::CommandError(f) if f.command == "broken"),
    )
    .await;
    alice.send_text(&world.channel, "/ping").await.unwrap();
    let pong = bot_says(&alice, &world).await;
    assert_eq!(pong.content, "pong");
    let stats = client.stats();
    assert_eq!(
        (stats.connect_attempts, stats.sessions),
        (1, 1),
        "no reconnect"
    );
    // `/ping`'s task gives its permit back just after the answer is
    // acknowledged; the panicked hook's must be back already.
    tokio::time::timeout(WAIT, async {
        while client.stats().handlers_running > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("every handler permit is given back");
}
