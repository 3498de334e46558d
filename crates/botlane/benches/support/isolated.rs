//! The body of the isolated dispatch benches (`dispatch_isolated` with the
//! system allocator, `dispatch_isolated_mimalloc` with mimalloc as the
//! global allocator): see `dispatch_isolated.rs`.

use std::future::Future;
use std::time::{Duration, Instant};

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use crate::fake_service::{FakeService, Mix, Shape};
use crate::progress::Progress;
use crate::raw_opener::{RawOpener, Reader};
use crate::receivers::{RawReceiver, TickBot};
use botlane::crypto::IdentityKeyPair;
use criterion::{Criterion, Throughput};
use tokio::runtime::Runtime;

/// Pushes per batch: under the bot's push queue (1,024 by default), so
/// that a batch never overflows it while dispatch catches up.
const BATCH: usize = 1000;

/// The channels of the bot of `bot_in_10000_channels` (the most a session
/// keeps), the bench's listed last.
const MANY_CHANNELS: usize = 10_000;

/// The bench, with its group named `group` (one per global allocator).
pub(crate) fn bench_isolated(c: &mut Criterion, group: &str) {
    let group_name = group;
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut service = FakeService::start(0);
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
        let raw = RawReceiver::login(&service.url, &throwaway_public_key()).await;
        (raw, service.next_session().await)
    });
    let mut opener_login = |reader| {
        rt.block_on(async {
            let key = service.key.expose_bytes();
            let opener = RawOpener::login(&service.url, &throwaway_public_key(), key, reader).await;
            (opener, service.next_session().await)
        })
    };
    let (opener, opener_session) = opener_login(Reader::Serde);
    let (fast, fast_session) = opener_login(Reader::OnePass);
    // A service of its own, whose ready lists the other channels.
    let mut crowded = FakeService::start(MANY_CHANNELS - 1);
    let crowded_batch = crowded.batch(BATCH, Mix::Alternating);
    let (many, many_session) = rt.block_on(async {
        let bot = TickBot::login(&crowded.url).await;
        (bot, crowded.next_session().await)
    });
    assert_eq!(many.client.channels().len(), MANY_CHANNELS);
    // The bots above resolve their metric handles at their login and at
    // their command's first invocation, in one batch each, before any
    // recorder is installed: no-ops for the whole bench. Then the bot of
    // the `_recorded` runs logs in under the process's recorder.
    rt.block_on(async {
        for (bot, session, batch) in [
            (&bot, &bot_session, &batch),
            (&many, &many_session, &crowded_batch),
        ] {
            let start = bot.handled.get();
            session.replay(batch).await;
            bot.wait_batch(start, shapes[0]).await;
        }
    });
    let exposition = install_recorder();
    let (recorded, recorded_session) = rt.block_on(async {
        let bot = TickBot::login(&service.url).await;
        (bot, service.next_session().await)
    });
    eprintln!(
        "{group}: batches of {} pushes of {} bytes ({} invocations)",
        shapes[0].len,
        batch.frame_bytes(),
        shapes[0].invocations
    );

    // Borrowed by every batch's future.
    let (bot, raw, opener, many, recorded) = (&bot, &raw, &opener, &many, &recorded);
    let (bot_session, raw_session, opener_session) = (&bot_session, &raw_session, &opener_session);
    let (fast, fast_session) = (&fast, &fast_session);
    let recorded_session = &recorded_session;
    let (many_session, crowded_batch) = (&many_session, &crowded_batch);
    let (batch, invocations) = (&batch, &invocations);
    let mut group = c.benchmark_group(group);
    group.throughput(Throughput::Elements(BATCH as u64));
    group.sample_size(20);
    let runs = [
        ("bot", bot, bot_session, batch, shapes[0]),
        // The same bot under the process's metrics recorder (issue 34).
        ("bot_recorded", recorded, recorded_session, batch, shapes[0]),
        (
            "bot_invocations_only",
            bot,
            bot_session,
            invocations,
            shapes[1],
        ),
        (
            "bot_invocations_only_recorded",
            recorded,
            recorded_session,
            invocations,
            shapes[1],
        ),
        // As information: an invocation looks its channel up among the
        // bot's (its server for the context, docs/benchmarks.md stage 9).
        (
            "bot_in_10000_channels",
            many,
            many_session,
            crowded_batch,
            shapes[0],
        ),
    ];
    for (name, bot, session, batch, shape) in runs {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                time_batches(&rt, iters, &bot.handled, |start| async move {
                    session.replay(batch).await;
                    bot.wait_batch(start, shape).await;
                })
            })
        });
    }
    group.bench_function("baseline_raw_receiver", |b| {
        b.iter_custom(|iters| {
            time_batches(&rt, iters, &raw.frames, |start| async move {
                raw_session.replay(batch).await;
                raw.wait_batch(start, shapes[0]).await;
            })
        })
    });
    // The floor: the same frames read, parsed and opened with the bot's
    // crates and none of its code (`RawOpener`).
    group.bench_function("baseline_raw_open", |b| {
        b.iter_custom(|iters| {
            time_batches(&rt, iters, &opener.frames, |start| async move {
                opener_session.replay(batch).await;
                opener.wait_batch(start, shapes[0]).await;
            })
        })
    });
    // As information: the floor with the bot's one-pass reading.
    group.bench_function("baseline_fast_open", |b| {
        b.iter_custom(|iters| {
            time_batches(&rt, iters, &fast.frames, |start| async move {
                fast_session.replay(batch).await;
                fast.wait_batch(start, shapes[0]).await;
            })
        })
    });
    group.finish();
    let pair = [(bot, bot_session), (recorded, recorded_session)];
    recorder_pairs(&rt, group_name, "half-/tick", pair, batch, shapes[0]);
    recorder_pairs(&rt, group_name, "/tick-only", pair, invocations, shapes[1]);
    bot.assert_nothing_dropped();
    many.assert_nothing_dropped();
    recorded.assert_nothing_dropped();
    opener.assert_every_push_opened();
    fast.assert_every_push_opened();
    assert_only_recorded_counted(&rt, &exposition, recorded);
}

