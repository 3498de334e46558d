//! Many bots in one process: N bot clients (distinct tokens, one channel
//! each shared with the human `alice`) log in to one devserver that runs
//! in a child process (this binary again, with `BOTLANE_SCALE_DEVSERVER`
//! set), so that the resident memory this process gains is the clients'
//! alone. One runtime (the default multi-thread one) holds every client.
//!
//! In order, in one run:
//! 1. the N keystores are created beforehand (a bot's first run: identity
//!    generated, file written and synced), timed on their own;
//! 2. baseline: N raw tokio-websockets connects, each logging in (op 10)
//!    and reading `ready`, then closing, 32 at a time;
//! 3. the N bots: `Client::new` and register `/tick` for each (VmRSS
//!    gained per bot, from `/proc/self/status`: a client before login),
//!    then `login` (keystore open, connect, login, `ready`, menu publish),
//!    32 at a time; the login time runs from the first `Client::new`;
//! 4. after a settling pause, VmRSS minus VmRSS before step 3, divided by
//!    N: resident memory per idle session;
//! 5. `alice` (a devserver `TestUser`) shares every channel's key, then
//!    sends one `/tick` into each channel, pipelined; the clock stops when
//!    every bot's handler has run: dispatch spread over all N;
//! 6. fan-out: `alice` shares the key of one channel that every bot is in
//!    (`everyone`), then sends K plain messages into it, pipelined; the
//!    clock stops when every bot has seen all K as events. Beside the
//!    deliveries per second, the devserver child's CPU time (utime and
//!    stime from `/proc/<pid>/stat`) over the phase, per push it wrote
//!    (N + 1 members, `alice` included): what a message to a big channel
//!    costs the service;
//! 7. the N bots close; N new clients with in-memory keystores
//!    (`keystore_in_memory`, a first run that touches no file) log in, 32
//!    at a time: the first-run cost without keystore files, beside the
//!    cost of creating the files in step 1;
//! 8. they close; a fleet start: N clients (the keystores of step 1) all
//!    start their login at once against the devserver's default pre-login
//!    pool of 64, so that most are refused with 503 and wait out its
//!    `Retry-After`: every bot logs in, and the time (from the first
//!    `Client::new`) stands beside step 2's raw connects, with the number
//!    of attempts waited out (`Event::LoginFailed`).
//!
//! `cargo bench -p botlane --bench scale` runs N = 1,000 (or
//! `BOTLANE_SCALE_BOTS`); without `--bench` (as `cargo test --all-targets`
//! runs it) N = 4, so CI does not log in a thousand bots.

#![allow(missing_docs, clippy::unwrap_used)]
// The figures on stdout are this bench's output.
#![allow(clippy::print_stdout)]

#[path = "support/bench_table.rs"]
mod bench_table;
#[path = "support/progress.rs"]
mod progress;
#[path = "support/raw_client.rs"]
mod raw_client;
#[path = "support/role_child.rs"]
mod role_child;

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use botlane::keystore::Keystore;
use botlane::{Client, ClientOptions, CommandContext, CommandDeclaration, Event, EventRecvError};
use botlane_devserver::{
    AccountConfig, ChannelConfig, DevServer, DevServerConfig, ServerConfig, TestUser,
};
use futures_util::{SinkExt, StreamExt};
use progress::Progress;
use role_child::RoleChild;

/// Set in the child (to N): serve instead of measuring.
const DEVSERVER_ROLE: &str = "BOTLANE_SCALE_DEVSERVER";
/// Overrides N in bench mode.
const BOTS_ENV: &str = "BOTLANE_SCALE_BOTS";
const BENCH_BOTS: usize = 1000;
const TEST_MODE_BOTS: usize = 4;
/// Logins (raw and bot) in flight at once: under the devserver's pre-login
/// connection pool, so that none is refused for being early.
const CONCURRENCY: usize = 32;
const ALICE_TOKEN: &str = "scale-alice-token";
/// The channel every bot and `alice` are in (step 6).
const EVERYONE: &str = "everyone";
/// Messages sent into it in bench mode.
const FAN_OUT_MESSAGES: usize = 200;
/// Messages sent into it in test mode.
const TEST_MODE_FAN_OUT_MESSAGES: usize = 5;
/// How long any phase may take before the bench gives up.
const PHASE_LIMIT: Duration = Duration::from_secs(600);

fn bot_token(i: usize) -> String {
    format!("scale-bot-token-{i}")
}

