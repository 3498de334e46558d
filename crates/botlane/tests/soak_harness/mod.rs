//! The soak tests' harness, shared by `botlane`'s and `botlane-devserver`'s
//! `tests/soak.rs` (the latter includes this file by path): a counting
//! global allocator (`stats_alloc`: allocated minus freed, no `unsafe`),
//! one test at a time on a runtime of its own, and a [`Series`] of what
//! the process holds after each cycle, checked flat between an early cycle
//! and the last.

#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::alloc::System;
use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The allocator counts every thread: one test at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// How long the figures may take to come back down after the last cycle:
/// the last cycle's tasks ending on a loaded machine.
pub const SETTLE: Duration = Duration::from_secs(5);

/// Runs `test` alone, on a runtime of its own (so the task count is its own).
pub fn soak<F: Future<Output = ()>>(test: impl FnOnce() -> F) {
    soak_on(tokio::runtime::Builder::new_current_thread(), test);
}

/// [`soak`] on `runtime`.
pub fn soak_on<F: Future<Output = ()>>(
    mut runtime: tokio::runtime::Builder,
    test: impl FnOnce() -> F,
) {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    runtime.enable_all().build().unwrap().block_on(test());
}

/// What the process holds now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    /// Tasks alive on this test's runtime (the service's, the clients').
    pub tasks: usize,
    /// Heap blocks allocated and not freed, in the whole process.
    pub blocks: isize,
    /// Heap bytes allocated and not freed, in the whole process.
    pub bytes: isize,
}

pub fn held() -> Held {
    let stats = INSTRUMENTED_SYSTEM.stats();
    Held {
        tasks: tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks(),
        blocks: stats.allocations as isize - stats.deallocations as isize,
        bytes: stats.bytes_allocated as isize - stats.bytes_deallocated as isize,
    }
}

/// The figures after the cycles: what was held after cycle `early`
/// (the reference) and after the last cycle, and every cycle's figures.
pub struct Series {
    name: &'static str,
    early: usize,
    samples: Vec<Held>,
}

impl Series {
    /// A series of `cycles` cycles, its room taken now: the samples' own
    /// vector must not grow under the measure.
    pub fn new(name: &'static str, early: usize, cycles: usize) -> Self {
        Self {
            name,
            early,
            samples: Vec::with_capacity(cycles),
        }
    }

    /// Records the figures after a cycle; after the reference cycle, the
    /// lowest task count seen over a short while (a task of the cycle may
    /// still be on its way out).
    pub async fn record(&mut self) {
        let mut now = held();
        if self.samples.len() + 1 == self.early {
            for _ in 0..20 {
                tokio::time::sleep(Duration::from_millis(10)).await;
                let again = held();
                if again.tasks < now.tasks {
                    now = again;
                }
            }
        }
        self.samples.push(now);
    }

    fn reference(&self) -> Held {
        self.samples[self.early - 1]
    }

    /// Waits (within [`SETTLE`]) until the task count is back to the
    /// reference's at most; fails with the series otherwise. Then checks
    /// the heap: the live blocks and bytes may not have grown between the
    /// reference and the end by more than `slack_blocks` and `slack_bytes`
    /// (`None`: the bytes are not checked).
    pub async fn assert_flat(&mut self, slack_blocks: isize, slack_bytes: Option<isize>) {
        let reference = self.reference();
        let deadline = tokio::time::Instant::now() + SETTLE;
        let mut last = held();
        while last.tasks > reference.tasks && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
            last = held();
        }
        let cycles = self.samples.len();
        let tasks: Vec<usize> = self.samples.iter().map(|h| h.tasks).collect();
        let kib: Vec<isize> = self.samples.iter().map(|h| h.bytes / 1024).collect();
        let blocks: Vec<isize> = self.samples.iter().map(|h| h.blocks).collect();
        eprintln!(
            "{}: after cycle {} {:?}, after cycle {cycles} and settling {last:?}\n  tasks per cycle {tasks:?}\n  live KiB per cycle {kib:?}\n  live blocks per cycle {blocks:?}",
            self.name, self.early, reference
        );
        assert!(
            last.tasks <= reference.tasks,
            "{}: {} alive tasks after cycle {}, {} after cycle {cycles}: a cycle leaves tasks behind \
             (per cycle: {tasks:?})",
            self.name,
            reference.tasks,
            self.early,
            last.tasks
        );
        // The lowest of the last few: a cycle's own buffers may be in flight.
        let tail = &self.samples[cycles.saturating_sub(5)..];
        let blocks = tail.iter().map(|h| h.blocks).min().unwrap_or(last.blocks);
        let bytes = tail.iter().map(|h| h.bytes).min().unwrap_or(last.bytes);
        assert!(
            blocks - reference.blocks <= slack_blocks,
            "{}: {} live heap blocks after cycle {}, {blocks} after cycle {cycles}: \
             growth over the slack of {slack_blocks}",
            self.name,
            reference.blocks,
            self.early
        );
        let Some(slack_bytes) = slack_bytes else {
            return;
        };
        assert!(
            bytes - reference.bytes <= slack_bytes,
            "{}: {} live heap bytes after cycle {}, {bytes} after cycle {cycles}: \
             growth over the slack of {slack_bytes}",
            self.name,
            reference.bytes,
            self.early
        );
    }
}
