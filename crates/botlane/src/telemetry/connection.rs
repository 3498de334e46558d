//! The connection's lifecycle: the state a client is in, each change told
//! as one structured `tracing` event (target `botlane::connection`, fields
//! `state` and `previous`) and moved in `botlane_connection_state`.

use std::sync::atomic::{AtomicU8, Ordering};

use super::Handles;

/// Where a client's connection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum ConnectionState {
    /// Not logged in yet, or a first login failed (it may be tried again).
    Idle,
    /// The first `login()`'s attempts are under way.
    LoggingIn,
    /// Logged in, on a live connection.
    Connected,
    /// The connection ended; the client is logging in again.
    Reconnecting,
    /// Shut down, or a reconnect's login refused: for good.
    Closed,
}

impl ConnectionState {
    /// How many states have a series of `botlane_connection_state`.
    pub(super) const GAUGED: usize = 3;

    /// The states with a series, in their index order.
    pub(super) const GAUGES: [Self; Self::GAUGED] =
        [Self::LoggingIn, Self::Connected, Self::Reconnecting];

    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::LoggingIn => "logging_in",
            Self::Connected => "connected",
            Self::Reconnecting => "reconnecting",
            Self::Closed => "closed",
        }
    }

    /// Its series' index: idle and closed clients are counted nowhere.
    fn gauged(self) -> Option<usize> {
        Self::GAUGES.iter().position(|s| *s == self)
    }

    fn from_u8(value: u8) -> Self {
        match value {
            1 => Self::LoggingIn,
            2 => Self::Connected,
            3 => Self::Reconnecting,
            4 => Self::Closed,
            _ => Self::Idle,
        }
    }
}

/// One client's state.
#[derive(Debug, Default)]
pub(super) struct Tracker(AtomicU8);

impl Tracker {
    /// Moves to `next`, unless the client is there already or closed (the
    /// end: a late step of a reconnect must not count a shut-down client).
    pub(super) fn enter(&self, next: ConnectionState, handles: Option<&Handles>) {
        let mut current = self.0.load(Ordering::Acquire);
        loop {
            let previous = ConnectionState::from_u8(current);
            if previous == next || previous == ConnectionState::Closed {
                return;
            }
            match self
                .0
                .compare_exchange(current, next as u8, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    if let Some(handles) = handles {
                        if let Some(i) = previous.gauged() {
                            handles.connection_state[i].decrement(1.0);
                        }
                        if let Some(i) = next.gauged() {
                            handles.connection_state[i].increment(1.0);
                        }
                    }
                    tracing::info!(
                        target: "botlane::connection",
                        state = next.as_str(),
                        previous = previous.as_str(),
                        "connection state"
                    );
                    return;
                }
                Err(now) => current = now,
            }
        }
    }
}

/// A first login under way: [`LoggingIn`](ConnectionState::LoggingIn)
/// from its start, [`Connected`](ConnectionState::Connected) once told,
/// else [`Idle`](ConnectionState::Idle) when it ends, also when its future
/// is dropped.
pub(crate) struct FirstLogin<'a> {
    telemetry: &'a super::Telemetry,
    connected: bool,
}

impl<'a> FirstLogin<'a> {
    pub(super) fn new(telemetry: &'a super::Telemetry) -> Self {
        telemetry.enter(ConnectionState::LoggingIn);
        Self {
            telemetry,
            connected: false,
        }
    }

    /// The login succeeded.
    pub(crate) fn connected(mut self) {
        self.connected = true;
        self.telemetry.enter(ConnectionState::Connected);
    }
}

impl Drop for FirstLogin<'_> {
    fn drop(&mut self) {
        if !self.connected {
            self.telemetry.enter(ConnectionState::Idle);
        }
    }
}
