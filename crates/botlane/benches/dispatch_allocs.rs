//! Allocations per dispatched message, counted by a global allocator
//! wrapper (`stats_alloc`) in a process that holds nothing but the client
//! under test: the bare service of `support/fake_service.rs` runs in a
//! child process (this binary again, with `BOTLANE_FAKE_SERVICE` set),
//! told over its stdin when to replay a batch.
//!
//! After two warm-up batches it counts, for the bot, batches of 1,000
//! pushes of two mixes (half plain, half `/tick`; only `/tick`), and the
//! same for a raw tokio-websockets client that only reads the frames
//! (the floor: what reading a frame allocates). A plain message's cost is
//! derived: 2 × mixed − invocation. Then the devserver's relay path, in
//! this process with its clients in a child (`support/relay.rs`):
//! allocations per relayed message.
//!
//! `cargo bench -p botlane --bench dispatch_allocs` measures 10 batches of
//! each; without `--bench` (as `cargo test --all-targets` runs it) one.
//! `--profile N` runs only N mixed batches through the bot, and
//! `--profile-raw N` only N through the raw receiver, for
//! `valgrind --tool=callgrind` (`scripts/bench --profile`). `--idle N`
//! only logs N clients in and leaves them idle for a moment before it
//! ends, for `valgrind --tool=massif`: where an idle session's bytes are.
//! With `BOTLANE_BENCH_TABLE` set, the figures are appended there as rows of
//! the `scripts/bench` table.

#![allow(missing_docs, clippy::unwrap_used)]
// The figures on stdout are this bench's output.
#![allow(clippy::print_stdout)]

#[path = "support/bench_table.rs"]
mod bench_table;
#[path = "support/fake_service.rs"]
mod fake_service;
#[path = "support/progress.rs"]
mod progress;
#[path = "support/raw_client.rs"]
mod raw_client;
#[path = "support/receivers.rs"]
mod receivers;
#[path = "support/relay.rs"]
mod relay;
#[path = "support/role_child.rs"]
mod role_child;

use std::alloc::System;
use std::io::{BufRead, Write};

use botlane::crypto::IdentityKeyPair;
use fake_service::{FakeService, Mix, Session, Shape};
use receivers::{RawReceiver, TickBot};
use role_child::RoleChild;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Set in the child: serve instead of measuring.
const SERVICE_ROLE: &str = "BOTLANE_FAKE_SERVICE";
const BATCH: usize = 1000;
const WARM_UP_BATCHES: usize = 2;

fn main() {
    if std::env::var_os(SERVICE_ROLE).is_some() {
        return serve();
    }
    if let Ok(args) = std::env::var(relay::CLIENTS_ROLE) {
        return relay::clients(&args);
    }
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args
        .iter()
        .position(|a| a == "--profile" || a == "--profile-raw")
    {
        let batches = args
            .get(at + 1)
            .and_then(|n| n.parse().ok())
            .expect("--profile takes a number of batches");
        return profile(batches, args[at] == "--profile-raw");
    }
    if let Some(at) = args.iter().position(|a| a == "--idle") {
        let clients = args
            .get(at + 1)
            .and_then(|n| n.parse().ok())
            .expect("--idle takes a number of clients");
        let mut service = Service::spawn();
        let (built, idle) = runtime().block_on(idle_footprint(&mut service, clients));
        println!(
            "dispatch_allocs: {clients} idle clients, {built:.0} bytes held each built, {idle:.0} logged in"
        );
        return;
    }
    let batches = if bench_table::measuring() { 10 } else { 1 };
    measure(batches);
}

/// The child: the fake service; each stdin line `mixed N` or
/// `invocations N` replays one batch on the N-th session (1-based), waiting
/// for that session first: the receiver's login can return before the
/// service has handed its session over. Ends when stdin closes.
fn serve() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut service = FakeService::start(0);
    let mixed = service.batch(BATCH, Mix::Alternating);
    let invocations = service.batch(BATCH, Mix::Invocations);
    println!("{}\n{}", service.url, mixed.frame_bytes());
    std::io::stdout().flush().unwrap();
    let (lines_tx, mut lines) = tokio::sync::mpsc::channel::<String>(4);
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { return };
            if lines_tx.blocking_send(line).is_err() {
                return;
            }
        }
    });
    rt.block_on(async move {
        // Every session is kept (dropping one ends its connection) and taken
        // as soon as it registers (idle clients must not wait on a full
        // queue); a replay names its session by number and waits for it.
        let mut sessions: Vec<Session> = Vec::new();
        loop {
            tokio::select! {
                biased;
                session = service.next_session() => sessions.push(session),
                line = lines.recv() => {
                    let Some(line) = line else { return };
                    let (mix, number) = line
                        .trim()
                        .split_once(' ')
                        .unwrap_or_else(|| panic!("unknown command {line:?}"));
                    let batch = match mix {
                        "mixed" => &mixed,
                        "invocations" => &invocations,
                        other => panic!("unknown command {other:?}"),
                    };
                    let number: usize = number
                        .parse()
                        .unwrap_or_else(|_| panic!("not a session number: {number:?}"));
                    while sessions.len() < number {
                        sessions.push(service.next_session().await);
                    }
                    sessions[number - 1].replay(batch).await;
                }
            }
        }
    });
}

