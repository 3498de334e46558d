//! The library's own dispatch cost, isolated: a bare service written with
//! tokio-websockets (`support/fake_service.rs`) replays 1,000 pre-sealed
//! `message_create` pushes (half plain `hello`, half the invocation
//! `/tick`, which a no-op handler counts) as fast as the socket takes them,
//! to a logged-in bot and, in the same run, to a raw tokio-websockets
//! client that only counts the frames it reads. The service runs on a
//! thread of its own; the receivers share one runtime.
//! `bot_invocations_only` replays 1,000 `/tick`, as information;
//! `bot_recorded` and `bot_invocations_only_recorded` replay the same
//! batches to a second bot, logged in after the process's Prometheus
//! metrics recorder was installed (the others resolved their handles
//! before it, so they run as bots without one): the cost of the metrics.
//! `bot_in_10000_channels` replays the first batch to a bot whose `ready`
//! listed 9,999 other channels before the bench's (from a second fake
//! service), as information: a message's cost must not grow with them.
//! `baseline_raw_open` is the floor of any bot built on the bot's crates: a
//! raw client that reads each frame, parses its JSON and opens its content
//! (serde_json, base64, aes-gcm; `support/raw_opener.rs`), on one task;
//! `baseline_fast_open` the same with the bot's one-pass reading
//! (`botlane_proto::read_message_push`), as information; so are the lean
//! bot and the kept bot (the lean one with what issue 32 keeps of a bot),
//! which the rounds time beside them.
//!
//! The bot's batch ends when its handler has run for the last invocation;
//! a raw batch when the last frame was read (and opened). Goals (issue 32):
//! the bot's throughput at least 0.8× the floor's (`baseline_raw_open`)
//! and 0.45× the raw receiver's, judged after criterion's runs on five
//! rounds of batches to the raw receiver, the floor, the fast floor, the
//! bot, the bot in 10,000 channels, the lean bot and the kept bot in turn:
//! the median round, every round printed with the load average; the
//! recorder's cost on interleaved pairs. Figures: `docs/benchmarks.md`.
//!
//! Run with `cargo bench -p botlane --bench dispatch_isolated`.

#![allow(missing_docs, clippy::unwrap_used)]

#[path = "support/bench_table.rs"]
mod bench_table;
#[path = "support/fake_service.rs"]
mod fake_service;
#[path = "support/isolated.rs"]
mod isolated;
#[path = "support/progress.rs"]
mod progress;
#[path = "support/raw_client.rs"]
mod raw_client;
#[path = "support/raw_opener.rs"]
mod raw_opener;
#[path = "support/receivers.rs"]
mod receivers;

use criterion::{criterion_group, criterion_main, Criterion};

fn bench(c: &mut Criterion) {
    isolated::bench_isolated(c, "dispatch_isolated", true);
}

criterion_group!(benches, bench);
criterion_main!(benches);
