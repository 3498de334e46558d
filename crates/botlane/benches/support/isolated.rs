//! The body of the isolated dispatch benches (`dispatch_isolated` with the
//! system allocator, `dispatch_isolated_mimalloc` with mimalloc as the
//! global allocator): see `dispatch_isolated.rs`.

use std::future::Future;
use std::time::{Duration, Instant};

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use std::sync::Arc;

use crate::bench_table::{load, measuring, Table, WEBSOCKET};
use crate::fake_service::{Batch, FakeService, Mix, Session, Shape};
use crate::progress::Progress;
use crate::raw_opener::{RawOpener, Reader};
use crate::receivers::{RawReceiver, TickBot, BATCH_LIMIT};
use botlane::crypto::IdentityKeyPair;
use criterion::{Criterion, Throughput};
use tokio::runtime::Runtime;

/// Pushes per batch: under the bot's push queue (1,024 by default), so
/// that a batch never overflows it while dispatch catches up.
const BATCH: usize = 1000;

/// The channels of the bot of `bot_in_10000_channels` (the most a session
/// keeps), the bench's listed last.
const MANY_CHANNELS: usize = 10_000;

/// The bench, with its group named `group` (one per global allocator);
/// `judged`: its rounds are judged against issue 32's goals (those of the
/// system allocator; mimalloc's are information).
pub(crate) fn bench_isolated(c: &mut Criterion, group: &str, judged: bool) {
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
    let (lean, lean_session) = opener_login(Reader::Lean);
    let (kept, kept_session) = opener_login(Reader::Kept);
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
    let (lean, lean_session) = (&lean, &lean_session);
    let (kept, kept_session) = (&kept, &kept_session);
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
    goal_rounds(
        &rt,
        group_name,
        judged,
        [
            Turn::frames(&raw.frames, raw_session, batch, shapes[0]),
            Turn::frames(&opener.frames, opener_session, batch, shapes[0]),
            Turn::frames(&fast.frames, fast_session, batch, shapes[0]),
            Turn::bot(bot, bot_session, batch, shapes[0]),
            Turn::bot(many, many_session, crowded_batch, shapes[0]),
            Turn::frames(&lean.frames, lean_session, batch, shapes[0]),
            Turn::frames(&kept.frames, kept_session, batch, shapes[0]),
        ],
    );
    for (mix, batch, shape) in [
        ("half-/tick", batch, shapes[0]),
        ("/tick-only", invocations, shapes[1]),
    ] {
        recorder_pairs(
            &rt,
            group_name,
            judged,
            mix,
            [
                Turn::bot(bot, bot_session, batch, shape),
                Turn::bot(recorded, recorded_session, batch, shape),
            ],
        );
    }
    bot.assert_nothing_dropped();
    many.assert_nothing_dropped();
    recorded.assert_nothing_dropped();
    opener.assert_every_push_opened();
    fast.assert_every_push_opened();
    lean.assert_every_push_opened();
    kept.assert_every_push_opened();
    assert_only_recorded_counted(&rt, &exposition, recorded);
}

/// One receiver as the interleaved measures time it: a batch replayed
/// through `session` is through when `progress` has counted `per_batch`
/// more (frames read, or invocations handled).
struct Turn<'a> {
    session: &'a Session,
    batch: &'a Arc<Batch>,
    progress: &'a Progress,
    per_batch: u64,
}

impl<'a> Turn<'a> {
    fn bot(bot: &'a TickBot, session: &'a Session, batch: &'a Arc<Batch>, shape: Shape) -> Self {
        let (progress, per_batch) = (&*bot.handled, shape.invocations);
        Self {
            session,
            batch,
            progress,
            per_batch,
        }
    }

    fn frames(
        progress: &'a Progress,
        session: &'a Session,
        batch: &'a Arc<Batch>,
        shape: Shape,
    ) -> Self {
        let per_batch = shape.len as u64;
        Self {
            session,
            batch,
            progress,
            per_batch,
        }
    }
}

