//! `dispatch_isolated` (see there) in a binary whose global allocator is
//! mimalloc, as information for applications that choose their allocator:
//! with glibc's, memory allocated on one worker and freed on the other
//! takes that arena's lock. botlane itself sets no global allocator.
//! Figures: `docs/benchmarks.md`, stage 4.
//!
//! Run with `cargo bench -p botlane --bench dispatch_isolated_mimalloc`.

#![allow(missing_docs, clippy::unwrap_used)]

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    isolated::bench_isolated(c, "dispatch_isolated_mimalloc", false);
}

criterion_group!(benches, bench);
criterion_main!(benches);
