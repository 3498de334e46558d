//! The library's own dispatch cost, isolated: a bare service written with
//! tokio-websockets (`support/fake_service.rs`) replays 1,000 pre-sealed
//! `message_create` pushes (half plain `hello`, half the invocation
//! `/tick`, which a no-op handler counts) as fast as the socket takes them,
//! to a logged-in bot and, in the same run, to a raw tokio-websockets
//! client that only counts the frames it reads. The service runs on a
//! thread of its own; the two receivers share one runtime.
//! `bot_invocations_only` replays 1,000 `/tick`, as information.
//!
//! The bot's batch ends when its handler has run for the last invocation;
//! the raw batch when the last frame was read. Goal (issue 13): the bot's
//! throughput at least half the raw receiver's. Figures: `docs/benchmarks.md`.
//!
//! Run with `cargo bench -p botlane --bench dispatch_isolated`.

#![allow(missing_docs, clippy::unwrap_used)]

#[path = "support/fake_service.rs"]
mod fake_service;
#[path = "support/progress.rs"]
mod progress;
#[path = "support/raw_client.rs"]
mod raw_client;
#[path = "support/receivers.rs"]
mod receivers;

use std::time::{Duration, Instant};

use botlane::crypto::IdentityKeyPair;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fake_service::{FakeService, Mix, Shape};
use receivers::{RawReceiver, TickBot};

/// Pushes per batch: under the bot's push queue (1,024 by default), so
/// that a batch never overflows it while dispatch catches up.
const BATCH: usize = 1000;

fn bench_isolated(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut service = FakeService::start();
    let batch = service.batch(BATCH, Mix::Alternating);
    let invocations = service.batch(BATCH, Mix::Invocations);
    let shapes = [
        Shape::new(BATCH, Mix::Alternating),
        Shape::new(BATCH, Mix::Invocations),
    ];
    let (bot, bot_session) = rt.block_on(async {
        let bot = TickBot::login(&service.url).await;
        (bot, service.next_session().await)
    });
    let (raw, raw_session) = rt.block_on(async {
        let key = IdentityKeyPair::generate()
            .unwrap()
            .public_key()
            .to_base64();
        let raw = RawReceiver::login(&service.url, &key).await;
        (raw, service.next_session().await)
    });
    eprintln!(
        "dispatch_isolated: batches of {} pushes of {} bytes ({} invocations)",
        shapes[0].len,
        batch.frame_bytes(),
        shapes[0].invocations
    );

    let mut group = c.benchmark_group("dispatch_isolated");
    group.throughput(Throughput::Elements(BATCH as u64));
    group.sample_size(20);
    let runs = [
        ("bot", &batch, shapes[0]),
        ("bot_invocations_only", &invocations, shapes[1]),
    ];
    for (name, batch, shape) in runs {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let start = bot.handled.get();
                        let clock = Instant::now();
                        bot_session.replay(batch).await;
                        bot.wait_batch(start, shape).await;
                        total += clock.elapsed();
                    }
                    total
                })
            })
        });
    }
    group.bench_function("baseline_raw_receiver", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = raw.frames.get();
                    let clock = Instant::now();
                    raw_session.replay(&batch).await;
                    raw.wait_batch(start, shapes[0]).await;
                    total += clock.elapsed();
                }
                total
            })
        })
    });
    group.finish();
    bot.assert_nothing_dropped();
}

criterion_group!(benches, bench_isolated);
criterion_main!(benches);