fn main() {
    if let Some(bots) = std::env::var_os(DEVSERVER_ROLE) {
        let bots = bots.to_str().and_then(|n| n.parse().ok()).unwrap();
        raise_nofile(bots);
        return devserver(bots);
    }
    let bench = bench_table::measuring();
    let bots = if bench {
        std::env::var(BOTS_ENV)
            .ok()
            .map(|n| n.parse().expect("BOTLANE_SCALE_BOTS is a number"))
            .unwrap_or(BENCH_BOTS)
    } else {
        TEST_MODE_BOTS
    };
    raise_nofile(bots);
    if bench {
        measure(bots, 3, FAN_OUT_MESSAGES);
    } else {
        measure(bots, 1, TEST_MODE_FAN_OUT_MESSAGES);
    }
}

/// Raises the soft open-file limit to what N sockets (and the other side
/// of each, in the devserver) need.
fn raise_nofile(bots: usize) {
    let need = bots as u64 * 3 + 256;
    let got = rlimit::increase_nofile_limit(need).expect("RLIMIT_NOFILE can be read and raised");
    assert!(
        got >= need,
        "{bots} bots need about {need} open files; RLIMIT_NOFILE allows {got}"
    );
}

/// The child: a devserver with N bots, `alice`, and one channel per bot
/// shared with `alice`; prints its url and serves until stdin closes.
fn devserver(bots: usize) {
    let mut space = ServerConfig::new("scale");
    let mut config = DevServerConfig::default().user(AccountConfig::new("alice", ALICE_TOKEN));
    let mut everyone = ChannelConfig::new(EVERYONE).member("alice");
    for i in 0..bots {
        let name = format!("bot{i}");
        config = config.bot(AccountConfig::new(&name, bot_token(i)));
        everyone = everyone.member(&name);
        space = space.channel(
            ChannelConfig::new(format!("c{i}"))
                .member(name)
                .member("alice"),
        );
    }
    let config = config.server(space.channel(everyone));
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let server = DevServer::start(config).await.unwrap();
        println!("{}", server.ws_url());
        std::io::stdout().flush().unwrap();
        tokio::task::spawn_blocking(|| {
            let mut sink = String::new();
            while std::io::stdin().read_line(&mut sink).is_ok_and(|n| n > 0) {}
        })
        .await
        .unwrap();
        server.shutdown().await;
    });
}

/// The CPU time the devserver child has used so far (user and system,
/// all threads), from `/proc/<pid>/stat` in clock ticks of 10 ms (Linux
/// reports these fields in `USER_HZ`, 100 per second).
fn cpu_time(devserver: &RoleChild) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", devserver.id()))
        .expect("the devserver child is running");
    // The fields after the command name, which is in parentheses and
    // may hold spaces: state is field 3, utime 14, stime 15.
    let (_, after_name) = stat.rsplit_once(") ").expect("/proc/<pid>/stat has (comm)");
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| -> u64 {
        fields
            .get(i)
            .and_then(|t| t.parse().ok())
            .expect("/proc/<pid>/stat has utime and stime")
    };
    let ticks = ticks(11) + ticks(12);
    Duration::from_millis(ticks * 10)
}

/// VmRSS in KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("/proc/self/status has VmRSS")
}

/// What one run measured.
struct Figures {
    bots: usize,
    keystores: Duration,
    raw: Duration,
    /// `Client::new` and registering `/tick`, for every bot.
    built: Duration,
    /// From the first `Client::new` until every bot has logged in.
    login: Duration,
    /// VmRSS gained per bot, in KiB: built but not logged in, then idle
    /// after login.
    built_kib: u64,
    idle_kib: u64,
    dispatch: Vec<Duration>,
    fan_out: FanOut,
    /// `Client::new` and `login` of N clients with in-memory keystores.
    in_memory_login: Duration,
    fleet: Fleet,
}

/// Step 8's figures.
struct Fleet {
    /// From the first `Client::new` until every bot has logged in.
    login: Duration,
    /// Attempts refused and waited out, all bots together.
    waited: usize,
}

