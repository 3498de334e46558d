//! The open connections: their outgoing queues, their accounts, the
//! pre-login and session pools, and the frames queued on them (recorded as
//! they are queued, once the connection has logged in).

use std::time::Instant;

use botlane_proto::OpCode;
use serde::Serialize;
use tokio::sync::watch;

use super::outbox::Outbox;
use super::State;
use crate::records::{Direction, FrameRecord};

/// How a connection is ended from outside its reader loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Termination {
    /// Drop the socket with no close frame (a network failure, as seen by the client).
    Abrupt,
    /// Flush what is queued, then send a close frame.
    Close { code: u16, reason: String },
    /// Send a close frame before what is queued, which is abandoned: the
    /// client is not reading, so the queue would never drain.
    Urgent { code: u16, reason: String },
}

/// The close reason of a connection whose queue overflowed.
pub(crate) const QUEUE_FULL: &str = "outbound queue full: the client is not reading";

pub(crate) struct Connection {
    pub(crate) account_id: Option<String>,
    outbox: Outbox,
    kill: watch::Sender<Option<Termination>>,
    /// Set once the connection is being ended: nothing more is queued.
    ending: bool,
}

impl Connection {
    /// Tells the connection's reader loop to end the connection.
    pub(crate) fn terminate(&self, how: Termination) {
        self.kill.send_replace(Some(how));
    }
}

impl State {
    /// Registers a new WebSocket in the pre-login pool; `None` when the pool
    /// is full.
    pub(crate) fn connect(
        &mut self,
        outbox: Outbox,
        kill: watch::Sender<Option<Termination>>,
    ) -> Option<u64> {
        if self.prelogin >= self.limits.prelogin_connections {
            return None;
        }
        self.prelogin += 1;
        let id = self.next_connection;
        self.next_connection += 1;
        self.connections.insert(
            id,
            Connection {
                account_id: None,
                outbox,
                kill,
                ending: false,
            },
        );
        Some(id)
    }

    pub(crate) fn disconnect(&mut self, connection_id: u64) -> Option<String> {
        let connection = self.connections.remove(&connection_id)?;
        match &connection.account_id {
            Some(account_id) => {
                self.sessions -= 1;
                self.unindex(account_id, connection_id);
            }
            None => self.prelogin -= 1,
        }
        connection.account_id
    }

    /// Takes `connection_id` off the index of `account_id`'s connections.
    fn unindex(&mut self, account_id: &str, connection_id: u64) {
        if let Some(ids) = self.by_account.get_mut(account_id) {
            ids.retain(|id| *id != connection_id);
            if ids.is_empty() {
                self.by_account.remove(account_id);
            }
        }
    }

    /// How many connections the account index lists, all accounts together.
    #[cfg(feature = "fuzzing")]
    pub(crate) fn indexed_sessions(&self) -> usize {
        self.by_account.values().map(Vec::len).sum()
    }

    /// The logged-in connections of an account, in login order.
    pub(crate) fn connections_of(&self, account_id: &str) -> &[u64] {
        self.by_account.get(account_id).map_or(&[], Vec::as_slice)
    }

    pub(crate) fn terminate_all(&self, how: &Termination) {
        for connection in self.connections.values() {
            connection.terminate(how.clone());
        }
    }

    pub(crate) fn account_of(&self, connection_id: u64) -> Option<&str> {
        self.connections
            .get(&connection_id)
            .and_then(|c| c.account_id.as_deref())
    }

    pub(crate) fn is_online(&self, account_id: &str) -> bool {
        self.by_account.contains_key(account_id)
    }

    /// Whether the session pool has room for one more login.
    pub(crate) fn session_room(&self) -> bool {
        self.sessions < self.limits.sessions
    }

    /// Moves a connection from the pre-login pool to the session pool.
    pub(crate) fn set_account(&mut self, connection_id: u64, account_id: &str) {
        let Some(connection) = self.connections.get_mut(&connection_id) else {
            return;
        };
        match connection.account_id.replace(account_id.to_owned()) {
            None => {
                self.prelogin -= 1;
                self.sessions += 1;
            }
            Some(before) if before == account_id => return,
            Some(before) => self.unindex(&before, connection_id),
        }
        self.by_account
            .entry(account_id.to_owned())
            .or_default()
            .push(connection_id);
    }

    /// Records a frame received on a logged-in connection; nothing is
    /// recorded for one that has not logged in.
    pub(crate) fn record_received(
        &mut self,
        connection_id: u64,
        opcode: Option<u16>,
        payload_size: usize,
        payload: String,
    ) {
        let Some(account_id) = self.account_of(connection_id).map(str::to_owned) else {
            return;
        };
        self.frames.push(FrameRecord {
            connection_id,
            account_id: Some(account_id),
            direction: Direction::Received,
            opcode,
            payload_size,
            payload,
        });
    }

    /// Records a frame as received before login, on behalf of a connection
    /// that has just logged in with it.
    pub(crate) fn record_login(
        &mut self,
        connection_id: u64,
        payload_size: usize,
        payload: String,
    ) {
        self.frames.push(FrameRecord {
            connection_id,
            account_id: None,
            direction: Direction::Received,
            opcode: Some(OpCode::Login.code()),
            payload_size,
            payload,
        });
    }

