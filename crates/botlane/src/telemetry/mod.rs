//! What a client tells the application's metrics pipeline and tracing
//! subscriber: metrics through the `metrics` facade (the application
//! installs the recorder, an exporter of its choice; botlane has none), one
//! `tracing` span per invocation (`command.rs`), and the connection's
//! lifecycle as structured `tracing` events (`connection.rs`). The names,
//! labels and span fields are the table of `docs/operations.md`.
//!
//! Handles are resolved once, at `login()` (a command's at its first
//! invocation), never per call: a labelled key is built (and allocated)
//! only then, and with no recorder installed each handle is a no-op, so
//! the hot path pays one branch per metric. Labels are bounded: a
//! registered command's name, a lane, an outcome, a state, a status class,
//! and the application's optional bot label; never an id, an argument or
//! content.
//!
//! Gauges move by deltas, never by `set`: without a bot label, every client
//! of a process shares one series, which is then their sum.

mod command;
mod connection;

use std::sync::{Arc, OnceLock};

use metrics::{Counter, Gauge, Label, SharedString, Unit};

pub(crate) use command::{
    end_span, invocation_span, CommandMetrics, CommandSlot, InvocationOutcome, Lane,
};
pub(crate) use connection::{ConnectionState, FirstLogin};

/// Invocations the dispatch rule recognised, by command, lane and outcome.
const INVOCATIONS: &str = "botlane_invocations_total";
/// How long an invocation's checks, cooldown and handler took, by command.
const HANDLER_DURATION: &str = "botlane_handler_duration_seconds";
/// Handlers (and error hooks) running.
const HANDLERS_RUNNING: &str = "botlane_handlers_running";
/// Message pushes waiting for dispatch.
const PUSH_QUEUE_LENGTH: &str = "botlane_push_queue_length";
/// Message pushes dropped (the push queue full, or no session to come).
const PUSHES_DROPPED: &str = "botlane_pushes_dropped_total";
/// Clients in each connection state.
const CONNECTION_STATE: &str = "botlane_connection_state";
/// Connections that ended and are being replaced, by why they ended.
const RECONNECTS: &str = "botlane_reconnects_total";
/// Login attempts, by phase and result.
const LOGIN_ATTEMPTS: &str = "botlane_login_attempts_total";
/// REST credentials minted, by result.
const REST_MINTS: &str = "botlane_rest_mints_total";
/// REST calls answered 401, whose credential is minted again.
const REST_REMINTS: &str = "botlane_rest_remints_total";
/// REST calls, by status class (`error`: no response).
const REST_REQUESTS: &str = "botlane_rest_requests_total";

/// The label every series carries when the application named the bot.
const BOT_LABEL: &str = "bot";

/// A login attempt's phase: the first `login()`, or a reconnect.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LoginPhase {
    First,
    Reconnect,
}

/// How a login attempt ended.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LoginResult {
    Ok,
    /// Failed for a reason that may pass, or any reconnect failure but a
    /// refused token.
    Failed,
    /// The token was refused.
    Refused,
}

/// The status classes of `botlane_rest_requests_total`.
const STATUS_CLASSES: [&str; 6] = ["1xx", "2xx", "3xx", "4xx", "5xx", "error"];

/// One client's telemetry: its bot label, its handles once resolved, and
/// the state of its connection.
#[derive(Debug)]
pub(crate) struct Telemetry {
    /// The application's bot label, shared by every key.
    bot: Option<SharedString>,
    handles: OnceLock<Handles>,
    connection: connection::Tracker,
}

/// The handles of the client-wide series.
#[derive(Debug)]
pub(crate) struct Handles {
    pub(crate) handlers_running: Gauge,
    pub(crate) push_queue_length: Gauge,
    pub(crate) pushes_dropped: Counter,
    /// By [`ConnectionState::gauged`] index.
    connection_state: [Gauge; ConnectionState::GAUGED],
    /// By phase, then result.
    login_attempts: [[Counter; 3]; 2],
    /// `ok`, `failed`.
    rest_mints: [Counter; 2],
    rest_remints: Counter,
    /// By [`STATUS_CLASSES`].
    rest_requests: [Counter; STATUS_CLASSES.len()],
}

impl Telemetry {
    /// A client's telemetry, its series labelled `bot="{bot}"` when given.
    pub(crate) fn new(bot: Option<&str>) -> Self {
        Self {
            bot: bot.map(|label| SharedString::from_shared(Arc::from(label))),
            handles: OnceLock::new(),
            connection: connection::Tracker::default(),
        }
    }

    /// Resolves the client-wide handles with the recorder installed now
    /// (`login()`); once per client.
    pub(crate) fn resolve(&self) {
        self.handles.get_or_init(|| {
            describe();
            let state = |state: ConnectionState| {
                metrics::gauge!(CONNECTION_STATE, self.labels([("state", state.as_str())]))
            };
            let login = |phase: &'static str, result: &'static str| {
                metrics::counter!(
                    LOGIN_ATTEMPTS,
                    self.labels([("phase", phase), ("result", result)])
                )
            };
            let login_phase = |phase| {
                [
                    login(phase, "ok"),
                    login(phase, "failed"),
                    login(phase, "refused"),
                ]
            };
            let mint = |result| metrics::counter!(REST_MINTS, self.labels([("result", result)]));
            Handles {
                handlers_running: metrics::gauge!(HANDLERS_RUNNING, self.labels([])),
                push_queue_length: metrics::gauge!(PUSH_QUEUE_LENGTH, self.labels([])),
                pushes_dropped: metrics::counter!(PUSHES_DROPPED, self.labels([])),
                connection_state: ConnectionState::GAUGES.map(state),
                login_attempts: [login_phase("first"), login_phase("reconnect")],
                rest_mints: [mint("ok"), mint("failed")],
                rest_remints: metrics::counter!(REST_REMINTS, self.labels([])),
                rest_requests: STATUS_CLASSES.map(|class| {
                    metrics::counter!(REST_REQUESTS, self.labels([("status", class)]))
                }),
            }
        });
    }

