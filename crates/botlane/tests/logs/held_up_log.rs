//! A handler that blocks its thread where dispatch polls it in place
//! (`docs/client.md`, "Where an invocation runs") is named in one warning,
//! the user's only clue; its later invocations get a task of their own
//! and add no line. The warnings counted are those naming its own command:
//! the binary's other tests log beside it.

#![allow(clippy::unwrap_used)]

use crate::{capture, support};

use std::time::Duration;

use botlane::{CommandContext, CommandDeclaration};
use capture::Capture;
use support::{bot_says, World};

#[tokio::test]
async fn a_handler_that_blocks_where_it_is_polled_in_place_is_named_in_one_warning() {
    let capture = Capture::global();

    let world = World::new().await;
    let client = world.client();
    client
        .commands()
        .register(
            CommandDeclaration::new("crunch", "Blocks"),
            |ctx: CommandContext| {
                // Blocking on purpose: the mistake the warning is for.
                std::thread::sleep(Duration::from_millis(20));
                async move { ctx.reply("crunched").await }
            },
        )
        .unwrap();
    let alice = world.start(&client).await;
    for _ in 0..3 {
        alice.send_text(&world.channel, "/crunch").await.unwrap();
        assert_eq!(bot_says(&alice, &world).await.content, "crunched");
    }

    let logs = capture.text();
    let held_up: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("holding up the reading of the connection"))
        .collect();
    let warnings: Vec<&str> = held_up
        .iter()
        .copied()
        .filter(|l| l.contains("command=\"crunch\""))
        .collect();
    assert_eq!(warnings.len(), 1, "{held_up:#?}");
    assert!(warnings[0].contains("WARN"), "{}", warnings[0]);
    assert!(warnings[0].contains("spawn_blocking"), "{}", warnings[0]);
}