/// `cycles` times, one batch to each of `turns` in turn, each timed: the
/// median batch of each. In turn rather than one after the other (as
/// criterion measures), so that a load that drifts during the run weighs
/// on every receiver alike.
fn interleaved(rt: &Runtime, cycles: usize, turns: &[Turn<'_>]) -> Vec<Duration> {
    let mut times = vec![Vec::with_capacity(cycles); turns.len()];
    rt.block_on(async {
        for _ in 0..cycles {
            for (turn, times) in turns.iter().zip(&mut times) {
                let start = turn.progress.get();
                let clock = Instant::now();
                turn.session.replay(turn.batch).await;
                turn.progress
                    .wait_for(start + turn.per_batch, BATCH_LIMIT)
                    .await;
                times.push(clock.elapsed());
            }
        }
    });
    times
        .into_iter()
        .map(|mut t| {
            t.sort();
            t[t.len() / 2]
        })
        .collect()
}

/// Issue 32's goals, judged as it asks: five rounds, each of batches to
/// the raw receiver, the floor, the fast floor, the bot and (as
/// information) the bot in 10,000 channels, the lean bot and the kept
/// bot, in turn; per round the ratios of their throughputs. Rows for
/// `scripts/bench`: the median round and every round.
fn goal_rounds(rt: &Runtime, group: &str, judged: bool, turns: [Turn<'_>; 7]) {
    let (rounds, cycles) = if measuring() { (5, 100) } else { (1, 2) };
    let (raw, floor, fast, bot, many, lean, kept) = (0, 1, 2, 3, 4, 5, 6);
    // What each row compares: its figure's turn, its baseline's, the goal.
    let rows = [
        (
            bot,
            floor,
            "the bot, half /tick",
            "the floor (serde_json, base64, aes-gcm)",
            "≥ 0.8×",
        ),
        (
            bot,
            raw,
            "the bot, half /tick",
            "the raw receiver",
            "≥ 0.45×",
        ),
        (
            floor,
            raw,
            "the floor",
            "the raw receiver",
            "— (information: the ceiling)",
        ),
        (
            fast,
            raw,
            "the fast floor (read_message_push)",
            "the raw receiver",
            "— (information)",
        ),
        (
            many,
            bot,
            "a bot in 10,000 channels",
            "the bot in one",
            "— (information)",
        ),
        (
            lean,
            raw,
            "the lean bot (issue 32's prototype: the fast floor, parse_from_text, a handler)",
            "the raw receiver",
            "— (information: the leanest bot)",
        ),
        (
            bot,
            lean,
            "the bot, half /tick",
            "the lean bot",
            "— (information)",
        ),
        (
            kept,
            raw,
            "the kept bot (the lean bot with what issue 32 keeps: a permit, the clock, a shared context, an event, a span, catch_unwind, metrics)",
            "the raw receiver",
            "— (information: the leanest bot with what the issue keeps)",
        ),
        (
            bot,
            kept,
            "the bot, half /tick",
            "the kept bot",
            "— (information)",
        ),
    ];
    let mut ratios = vec![Vec::with_capacity(rounds); rows.len()];
    for round in 1..=rounds {
        let times = interleaved(rt, cycles, &turns);
        let line = rows
            .iter()
            .zip(&mut ratios)
            .map(|((figure, baseline, ..), all)| {
                // A throughput ratio: the baseline's time over the figure's.
                all.push(times[*baseline].as_secs_f64() / times[*figure].as_secs_f64());
                format!("{:.2}", all[all.len() - 1])
            })
            .collect::<Vec<_>>()
            .join(", ");
        let batches = times
            .iter()
            .map(|t| format!("{}", t.as_micros()))
            .collect::<Vec<_>>()
            .join(", ");
        eprintln!(
            "{group}: round {round} of {cycles} batches each, load {}: bot/floor, bot/raw, \
             floor/raw, fast floor/raw, crowded/bot, lean/raw, bot/lean, kept/raw, bot/kept {line}; \
             median batch in µs: raw, floor, fast floor, bot, crowded, lean, kept {batches}",
            load()
        );
    }
    if !measuring() {
        return;
    }
    let command = format!("cargo bench -p botlane --bench {group}");
    let table = Table::new(&command, WEBSOCKET);
    // Under another allocator (judged: false) only the bot's two ratios,
    // as information.
    let kept = if judged { rows.len() } else { 2 };
    for ((.., figure, baseline, goal), all) in rows.into_iter().zip(ratios).take(kept) {
        table.rounds_row(
            &format!("isolated, interleaved: {figure}, 1,000 pushes of 258 B"),
            &format!("{rounds} rounds of {cycles} batches each"),
            &all,
            &format!("{baseline}, same rounds"),
            "× its throughput",
            if judged { goal } else { "— (information)" },
        );
    }
}

/// Batches replayed in turn to the bot without a recorder and to the one
/// under it: what the recorder costs, as the ratio of their median batches
/// (a row for `scripts/bench`, under the system allocator); 10 pairs when
/// not measuring.
fn recorder_pairs(rt: &Runtime, group: &str, judged: bool, mix: &str, turns: [Turn<'_>; 2]) {
    let pairs = if measuring() { 400 } else { 10 };
    let [bare, recorded] = interleaved(rt, pairs, &turns)[..] else {
        unreachable!("two turns give two medians")
    };
    let ratio = recorded.as_secs_f64() / bare.as_secs_f64();
    eprintln!(
        "{group}: {pairs} interleaved pairs of {mix} batches: no recorder {bare:?}, \
         recorder {recorded:?}, median ratio {ratio:.3}"
    );
    if measuring() && judged {
        let command = format!("cargo bench -p botlane --bench {group}");
        Table::new(&command, WEBSOCKET).row(
            &format!("isolated: the bot under a metrics recorder (Prometheus), {mix} batches"),
            &format!("{recorded:?} per batch, the median of {pairs} interleaved pairs"),
            &format!("the bot without one: {bare:?}"),
            &format!("{ratio:.2}× its time"),
            "— (information: what the metrics cost)",
        );
    }
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
