//! The snippets of `docs/guide.md` and `docs/coming-from-poise.md` that are
//! not part of the standing bot (`examples/dicebot`): each module is one
//! section's code, written as a bot's own library would be, with the tests
//! that show it works over real sockets against an in-process devserver.
//! `tests/pure/guide.rs` checks that every snippet of those pages is an excerpt
//! of a compiled file.
// The modules are written as a bot crate's public library would be: their
// `pub` items are what a reader copies.
#![allow(unreachable_pub)]
#![allow(clippy::unwrap_used)]

mod answers;
mod bounds;
mod checks;
mod grammar;
mod help;
mod modbot;
mod poise;
mod state;
mod timeout;
mod typed;

use std::time::Duration;

use botlane::{CommandError, Event, Events};

/// How long a test waits for the client's next event of a kind.
const EVENT_WAIT: Duration = Duration::from_secs(10);

/// The next event `pick` accepts, skipping the others; a test failure after
/// [`EVENT_WAIT`].
async fn next_event<T>(events: &mut Events, pick: impl Fn(Event) -> Option<T>) -> T {
    let wait = async {
        loop {
            if let Some(found) = pick(events.recv().await.unwrap()) {
                return found;
            }
        }
    };
    tokio::time::timeout(EVENT_WAIT, wait)
        .await
        .unwrap_or_else(|_| panic!("no such event within {EVENT_WAIT:?}"))
}

/// The next [`Event::CommandError`].
async fn next_failure(events: &mut Events) -> CommandError {
    next_event(events, |event| match event {
        Event::CommandError(error) => Some(error),
        _ => None,
    })
    .await
}
