//! The REST lane against the devserver on loopback, each beside a baseline
//! in the same run. Results and ratios: `docs/benchmarks.md`.
//!
//! * `rest_json/lane_cached`: `rest.json` of `GET /api/files/list` with the
//!   credential cached, beside `rest_json/raw_reqwest`: the same request
//!   with the same header through a bare reqwest client built the same way
//!   (rustls, no redirects), parsed into the same type.
//! * `rest_first_calls/lane_1000`: 1,000 concurrent first calls of a freshly
//!   logged-in client (one mint, then 1,000 requests), beside
//!   `rest_first_calls/raw_1000`: 1,000 concurrent raw requests on a fresh
//!   reqwest client (the requests alone, no mint).
//!
//! The machine may be shared and busy, which moves the two criterion
//! medians of `rest_json` apart by more than the lane costs; so the bench
//! also prints the median ratio of 2,000 interleaved pairs (lane call, raw
//! call), which such drift cannot skew.
//!
//! Run with `cargo bench -p botlane --bench rest`.

#![allow(missing_docs, clippy::unwrap_used, clippy::print_stdout)]

// `WEBSOCKET` is not used here: the REST lane's row names no WebSocket crate.
#[allow(dead_code)]
#[path = "support/bench_table.rs"]
mod bench_table;

use std::time::{Duration, Instant};

use botlane::rest::Method;
use botlane::{Client, ClientOptions};
use botlane_devserver::{BotAccount, DevServer, DevServerConfig, Limits};
use criterion::{criterion_group, criterion_main, Criterion};
use serde::Deserialize;

const LIST: &str = "/api/files/list";

#[derive(Deserialize)]
#[allow(dead_code)]
struct Files {
    files: Vec<serde_json::Value>,
}

fn raw_client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Waits (untimed) until the sockets of the previous iteration are closed,
/// so that 1,000-connection iterations do not pile up open files.
async fn settle_sockets() {
    let open = || std::fs::read_dir("/proc/self/fd").map(Iterator::count);
    for _ in 0..100 {
        match open() {
            Ok(n) if n > 200 => tokio::time::sleep(Duration::from_millis(20)).await,
            _ => return,
        }
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

async fn logged_in(server: &DevServer, bot: &BotAccount, dir: &tempfile::TempDir) -> Client {
    let options = ClientOptions::new(bot.token.clone(), dir.path().join("k"), server.ws_url())
        .rest_url(server.rest_url());
    let client = Client::new(options).unwrap();
    client.login().await.unwrap();
    client
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (server, bot, client) = rt.block_on(async {
        // 1,000 calls open 1,000 connections at once: above the service's
        // default of 256 served at a time.
        let config = DevServerConfig::default()
            .bot_rest_credentials(true)
            .limits(Limits::default().http_connections(4096));
        let server = DevServer::start(config).await.unwrap();
        server.set_mint_rate_limit(u32::MAX, Duration::from_secs(1));
        let room = server.create_server("lobby");
        for i in 0..3 {
            server
                .add_file(&room, &format!("file-{i}.txt"), vec![b'x'; 64])
                .unwrap();
        }
        let bot = server.add_bot("benchbot");
        let client = logged_in(&server, &bot, &dir).await;
        let _: Files = client.rest().json(Method::GET, LIST, None).await.unwrap();
        (server, bot, client)
    });
    let verification = server
        .http_requests()
        .iter()
        .rev()
        .find_map(|r| r.header("verification").map(str::to_owned))
        .unwrap();
    let url = format!("{}{LIST}", server.rest_url());
    let raw = raw_client();

    let mut group = c.benchmark_group("rest_json");
    let rest = client.rest();
    group.bench_function("lane_cached", |b| {
        b.iter(|| {
            rt.block_on(rest.json::<Files>(Method::GET, LIST, None))
                .unwrap()
        });
    });
    group.bench_function("raw_reqwest", |b| {
        b.iter(|| {
            rt.block_on(async {
                raw.get(&url)
                    .header("verification", &verification)
                    .send()
                    .await
                    .unwrap()
                    .error_for_status()
                    .unwrap()
                    .json::<Files>()
                    .await
                    .unwrap()
            })
        });
    });
    group.finish();

    let (mut lane, mut bare) = (Vec::new(), Vec::new());
    for _ in 0..2000 {
        let start = Instant::now();
        rt.block_on(rest.json::<Files>(Method::GET, LIST, None))
            .unwrap();
        lane.push(start.elapsed());
        let start = Instant::now();
        rt.block_on(async {
            raw.get(&url)
                .header("verification", &verification)
                .send()
                .await
                .unwrap()
                .json::<Files>()
                .await
                .unwrap()
        });
        bare.push(start.elapsed());
    }
    let (lane, bare) = (median(lane), median(bare));
    let ratio = lane.as_secs_f64() / bare.as_secs_f64();
    println!("rest_json interleaved pairs: lane {lane:?}, raw {bare:?}, median ratio {ratio:.3}");
    bench_table::Table::new("cargo bench -p botlane --bench rest", "— (http)").row(
        "rest.json, credential cached: 2,000 interleaved pairs (lane call, raw call)",
        &format!("{:.2} µs", lane.as_secs_f64() * 1e6),
        &format!(
            "bare reqwest, same route: {:.2} µs",
            bare.as_secs_f64() * 1e6
        ),
        &format!("{ratio:.2}×"),
        "≤ 1.10×",
    );

    let mut group = c.benchmark_group("rest_first_calls");
    group.sample_size(10);
    group.bench_function("lane_1000", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    settle_sockets().await;
                    let fresh = logged_in(&server, &bot, &dir).await;
                    let before = server.mint_count();
                    let start = Instant::now();
                    let calls: Vec<_> = (0..1000)
                        .map(|_| {
                            let rest = fresh.rest();
                            tokio::spawn(async move {
                                rest.json::<Files>(Method::GET, LIST, None).await
                            })
                        })
                        .collect();
                    for call in futures_util::future::join_all(calls).await {
                        call.unwrap().unwrap();
                    }
                    total += start.elapsed();
                    assert_eq!(server.mint_count(), before + 1);
                    fresh.shutdown();
                    drop(fresh);
                }
                total
            })
        });
    });
    group.bench_function("raw_1000", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    settle_sockets().await;
                    let fresh = raw_client();
                    let start = Instant::now();
                    let calls: Vec<_> = (0..1000)
                        .map(|_| {
                            let request =
                                fresh.get(&url).header("verification", &verification).send();
                            tokio::spawn(async move {
                                request.await.unwrap().json::<Files>().await.unwrap()
                            })
                        })
                        .collect();
                    for call in futures_util::future::join_all(calls).await {
                        call.unwrap();
                    }
                    total += start.elapsed();
                    drop(fresh);
                }
                total
            })
        });
    });
    group.finish();

    client.shutdown();
    rt.block_on(server.shutdown());
}

criterion_group!(benches, bench);
criterion_main!(benches);