    /// The client-wide handles, once resolved.
    pub(crate) fn handles(&self) -> Option<&Handles> {
        self.handles.get()
    }

    /// Counts a login attempt.
    pub(crate) fn login_attempt(&self, phase: LoginPhase, result: LoginResult) {
        if let Some(handles) = self.handles() {
            handles.login_attempts[phase as usize][result as usize].increment(1);
        }
    }

    /// Counts a connection that ended and is being replaced, by `reason`
    /// (the transport's fixed label). Rare: resolved here.
    pub(crate) fn reconnect(&self, reason: &'static str) {
        if self.handles().is_some() {
            metrics::counter!(RECONNECTS, self.labels([("reason", reason)])).increment(1);
        }
    }

    /// Counts a REST mint.
    pub(crate) fn rest_mint(&self, ok: bool) {
        if let Some(handles) = self.handles() {
            handles.rest_mints[usize::from(!ok)].increment(1);
        }
    }

    /// Counts a REST call answered 401, whose credential is minted again.
    pub(crate) fn rest_remint(&self) {
        if let Some(handles) = self.handles() {
            handles.rest_remints.increment(1);
        }
    }

    /// Counts a REST call by its status (`None`: no response).
    pub(crate) fn rest_request(&self, status: Option<u16>) {
        if let Some(handles) = self.handles() {
            let class = match status {
                Some(status @ 100..=599) => usize::from(status / 100 - 1),
                _ => STATUS_CLASSES.len() - 1,
            };
            handles.rest_requests[class].increment(1);
        }
    }

    /// One handler (or error hook) starts; [`handler_ended`](Self::handler_ended)
    /// when it ends (or a [`Running`] guard, [`running`](Self::running)).
    pub(crate) fn handler_started(&self) {
        if let Some(handles) = self.handles() {
            handles.handlers_running.increment(1.0);
        }
    }

    /// One handler (or error hook) that [started](Self::handler_started) ends.
    pub(crate) fn handler_ended(&self) {
        if let Some(handles) = self.handles() {
            handles.handlers_running.decrement(1.0);
        }
    }

    /// [`handler_started`](Self::handler_started), and `handler_ended` when
    /// the guard is dropped.
    pub(crate) fn running(&self) -> Running<'_> {
        self.handler_started();
        Running(self)
    }

    /// The handles of the command in `slot`, named `name` (the registry's
    /// name), resolved at its first call; `None` before `login()`.
    pub(crate) fn command<'a>(
        &self,
        slot: &'a CommandSlot,
        name: &str,
    ) -> Option<&'a CommandMetrics> {
        self.handles()?;
        Some(slot.get_or_init(|| Arc::new(CommandMetrics::resolve(self, name))))
    }

    /// A first login starts ([`FirstLogin`]).
    pub(crate) fn first_login(&self) -> FirstLogin<'_> {
        FirstLogin::new(self)
    }

    /// Moves the connection to `state` (see [`ConnectionState`]).
    pub(crate) fn enter(&self, state: ConnectionState) {
        self.connection.enter(state, self.handles());
    }

    /// The labels of a series: the bot label, if any, then `extra`.
    fn labels<const N: usize>(&self, extra: [(&'static str, &'static str); N]) -> Vec<Label> {
        let mut labels = Vec::with_capacity(N + 1);
        labels.extend(self.bot.clone().map(|bot| Label::new(BOT_LABEL, bot)));
        labels.extend(extra.into_iter().map(|(key, value)| Label::new(key, value)));
        labels
    }

    /// The labels of a command's series: the bot label, if any, the
    /// command's name (one shared string for all of them), then `extra`.
    fn command_labels(
        &self,
        command: &SharedString,
        extra: &[(&'static str, &'static str)],
    ) -> Vec<Label> {
        let mut labels = self.labels([]);
        labels.push(Label::new("command", command.clone()));
        labels.extend(extra.iter().map(|&(key, value)| Label::new(key, value)));
        labels
    }
}

/// A handler running ([`Telemetry::running`]), until dropped.
pub(crate) struct Running<'a>(&'a Telemetry);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.handler_ended();
    }
}

/// Gives the recorder each series' unit and help text (the exposition's
/// `# HELP` lines). Per login: a recorder keeps the last.
fn describe() {
    use metrics::{describe_counter, describe_gauge, describe_histogram};
    describe_counter!(
        INVOCATIONS,
        "Invocations of registered commands, by command, lane and outcome"
    );
    describe_histogram!(
        HANDLER_DURATION,
        Unit::Seconds,
        "How long an invocation's checks, cooldown and handler took"
    );
    describe_gauge!(HANDLERS_RUNNING, "Handlers and error hooks running");
    describe_gauge!(PUSH_QUEUE_LENGTH, "Message pushes waiting for dispatch");
    describe_counter!(
        PUSHES_DROPPED,
        "Message pushes dropped: the push queue was full, or no session was to come"
    );
    describe_gauge!(CONNECTION_STATE, "Clients in each connection state");
    describe_counter!(
        RECONNECTS,
        "Connections that ended and are being replaced, by why they ended"
    );
    describe_counter!(LOGIN_ATTEMPTS, "Login attempts, by phase and result");
    describe_counter!(REST_MINTS, "REST credentials minted, by result");
    describe_counter!(
        REST_REMINTS,
        "REST calls answered 401, whose credential is minted again"
    );
    describe_counter!(
        REST_REQUESTS,
        "REST calls, by status class (error: no response)"
    );
}