/// The parent's handle on the child service.
struct Service {
    child: RoleChild,
    url: String,
    frame_bytes: String,
    /// How many receivers have logged in: the newest is the one replayed to.
    logins: usize,
}

impl Service {
    fn spawn() -> Self {
        let mut child = RoleChild::spawn(SERVICE_ROLE, "1");
        let (url, frame_bytes) = (child.line(), child.line());
        Self {
            child,
            url,
            frame_bytes,
            logins: 0,
        }
    }

    /// Records that one more receiver logged in; later batches go to it.
    fn logged_in(&mut self) {
        self.logins += 1;
    }

    /// Has the child replay a batch of `mix` to the newest receiver;
    /// returns its shape.
    fn replay(&mut self, mix: Mix) -> Shape {
        assert!(self.logins > 0, "a receiver logs in before a replay");
        let mix_name = match mix {
            Mix::Alternating => "mixed",
            Mix::Invocations => "invocations",
        };
        writeln!(self.child, "{mix_name} {}", self.logins).unwrap();
        Shape::new(BATCH, mix)
    }
}

/// Allocations and bytes allocated, per message (or per client).
#[derive(Clone, Copy)]
struct Counted {
    allocations: f64,
    bytes: f64,
}

async fn count_bot(service: &mut Service, bot: &TickBot, mix: Mix, batches: usize) -> Counted {
    let region = Region::new(GLOBAL);
    let mut messages = 0;
    for _ in 0..batches {
        let start = bot.handled.get();
        let batch = service.replay(mix);
        bot.wait_batch(start, batch).await;
        messages += batch.len;
    }
    per_message(region, messages)
}

async fn count_raw(service: &mut Service, raw: &RawReceiver, batches: usize) -> Counted {
    let region = Region::new(GLOBAL);
    let mut messages = 0;
    for _ in 0..batches {
        let start = raw.frames.get();
        let batch = service.replay(Mix::Alternating);
        raw.wait_batch(start, batch).await;
        messages += batch.len;
    }
    per_message(region, messages)
}