/// Step 8: N clients built and logging in all at once.
async fn fleet_start(
    url: &str,
    bots: usize,
    keystore: &dyn Fn(usize) -> std::path::PathBuf,
) -> Fleet {
    let clock = Instant::now();
    let mut clients: Vec<(Client, botlane::Events)> = (0..bots)
        .map(|i| {
            let options = ClientOptions::new(bot_token(i), keystore(i), url.to_owned());
            let client = Client::new(options).unwrap();
            let events = client.events();
            (client, events)
        })
        .collect();
    let logins = futures_util::future::join_all(clients.iter().map(|(c, _)| c.login()));
    for login in tokio::time::timeout(PHASE_LIMIT, logins).await.unwrap() {
        login.expect("every bot of the fleet logs in within its login deadline");
    }
    let login = clock.elapsed();
    let mut waited = 0;
    for (_, events) in &mut clients {
        while let Ok(Some(event)) = events.try_recv() {
            waited += usize::from(matches!(event, Event::LoginFailed { .. }));
        }
    }
    let closes = futures_util::stream::iter(&clients).for_each_concurrent(
        CONCURRENCY,
        |(c, _)| async move { c.close().await.unwrap() },
    );
    tokio::time::timeout(PHASE_LIMIT, closes).await.unwrap();
    Fleet { login, waited }
}

/// Step 6's figures.
struct FanOut {
    messages: usize,
    elapsed: Duration,
    /// The devserver child's CPU time over the phase.
    service_cpu: Duration,
}

fn measure(bots: usize, rounds: usize, messages: usize) {
    let mut devserver = RoleChild::spawn(DEVSERVER_ROLE, &bots.to_string());
    let url = devserver.line();
    let dir = tempfile::tempdir().unwrap();
    let keystore = |i: usize| dir.path().join(format!("bot{i}.keystore"));

    let clock = Instant::now();
    let public_keys: Vec<String> = (0..bots)
        .map(|i| {
            Keystore::open_or_create(keystore(i))
                .unwrap()
                .identity()
                .public_key()
                .to_base64()
        })
        .collect();
    let keystores = clock.elapsed();
    // As after a restart, the bots open keystores an earlier run wrote:
    // their directory has not changed for a while, so its listing for
    // stale temporary files is taken once, not once per bot
    // (`keystore/listing.rs` trusts no listing of a directory changed
    // within the last 2 s).
    let settled = tokio::time::Instant::now() + Duration::from_millis(2500);

    let rt = tokio::runtime::Runtime::new().unwrap();
    let figures = rt.block_on(async {
        let clock = Instant::now();
        let raw_logins =
            futures_util::stream::iter(0..bots).for_each_concurrent(CONCURRENCY, |i| {
                let (url, key) = (&url, &public_keys[i]);
                async move {
                    let mut ws = raw_client::connect(url).await;
                    raw_client::login(&mut ws, &bot_token(i), key).await;
                    ws.close().await.unwrap();
                }
            });
        tokio::time::timeout(PHASE_LIMIT, raw_logins).await.unwrap();
        let raw = clock.elapsed();
        // The service frees the raw sessions before the bots take theirs.
        tokio::time::sleep(Duration::from_millis(500)).await;
        tokio::time::sleep_until(settled).await;

        let handled = Arc::new(Progress::default());
        let rss_before = rss_kib();
        let clock = Instant::now();
        let clients: Vec<Client> = (0..bots)
            .map(|i| {
                let options = ClientOptions::new(bot_token(i), keystore(i), url.clone());
                let client = Client::new(options).unwrap();
                let counter = handled.clone();
                client
                    .commands()
                    .register(
                        CommandDeclaration::new("tick", "Count"),
                        move |_ctx: CommandContext| {
                            counter.bump();
                            async { Ok::<(), std::io::Error>(()) }
                        },
                    )
                    .unwrap();
                client
            })
            .collect();
        let built = clock.elapsed();
        let built_kib = rss_kib().saturating_sub(rss_before) / bots as u64;
        let logins = futures_util::stream::iter(&clients)
            .for_each_concurrent(CONCURRENCY, |c| async move { c.login().await.unwrap() });
        tokio::time::timeout(PHASE_LIMIT, logins).await.unwrap();
        let login = clock.elapsed();
        let settle = if bots > TEST_MODE_BOTS { 2000 } else { 200 };
        tokio::time::sleep(Duration::from_millis(settle)).await;
        let idle_kib = rss_kib().saturating_sub(rss_before) / bots as u64;

        let alice = TestUser::connect(&url, ALICE_TOKEN).await.unwrap();
        let (everyone, channels): (Vec<_>, Vec<_>) = alice
            .channels()
            .into_iter()
            .partition(|c| c.name == EVERYONE);
        let everyone = everyone
            .first()
            .expect("alice is in the channel of every bot")
            .id
            .clone();
        let channels: Vec<String> = channels.into_iter().map(|c| c.id).collect();
        assert_eq!(channels.len(), bots, "one channel per bot");
        let shares = futures_util::stream::iter(&channels).for_each_concurrent(CONCURRENCY, |c| {
            let alice = &alice;
            async move {
                alice.open_channel(c).await.unwrap();
            }
        });
        tokio::time::timeout(PHASE_LIMIT, shares).await.unwrap();
        let mut dispatch = Vec::new();
        for _ in 0..rounds {
            let start = handled.get();
            let clock = Instant::now();
            let sends = futures_util::stream::iter(&channels).for_each_concurrent(256, |c| {
                let alice = &alice;
                async move {
                    alice.send_text(c, "/tick").await.unwrap();
                }
            });
            tokio::time::timeout(PHASE_LIMIT, sends).await.unwrap();
            handled.wait_for(start + bots as u64, PHASE_LIMIT).await;
            dispatch.push(clock.elapsed());
        }
        let fan_out = fan_out(&devserver, &alice, &everyone, &clients, messages).await;
        for client in &clients {
            assert_eq!(client.stats().pushes_dropped, 0, "a bot dropped a push");
        }
        let closes = futures_util::stream::iter(&clients)
            .for_each_concurrent(CONCURRENCY, |c| async move { c.close().await.unwrap() });
        tokio::time::timeout(PHASE_LIMIT, closes).await.unwrap();
        drop(clients);
        // The service frees the sessions before the next logins take theirs.
        tokio::time::sleep(Duration::from_millis(500)).await;

        let clock = Instant::now();
        let in_memory = futures_util::stream::iter(0..bots)
            .map(|i| {
                let options = ClientOptions::new(bot_token(i), keystore(i), url.clone())
                    .keystore_in_memory(true);
                async move {
                    let client = Client::new(options).unwrap();
                    client.login().await.unwrap();
                    client
                }
            })
            .buffer_unordered(CONCURRENCY)
            .collect::<Vec<Client>>();
        let in_memory = tokio::time::timeout(PHASE_LIMIT, in_memory).await.unwrap();
        let in_memory_login = clock.elapsed();
        let closes = futures_util::stream::iter(&in_memory)
            .for_each_concurrent(CONCURRENCY, |c| async move { c.close().await.unwrap() });
        tokio::time::timeout(PHASE_LIMIT, closes).await.unwrap();
        drop(in_memory);
        // The service frees the sessions before the fleet takes its own.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let fleet = fleet_start(&url, bots, &keystore).await;
        Figures {
            bots,
            keystores,
            raw,
            built,
            login,
            built_kib,
            idle_kib,
            dispatch,
            fan_out,
            in_memory_login,
            fleet,
        }
    });
    drop(devserver);
    report(figures);
}