/// Batches replayed in turn to the bot without a recorder and to the one
/// under it, each timed: what the recorder costs, robust to a load that
/// drifts during the run (criterion measures one after the other). Prints
/// the median of each and their ratio; 10 pairs when not benchmarking.
fn recorder_pairs(
    rt: &Runtime,
    group: &str,
    mix: &str,
    bots: [(&TickBot, &crate::fake_service::Session); 2],
    batch: &std::sync::Arc<crate::fake_service::Batch>,
    shape: crate::fake_service::Shape,
) {
    let pairs = if std::env::args().any(|a| a == "--bench") {
        400
    } else {
        10
    };
    let mut times = [Vec::with_capacity(pairs), Vec::with_capacity(pairs)];
    rt.block_on(async {
        for _ in 0..pairs {
            for ((bot, session), times) in bots.iter().zip(&mut times) {
                let start = bot.handled.get();
                let clock = Instant::now();
                session.replay(batch).await;
                bot.wait_batch(start, shape).await;
                times.push(clock.elapsed());
            }
        }
    });
    let [bare, recorded] = times.map(|mut t| {
        t.sort();
        t[t.len() / 2]
    });
    let ratio = recorded.as_secs_f64() / bare.as_secs_f64();
    eprintln!(
        "{group}: {pairs} interleaved pairs of {mix} batches: no recorder {bare:?}, \
         recorder {recorded:?}, median ratio {ratio:.3}"
    );
}

/// The process's Prometheus recorder, as dicebot installs it (buckets for
/// every `…_seconds` histogram), with its upkeep on a thread of its own.
fn install_recorder() -> PrometheusHandle {
    let buckets = [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 10.0, 300.0,
    ];
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &buckets)
        .and_then(PrometheusBuilder::install_recorder)
        .expect("the bench installs the only recorder");
    let upkeep = handle.clone();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_secs(5));
        upkeep.run_upkeep();
    });
    handle
}

/// Panics unless the recorder counted exactly the recorded bot's
/// invocations: the others kept their no-op handles, and the figures of
/// `bot` are those of a bot without a recorder.
fn assert_only_recorded_counted(rt: &Runtime, exposition: &PrometheusHandle, recorded: &TickBot) {
    let series = "botlane_invocations_total{command=\"tick\",lane=\"text\",outcome=\"ok\"} ";
    let counted = || {
        exposition
            .render()
            .lines()
            .find_map(|l| l.strip_prefix(series)?.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // Counted as each invocation's future ends, just after its handler.
    rt.block_on(async {
        let deadline = Instant::now() + Duration::from_secs(10);
        while counted() != recorded.handled.get() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    assert_eq!(counted(), recorded.handled.get(), "{}", exposition.render());
}

/// The time of `iters` batches, each run by `batch` from the count
/// `progress` had when it started (it replays the batch and waits until the
/// receiver is through it).
fn time_batches<F, R>(rt: &Runtime, iters: u64, progress: &Progress, batch: F) -> Duration
where
    F: Fn(u64) -> R,
    R: Future<Output = ()>,
{
    rt.block_on(async {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            let start = progress.get();
            let clock = Instant::now();
            batch(start).await;
            total += clock.elapsed();
        }
        total
    })
}

/// A fresh identity's public key, for a raw client's login (the raw
/// clients never unwrap the channel key sent to it).
fn throwaway_public_key() -> String {
    IdentityKeyPair::generate()
        .expect("a random source")
        .public_key()
        .to_base64()
}
