//! The open connections: their outgoing queues, their accounts, the
//! pre-login and session pools, and the frames queued on them (recorded as
//! they are queued, once the connection has logged in).

use std::io::Write as _;
use std::time::Instant;

use botlane_proto::OpCode;
use bytes::Bytes;
use serde::Serialize;
use tokio::sync::watch;

use super::outbox::Outbox;
use super::{Refused, State};
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
    /// From when a full pre-login pool may evict it for a newcomer; `None`
    /// once a login with a known token has arrived.
    evictable_from: Option<tokio::time::Instant>,
    /// Evicted: ending, and no longer counted in the pre-login pool.
    evicted: bool,
}

impl Connection {
    /// Tells the connection's reader loop to end the connection.
    pub(crate) fn terminate(&self, how: Termination) {
        self.kill.send_replace(Some(how));
    }
}

impl State {
    /// Registers a new WebSocket in the pre-login pool, evicting the oldest
    /// idle stranger if the pool is full ([`Limits::prelogin_grace`](crate::Limits::prelogin_grace));
    /// `None` when it is full of connections that may not be evicted.
    pub(crate) fn connect(
        &mut self,
        outbox: Outbox,
        kill: watch::Sender<Option<Termination>>,
    ) -> Option<u64> {
        if self.prelogin >= self.limits.prelogin_connections && !self.evict_idle_stranger() {
            self.meters.refuse(Refused::PoolFull);
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
                evictable_from: Some(crate::limits::deadline(self.limits.prelogin_grace)),
                evicted: false,
            },
        );
        Some(id)
    }

    /// Closes the oldest connection of the pre-login pool that may be
    /// evicted (upgraded a grace ago, no login with a known token) and
    /// takes it out of the pool; whether there was one. Ids grow, so the
    /// first found is the oldest.
    fn evict_idle_stranger(&mut self) -> bool {
        let now = tokio::time::Instant::now();
        let grace = self.limits.prelogin_grace;
        let Some((&id, stranger)) = self.connections.iter_mut().find(|(_, c)| {
            c.account_id.is_none() && !c.evicted && c.evictable_from.is_some_and(|at| at <= now)
        }) else {
            return false;
        };
        stranger.evicted = true;
        stranger.ending = true;
        // Urgent: the close frame goes ahead of any reply still queued.
        stranger.terminate(Termination::Urgent {
            code: 1008,
            reason: format!(
                "pre-login pool full: no login within {} of the upgrade",
                crate::limits::seconds(grace)
            ),
        });
        self.prelogin -= 1;
        self.meters.refuse(Refused::Evicted);
        tracing::debug!(
            connection = id,
            "pre-login pool full: idle stranger evicted"
        );
        true
    }

    /// A login with a known token has arrived on `connection_id`: it is
    /// never evicted from here on. `false` if it already was (it is
    /// ending: the login is not handled).
    pub(crate) fn login_arrived(&mut self, connection_id: u64) -> bool {
        match self.connections.get_mut(&connection_id) {
            Some(connection) if !connection.evicted => {
                connection.evictable_from = None;
                true
            }
            _ => false,
        }
    }

    pub(crate) fn disconnect(&mut self, connection_id: u64) -> Option<String> {
        let connection = self.connections.remove(&connection_id)?;
        match &connection.account_id {
            Some(account_id) => {
                self.sessions -= 1;
                self.unindex(account_id, connection_id);
            }
            // An evicted one left the pool when it was evicted.
            None if connection.evicted => {}
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
        let frame = self.frame(op, payload);
        self.send_frame(connection_id, op, frame, recorded);
    }

    /// Writes the frame `{"op":op,"d":payload}` once, to be queued with
    /// [`send_frame`](Self::send_frame) or [`push_frame_to_channel`](Self::push_frame_to_channel).
    pub(crate) fn frame<T: Serialize + ?Sized>(&mut self, op: u16, payload: &T) -> Frame {
        Frame::new(&mut self.scratch, op, payload)
    }

    /// Queues a written frame on one connection, recorded with its payload
    /// or with `recorded` instead.
    pub(crate) fn send_frame(
        &mut self,
        connection_id: u64,
        op: u16,
        frame: Frame,
        recorded: Option<String>,
    ) {
        let size = frame.payload.len();
        let record = recorded.unwrap_or(frame.payload);
        self.queue_frame(connection_id, op, frame.text, size, record);
    }

    /// A buffer to check a sealed payload in, reused (its bytes are stale).
    pub(crate) fn scratch(&mut self) -> &mut Vec<u8> {
        &mut self.scratch
    }

    /// Queues the frame `text` on one connection and records it with
    /// `record` as its payload (`size` bytes on the wire).
    fn queue_frame(
        &mut self,
        connection_id: u64,
        op: u16,
        text: Bytes,
        size: usize,
        record: String,
    ) {
        let Some(connection) = self.connections.get_mut(&connection_id) else {
            return;
        };
        if connection.ending {
            return;
        }
        tracing::debug!(connection = connection_id, op, size, "frame sent");
        let own = self.handling == Some(connection_id);
        // Nothing is recorded for a connection that has not logged in.
        let record = connection.account_id.clone().map(|account_id| FrameRecord {
            connection_id,
            account_id: Some(account_id),
            direction: Direction::Sent,
            opcode: Some(op),
            payload_size: size,
            payload: record,
        });
        self.meters.frames_sent += 1;
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
        self.push_to_all(std::iter::once(account_id), op.code(), payload) > 0
    }

    /// Pushes one frame to every logged-in connection of each of
    /// `accounts` (a message to its channel's members), written once for
    /// all of them; returns how many connections it was addressed to (one
    /// that is ending, or whose queue is full, is among them).
    pub(crate) fn push_to_all<'a, T: Serialize + ?Sized>(
        &mut self,
        accounts: impl IntoIterator<Item = &'a str>,
        op: u16,
        payload: &T,
    ) -> usize {
        let targets = self.connections_of_all(accounts);
        let frame = self.frame(op, payload);
        self.queue_on_all(&targets, op, frame)
    }

    /// [`push_to_all`](Self::push_to_all) to the members of `channel_id`
    /// (none if there is no such channel), of a frame already written.
    pub(crate) fn push_frame_to_channel(
        &mut self,
        channel_id: &str,
        op: u16,
        frame: Frame,
    ) -> usize {
        let members = self
            .channels
            .get(channel_id)
            .map_or(&[][..], |c| &c.members[..]);
        let targets = self.connections_of_all(members.iter().map(String::as_str));
        self.queue_on_all(&targets, op, frame)
    }

    /// The connections of every account of `accounts`.
    fn connections_of_all<'a>(&self, accounts: impl IntoIterator<Item = &'a str>) -> Vec<u64> {
        accounts
            .into_iter()
            .flat_map(|account_id| self.connections_of(account_id))
            .copied()
            .collect()
    }

    fn queue_on_all(&mut self, targets: &[u64], op: u16, frame: Frame) -> usize {
        let Some((&last, others)) = targets.split_last() else {
            return 0;
        };
        let Frame { text, payload } = frame;
        let size = payload.len();
        // Each connection its own record; the frame's bytes are shared.
        for &connection_id in others {
            self.queue_frame(connection_id, op, text.clone(), size, payload.clone());
        }
        self.queue_frame(last, op, text, size, payload);
        targets.len()
    }

    /// Queues a close frame after what is queued; nothing is queued after it.
    pub(crate) fn close_connection(&mut self, connection_id: u64, code: u16, reason: String) {
        if let Some(connection) = self.connections.get_mut(&connection_id) {
            connection.ending = true;
            connection.outbox.push_close(code, reason);
        }
    }
}