/// Step 6: `messages` plain messages into the channel of every bot.
async fn fan_out(
    devserver: &RoleChild,
    alice: &TestUser,
    everyone: &str,
    clients: &[Client],
    messages: usize,
) -> FanOut {
    let seen = Arc::new(Progress::default());
    let watchers: Vec<_> = clients
        .iter()
        .map(|client| {
            let mut events = client.events();
            let (seen, everyone) = (seen.clone(), everyone.to_owned());
            tokio::spawn(async move {
                loop {
                    match events.recv().await {
                        Ok(Event::Message(m)) if m.channel_id == everyone => seen.bump(),
                        Ok(_) => {}
                        // 200 messages never fill a subscriber's 1,024 slots;
                        // a lag would mean events this count cannot tell apart.
                        Err(EventRecvError::Lagged(n)) => panic!("a watcher lagged by {n} events"),
                        Err(_) => return,
                    }
                }
            })
        })
        .collect();
    let shared = alice.open_channel(everyone).await.unwrap();
    assert_eq!(shared, clients.len(), "the key went to every bot");
    let cpu = cpu_time(devserver);
    let clock = Instant::now();
    let sends = futures_util::stream::iter(0..messages).for_each_concurrent(16, |i| async move {
        alice
            .send_text(everyone, &format!("hello {i}"))
            .await
            .unwrap();
    });
    tokio::time::timeout(PHASE_LIMIT, sends).await.unwrap();
    seen.wait_for((clients.len() * messages) as u64, PHASE_LIMIT)
        .await;
    let elapsed = clock.elapsed();
    let service_cpu = cpu_time(devserver).saturating_sub(cpu);
    for watcher in watchers {
        watcher.abort();
    }
    FanOut {
        messages,
        elapsed,
        service_cpu,
    }
}

