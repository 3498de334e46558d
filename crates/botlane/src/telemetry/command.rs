//! An invocation's telemetry: its command's series, resolved at the
//! command's first invocation and kept in the registry beside it (so that
//! a registry snapshot taken for a later registration shares them), and
//! its span.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use metrics::{Counter, Histogram, SharedString};

use super::{Telemetry, HANDLER_DURATION, INVOCATIONS};

/// Where a registered command keeps its series once resolved.
pub(crate) type CommandSlot = OnceLock<Arc<CommandMetrics>>;

/// The lane an invocation came on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lane {
    Text,
    Structured,
}

impl Lane {
    const ALL: [Self; 2] = [Self::Text, Self::Structured];

    fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Structured => "structured",
        }
    }
}

/// How an invocation ended: `ok`, or the reason of its failure as
/// `CommandErrorReason::as_str` says it, with a handler's panic told apart
/// from its `Err`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InvocationOutcome {
    Ok,
    Parse,
    Arguments,
    Check,
    Cooldown,
    /// The handler returned `Err`.
    Handler,
    /// The handler (or a typed command's conversion) panicked.
    Panic,
    Timeout,
}

impl InvocationOutcome {
    const ALL: [Self; 8] = [
        Self::Ok,
        Self::Parse,
        Self::Arguments,
        Self::Check,
        Self::Cooldown,
        Self::Handler,
        Self::Panic,
        Self::Timeout,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Parse => "parse",
            Self::Arguments => "arguments",
            Self::Check => "check",
            Self::Cooldown => "cooldown",
            Self::Handler => "handler",
            Self::Panic => "panic",
            Self::Timeout => "timeout",
        }
    }
}

/// One command's series: its invocations by lane and outcome, and how long
/// its handler ran.
#[derive(Debug)]
pub(crate) struct CommandMetrics {
    invocations: [[Counter; InvocationOutcome::ALL.len()]; Lane::ALL.len()],
    duration: Histogram,
}

impl CommandMetrics {
    /// Registers the series of the command `name` with the recorder
    /// installed now.
    pub(super) fn resolve(telemetry: &Telemetry, name: &str) -> Self {
        let command = SharedString::from_shared(Arc::from(name));
        let labels =
            |extra: &[(&'static str, &'static str)]| telemetry.command_labels(&command, extra);
        Self {
            invocations: Lane::ALL.map(|lane| {
                InvocationOutcome::ALL.map(|outcome| {
                    let extra = [("lane", lane.as_str()), ("outcome", outcome.as_str())];
                    metrics::counter!(INVOCATIONS, labels(&extra))
                })
            }),
            duration: metrics::histogram!(HANDLER_DURATION, labels(&[])),
        }
    }

    /// Counts an invocation; `ran` is how long its attempt (checks,
    /// cooldown, handler) took, for one that got that far.
    pub(crate) fn record(&self, lane: Lane, outcome: InvocationOutcome, ran: Option<Duration>) {
        self.invocations[lane as usize][outcome as usize].increment(1);
        if let Some(ran) = ran {
            self.duration.record(ran.as_secs_f64());
        }
    }
}

/// The span of one invocation, at INFO, target `botlane::invocation`: the
/// command's registered name and the lane now; `bot`, `outcome` and
/// `latency_us` recorded later. Never an argument, content or secret. A
/// disabled span (no subscriber wants it) costs what `tracing`'s level and
/// callsite checks cost.
pub(crate) fn invocation_span(command: &str, lane: Lane) -> tracing::Span {
    tracing::info_span!(
        target: "botlane::invocation",
        "invocation",
        command,
        lane = lane.as_str(),
        bot = tracing::field::Empty,
        outcome = tracing::field::Empty,
        latency_us = tracing::field::Empty,
    )
}

/// Records how an invocation ended on its span; `ran` as in
/// [`CommandMetrics::record`].
pub(crate) fn end_span(span: &tracing::Span, outcome: InvocationOutcome, ran: Option<Duration>) {
    if span.is_disabled() {
        return;
    }
    span.record("outcome", outcome.as_str());
    if let Some(ran) = ran {
        span.record(
            "latency_us",
            u64::try_from(ran.as_micros()).unwrap_or(u64::MAX),
        );
    }
}