/// A frame `{"op":N,"d":payload}`, written once and shared by every
/// connection it is queued for.
pub(crate) struct Frame {
    /// The whole frame, UTF-8.
    text: Bytes,
    /// The payload's JSON text, for the records.
    payload: String,
}

/// The most a scratch buffer keeps between frames: a rare large frame (a
/// history reply of up to 1 MiB) does not pin its size for good.
const SCRATCH_KEPT: usize = 64 * 1024;

impl Frame {
    /// Written in `scratch`, then copied once into the frame's bytes and
    /// once into the record's text, both of their exact size: two
    /// allocations, where growing a `String` took a few more.
    fn new<T: Serialize + ?Sized>(scratch: &mut Vec<u8>, op: u16, payload: &T) -> Self {
        scratch.clear();
        write!(scratch, r#"{{"op":{op},"d":"#).expect("writing to a Vec cannot fail");
        let start = scratch.len();
        // Our payload types hold only plain data, so serializing cannot fail.
        serde_json::to_writer(&mut *scratch, payload).expect("wire payloads always serialize");
        let json = std::str::from_utf8(&scratch[start..])
            .expect("serde_json writes UTF-8")
            .to_owned();
        scratch.push(b'}');
        let text = Bytes::copy_from_slice(scratch);
        if scratch.capacity() > SCRATCH_KEPT {
            *scratch = Vec::new();
        }
        Self {
            text,
            payload: json,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::outbox::{outbox, Outbound};
    use super::*;

    #[test]
    fn a_frame_is_the_envelope_around_the_payload_it_points_at() {
        let payload = serde_json::json!({"code": 0, "text": "é\"}"});
        let frame = Frame::new(&mut Vec::new(), 30, &payload);
        let parsed: serde_json::Value = serde_json::from_slice(&frame.text).unwrap();
        assert_eq!(parsed, serde_json::json!({"op": 30, "d": payload}));
        assert_eq!(frame.payload, serde_json::to_string(&payload).unwrap());
    }

    #[test]
    fn a_push_to_many_accounts_is_written_once_and_recorded_per_connection() {
        let mut state = State::from_config(&crate::DevServerConfig::default()).unwrap();
        let mut readers = Vec::new();
        for account in ["alice", "bob", "bob", "carol"] {
            let (outbox, reader, _) = outbox(1 << 20);
            let (kill, _) = watch::channel(None);
            let id = state.connect(outbox, kill).unwrap();
            state.set_account(id, account);
            readers.push((account, reader));
        }
        let queued = state.push_to_all(["bob", "alice", "nobody"], 30, &"hi");
        assert_eq!(queued, 3, "bob's two connections and alice's one");
        let mut frames = Vec::new();
        for (account, reader) in &mut readers {
            match (*account, reader.try_recv()) {
                ("carol", None) => {}
                (_, Some(Outbound::Frame(text))) => frames.push(text),
                (account, other) => panic!("{account}: {other:?}"),
            }
        }
        assert_eq!(frames.len(), 3);
        assert!(
            frames.iter().all(|f| f.as_ptr() == frames[0].as_ptr()),
            "one frame's bytes shared by every queue, not one copy each"
        );
        assert_eq!(&frames[0][..], br#"{"op":30,"d":"hi"}"#);
        let recorded: Vec<_> = state
            .frames
            .items()
            .iter()
            .map(|r| (r.account_id.as_deref(), r.payload.as_str()))
            .collect();
        assert_eq!(
            recorded,
            [
                (Some("bob"), r#""hi""#),
                (Some("bob"), r#""hi""#),
                (Some("alice"), r#""hi""#)
            ]
        );
    }
}