fn per_message(region: Region<'_, System>, messages: usize) -> Counted {
    let change = region.change();
    Counted {
        allocations: change.allocations as f64 / messages as f64,
        bytes: change.bytes_allocated as f64 / messages as f64,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// What building one client allocates (before login): calls and bytes.
fn client_footprint(rt: &tokio::runtime::Runtime, url: &str) -> Counted {
    let dir = tempfile::tempdir().unwrap();
    let _guard = rt.enter();
    let region = Region::new(GLOBAL);
    let client = botlane::Client::new(botlane::ClientOptions::new(
        "bench-token",
        dir.path().join("keystore"),
        url,
    ))
    .unwrap();
    let built = per_message(region, 1);
    drop(client);
    built
}

/// Heap bytes held (allocated and not yet freed) per client, for
/// `clients` bots with a `/tick` handler each: once built, and once logged
/// in and idle. Every client but the first is counted, so what the first
/// builds once per process (the shared TLS configuration and HTTP client,
/// lazily initialised statics) is left out, as it would be for the
/// thousandth bot of a hosting platform.
async fn idle_footprint(service: &mut Service, clients: usize) -> (f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let build = |i: usize| {
        let options = botlane::ClientOptions::new(
            format!("idle-token-{i}"),
            dir.path().join(format!("bot{i}.keystore")),
            &service.url,
        );
        let client = botlane::Client::new(options).unwrap();
        client
            .commands()
            .register(
                botlane::CommandDeclaration::new(fake_service::COMMAND, "Count"),
                |_ctx: botlane::CommandContext| async { Ok::<(), std::io::Error>(()) },
            )
            .unwrap();
        client
    };
    let first = build(0);
    first.login().await.unwrap();
    tokio::time::sleep(SETTLE).await;
    let region = Region::new(GLOBAL);
    let others: Vec<botlane::Client> = (1..=clients).map(build).collect();
    let built = held(region.change()) / clients as f64;
    for client in &others {
        client.login().await.unwrap();
    }
    tokio::time::sleep(SETTLE).await;
    let idle = held(region.change()) / clients as f64;
    for client in others.iter().chain([&first]) {
        client.close().await.unwrap();
    }
    (built, idle)
}

/// How long idle clients are left before their memory is counted: the
/// login's transient buffers are gone by then.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(500);

/// Bytes allocated and not freed over a region.
fn held(change: stats_alloc::Stats) -> f64 {
    change.bytes_allocated as f64 - change.bytes_deallocated as f64
}

fn measure(batches: usize) {
    let mut service = Service::spawn();
    let rt = runtime();
    let built = client_footprint(&rt, &service.url);
    let idle_clients = if batches > 1 { 50 } else { 2 };
    let (mixed, invocations, raw, (built_held, idle_held)) = rt.block_on(async {
        let bot = TickBot::login(&service.url).await;
        service.logged_in();
        for _ in 0..WARM_UP_BATCHES {
            count_bot(&mut service, &bot, Mix::Alternating, 1).await;
        }
        let mixed = count_bot(&mut service, &bot, Mix::Alternating, batches).await;
        let invocations = count_bot(&mut service, &bot, Mix::Invocations, batches).await;
        bot.assert_nothing_dropped();
        bot.client.close().await.unwrap();
        let key = IdentityKeyPair::generate()
            .unwrap()
            .public_key()
            .to_base64();
        let raw = RawReceiver::login(&service.url, &key).await;
        service.logged_in();
        for _ in 0..WARM_UP_BATCHES {
            count_raw(&mut service, &raw, 1).await;
        }
        let raw_counted = count_raw(&mut service, &raw, batches).await;
        drop(raw);
        let idle = idle_footprint(&mut service, idle_clients).await;
        (mixed, invocations, raw_counted, idle)
    });
    let relayed = relay::count(batches);
    let plain = Counted {
        allocations: 2.0 * mixed.allocations - invocations.allocations,
        bytes: 2.0 * mixed.bytes - invocations.bytes,
    };
    println!(
        "dispatch_allocs: {batches} batches of {BATCH} pushes of {} bytes per figure",
        service.frame_bytes
    );
    let rows = [
        ("bot, half plain half /tick", mixed),
        ("bot, /tick only", invocations),
        ("bot, plain (derived: 2 x mixed - /tick)", plain),
        ("raw tokio-websockets receiver", raw),
    ];
    for (what, figure) in rows {
        println!(
            "  {what:<42} {:>7.1} allocations, {:>8.0} bytes per message",
            figure.allocations, figure.bytes
        );
    }
    println!(
        "  devserver, per relayed message (one send, its reply, two pushes) {:>7.1} allocations, {:>8.0} bytes",
        relayed.0, relayed.1
    );
    println!(
        "  Client::new (before login): {:.0} allocations, {:.0} bytes",
        built.allocations, built.bytes,
    );
    println!(
        "  heap held per client ({idle_clients} clients after a first one): {:.0} bytes built, \
         {:.0} bytes logged in and idle",
        built_held, idle_held
    );
    let table = bench_table::Table::new(
        "cargo bench -p botlane --bench dispatch_allocs",
        bench_table::WEBSOCKET,
    );
    table.row(
        "allocations per dispatched message (half plain, half /tick)",
        &format!("{:.1}", mixed.allocations),
        &format!("raw receiver {:.1} per frame", raw.allocations),
        "—",
        "halve the before figure",
    );
    table.row(
        "bytes allocated per dispatched message (half plain, half /tick)",
        &format!("{:.0}", mixed.bytes),
        &format!("raw receiver {:.0} per frame", raw.bytes),
        "—",
        "— (information)",
    );
    bench_table::Table::new(
        "cargo bench -p botlane --bench dispatch_allocs",
        "tokio-websockets (devserver and clients)",
    )
    .row(
        "devserver: allocations per relayed message (a send, its reply, a push to each of 2 members)",
        &format!("{:.1} ({:.0} bytes)", relayed.0, relayed.1),
        "—",
        "—",
        "halve the before figure",
    );
    table.row(
        "bytes allocated by Client::new (before login)",
        &format!(
            "{:.0} KiB in {:.0} allocations",
            built.bytes / 1024.0,
            built.allocations
        ),
        "—",
        "—",
        "— (information)",
    );
    table.row(
        &format!("heap held per idle session ({idle_clients} bots after a first one)"),
        &format!(
            "{:.1} KiB ({:.1} KiB before login)",
            idle_held / 1024.0,
            built_held / 1024.0
        ),
        "—",
        "—",
        "≤ 64 KiB (resident, measured by the scale bench)",
    );
}

fn profile(batches: usize, raw: bool) {
    let mut service = Service::spawn();
    let rt = runtime();
    rt.block_on(async {
        let figure = if raw {
            let key = IdentityKeyPair::generate().unwrap().public_key().to_base64();
            let raw = RawReceiver::login(&service.url, &key).await;
            service.logged_in();
            count_raw(&mut service, &raw, batches).await
        } else {
            let bot = TickBot::login(&service.url).await;
            service.logged_in();
            let figure = count_bot(&mut service, &bot, Mix::Alternating, batches).await;
            bot.assert_nothing_dropped();
            figure
        };
        let who = if raw { "raw receiver" } else { "bot" };
        println!(
            "dispatch_allocs: profiled {batches} mixed batches of {BATCH} through the {who}, {:.1} allocations per message",
            figure.allocations
        );
    });
}