    /// Queues a frame on one connection and records it.
    pub(crate) fn send<T: Serialize + ?Sized>(
        &mut self,
        connection_id: u64,
        op: OpCode,
        payload: &T,
    ) {
        self.send_recorded_as(connection_id, op.code(), payload, None);
    }

    /// Like [`send`](Self::send) with any opcode number (the reply to an
    /// opcode the service does not know).
    pub(crate) fn send_op<T: Serialize + ?Sized>(
        &mut self,
        connection_id: u64,
        op: u16,
        payload: &T,
    ) {
        self.send_recorded_as(connection_id, op, payload, None);
    }

    /// Counts a frame whose envelope could not be read, with a rate-limited
    /// warning (what was wrong, never the frame).
    pub(crate) fn note_bad_envelope(&mut self, connection_id: u64, what: &'static str) {
        if let Some(count) = self.envelope_warnings.hit(Instant::now()) {
            tracing::warn!(
                connection = connection_id,
                count,
                what,
                "malformed frame envelope: connection closed with 1007"
            );
        }
    }

    /// Like [`send`](Self::send), but records `recorded` instead of the
    /// payload when given (for replies that carry a secret).
    pub(crate) fn send_recorded_as<T: Serialize + ?Sized>(
        &mut self,
        connection_id: u64,
        op: u16,
        payload: &T,
        recorded: Option<String>,
    ) {
        // The envelope and the payload written once, into the frame itself
        // (no intermediate payload string, no re-parse of it).
        let (text, d) = frame_text(op, payload);
        self.queue_frame(connection_id, op, text, d, recorded);
    }

    /// Queues the frame `text`, whose payload is `text[d]`, on one
    /// connection and records it (`recorded` instead of the payload, when
    /// given).
    fn queue_frame(
        &mut self,
        connection_id: u64,
        op: u16,
        text: String,
        d: std::ops::Range<usize>,
        recorded: Option<String>,
    ) {
        let Some(connection) = self.connections.get_mut(&connection_id) else {
            return;
        };
        if connection.ending {
            return;
        }
        let size = d.len();
        tracing::debug!(connection = connection_id, op, size, "frame sent");
        let own = self.handling == Some(connection_id);
        // Nothing is recorded for a connection that has not logged in, so
        // the payload is copied for the record only for one that has.
        let record = connection.account_id.clone().map(|account_id| FrameRecord {
            connection_id,
            account_id: Some(account_id),
            direction: Direction::Sent,
            opcode: Some(op),
            payload_size: size,
            payload: recorded.unwrap_or_else(|| text[d].to_owned()),
        });
        if !connection.outbox.push_frame(text, own) {
            connection.ending = true;
            connection.terminate(Termination::Urgent {
                code: 1008,
                reason: QUEUE_FULL.to_owned(),
            });
            self.queue_overflows += 1;
            if let Some(count) = self.overflow_warnings.hit(Instant::now()) {
                tracing::warn!(
                    connection = connection_id,
                    count,
                    "outbound queue full: closing connections that do not read"
                );
            }
            return;
        }
        if let Some(record) = record {
            self.frames.push(record);
        }
    }

    /// Pushes a frame to every logged-in connection of an account; returns
    /// whether there was one.
    pub(crate) fn push<T: Serialize + ?Sized>(
        &mut self,
        account_id: &str,
        op: OpCode,
        payload: &T,
    ) -> bool {
        self.push_op(account_id, op.code(), payload)
    }

    /// Like [`push`](Self::push) with any opcode number.
    pub(crate) fn push_op<T: Serialize + ?Sized>(
        &mut self,
        account_id: &str,
        op: u16,
        payload: &T,
    ) -> bool {
        let targets = self.connections_of(account_id).to_vec();
        let Some((&last, others)) = targets.split_last() else {
            return false;
        };
        // Written once for all of the account's connections.
        let (text, d) = frame_text(op, payload);
        for &connection_id in others {
            self.queue_frame(connection_id, op, text.clone(), d.clone(), None);
        }
        self.queue_frame(last, op, text, d, None);
        true
    }

    /// Queues a close frame after what is queued; nothing is queued after it.
    pub(crate) fn close_connection(&mut self, connection_id: u64, code: u16, reason: String) {
        if let Some(connection) = self.connections.get_mut(&connection_id) {
            connection.ending = true;
            connection.outbox.push_close(code, reason);
        }
    }
}

/// The text of a frame `{"op":N,"d":payload}` and where `d`'s JSON lies in it.
fn frame_text<T: Serialize + ?Sized>(op: u16, payload: &T) -> (String, std::ops::Range<usize>) {
    let mut frame = format!(r#"{{"op":{op},"d":"#).into_bytes();
    let start = frame.len();
    // Our payload types hold only plain data, so serializing cannot fail.
    serde_json::to_writer(&mut frame, payload).expect("wire payloads always serialize");
    let end = frame.len();
    frame.push(b'}');
    let text = String::from_utf8(frame).expect("serde_json writes UTF-8");
    (text, start..end)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_is_the_envelope_around_the_payload_it_points_at() {
        let payload = serde_json::json!({"code": 0, "text": "é\"}"});
        let (text, d) = frame_text(30, &payload);
        let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed, serde_json::json!({"op": 30, "d": payload}));
        assert_eq!(&text[d], serde_json::to_string(&payload).unwrap());
    }
}