fn report(mut figures: Figures) {
    let Figures {
        bots,
        keystores,
        raw,
        built,
        login,
        built_kib,
        idle_kib,
        in_memory_login,
        ref fan_out,
        ref fleet,
        ..
    } = figures;
    let pushes = (bots + 1) * fan_out.messages;
    let deliveries = (bots * fan_out.messages) as f64 / fan_out.elapsed.as_secs_f64();
    let cpu_per_push = fan_out.service_cpu.as_secs_f64() * 1e6 / pushes as f64;
    figures.dispatch.sort();
    let rounds = figures.dispatch.len();
    let median = figures.dispatch[rounds / 2];
    let throughput = bots as f64 / median.as_secs_f64();
    let ratio = login.as_secs_f64() / raw.as_secs_f64();
    let ms_each = |d: Duration| d.as_secs_f64() * 1000.0 / bots as f64;
    println!("scale: {bots} bots, devserver in a child process, one runtime");
    println!(
        "  keystores created beforehand: {:.2} s ({:.2} ms each)",
        keystores.as_secs_f64(),
        ms_each(keystores)
    );
    println!(
        "  login of all bots: {:.2} s (of which Client::new {:.2} s); {bots} raw connects + login: {:.2} s; ratio {ratio:.2}",
        login.as_secs_f64(),
        built.as_secs_f64(),
        raw.as_secs_f64()
    );
    println!(
        "  resident memory per bot: {built_kib} KiB built, {idle_kib} KiB idle after login (an Event is {} bytes)",
        std::mem::size_of::<botlane::Event>()
    );
    println!(
        "  first run with in-memory keystores (no file): login of all bots {:.2} s",
        in_memory_login.as_secs_f64()
    );
    println!(
        "  fleet start, all {bots} logins at once against a pre-login pool of 64: {:.2} s, {} attempts refused and waited out",
        fleet.login.as_secs_f64(),
        fleet.waited
    );
    println!(
        "  dispatch, one /tick to each bot: median {:.1} ms of {rounds} rounds, {throughput:.0} messages/s",
        median.as_secs_f64() * 1000.0
    );

    println!(
        "  fan-out, {} messages to a channel of all {bots} bots: {deliveries:.0} deliveries/s; devserver CPU {:.2} s, {cpu_per_push:.2} µs per push written",
        fan_out.messages,
        fan_out.service_cpu.as_secs_f64()
    );

    let table = bench_table::Table::new(
        "cargo bench -p botlane --bench scale",
        bench_table::WEBSOCKET,
    );
    table.row(
        &format!("create {bots} keystores beforehand (first run)"),
        &format!(
            "{:.2} ms each ({:.1} s)",
            ms_each(keystores),
            keystores.as_secs_f64()
        ),
        "—",
        "—",
        "— (information)",
    );
    table.row(
        &format!("log in {bots} bots, {CONCURRENCY} at a time (keystores existing)"),
        &format!(
            "{:.2} s (Client::new {:.2} ms each)",
            login.as_secs_f64(),
            ms_each(built)
        ),
        &format!("{bots} raw connects + login: {:.2} s", raw.as_secs_f64()),
        &format!("{ratio:.2}×"),
        "≤ 2×",
    );
    table.row(
        &format!("fleet start: {bots} bots log in all at once (pre-login pool of 64, the default)"),
        &format!(
            "{:.2} s ({} attempts waited out)",
            fleet.login.as_secs_f64(),
            fleet.waited
        ),
        &format!("{bots} raw connects + login: {:.2} s", raw.as_secs_f64()),
        &format!("{:.2}×", fleet.login.as_secs_f64() / raw.as_secs_f64()),
        "— (information)",
    );
    table.row(
        &format!("resident memory per idle session ({bots} bots)"),
        &format!("{idle_kib} KiB ({built_kib} KiB before login)"),
        "—",
        "—",
        "≤ 64 KiB",
    );
    table.row(
        &format!("dispatch: one /tick to each of {bots} bots, pipelined"),
        &format!("{throughput:.0} messages/s"),
        "—",
        "—",
        "— (information)",
    );
    table.row(
        &format!(
            "fan-out: {} messages to a channel of all {bots} bots (and alice)",
            fan_out.messages
        ),
        &format!(
            "devserver CPU {cpu_per_push:.2} µs per push written ({deliveries:.0} deliveries/s)"
        ),
        "—",
        "—",
        "— (information)",
    );
    table.row(
        &format!("first run of {bots} bots with in-memory keystores (keystore_in_memory): login"),
        &format!("{:.2} s", in_memory_login.as_secs_f64()),
        &format!(
            "with keystore files: creating them {:.1} s, then login {:.2} s",
            keystores.as_secs_f64(),
            login.as_secs_f64()
        ),
        &format!(
            "{:.2}×",
            in_memory_login.as_secs_f64() / (keystores + login).as_secs_f64()
        ),
        "— (information)",
    );
}
