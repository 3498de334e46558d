//! The open connections: their outgoing queues, their accounts, and the
//! frames queued on them (recorded as they are queued).

use botlane::wire::{encode_frame, OpCode};
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, watch};

use super::State;
use crate::records::{Direction, FrameRecord};

/// What a connection's writer task is told to do.
#[derive(Debug)]
pub(crate) enum Outbound {
    /// Write this text frame.
    Frame(String),
    /// Write a close frame and stop.
    Close { code: u16, reason: &'static str },
}

/// How a connection is ended from outside its reader loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Termination {
    /// Drop the socket with no close frame (a network failure, as seen by the client).
    Abrupt,
    /// Flush what is queued, then send a close frame.
    Close { code: u16, reason: &'static str },
}

pub(crate) struct Connection {
    pub(crate) account_id: Option<String>,
    tx: mpsc::UnboundedSender<Outbound>,
    kill: watch::Sender<Option<Termination>>,
}

impl Connection {
    /// Tells the connection's reader loop to end the connection.
    pub(crate) fn terminate(&self, how: Termination) {
        self.kill.send_replace(Some(how));
    }
}

impl State {
    pub(crate) fn connect(
        &mut self,
        tx: mpsc::UnboundedSender<Outbound>,
        kill: watch::Sender<Option<Termination>>,
    ) -> u64 {
        let id = self.next_connection;
        self.next_connection += 1;
        self.connections.insert(
            id,
            Connection {
                account_id: None,
                tx,
                kill,
            },
        );
        id
    }

    pub(crate) fn disconnect(&mut self, connection_id: u64) -> Option<String> {
        self.connections
            .remove(&connection_id)
            .and_then(|c| c.account_id)
    }

    pub(crate) fn terminate_all(&self, how: Termination) {
        for connection in self.connections.values() {
            connection.terminate(how);
        }
    }

    pub(crate) fn account_of(&self, connection_id: u64) -> Option<&str> {
        self.connections
            .get(&connection_id)
            .and_then(|c| c.account_id.as_deref())
    }

    pub(crate) fn is_online(&self, account_id: &str) -> bool {
        self.connections
            .values()
            .any(|c| c.account_id.as_deref() == Some(account_id))
    }

    pub(crate) fn set_account(&mut self, connection_id: u64, account_id: &str) {
        if let Some(connection) = self.connections.get_mut(&connection_id) {
            connection.account_id = Some(account_id.to_owned());
        }
    }

    pub(crate) fn record_received(
        &mut self,
        connection_id: u64,
        opcode: Option<u16>,
        payload_size: usize,
        payload: String,
    ) {
        let account_id = self.account_of(connection_id).map(str::to_owned);
        self.frames.push(FrameRecord {
            connection_id,
            account_id,
            direction: Direction::Received,
            opcode,
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
        self.send_recorded_as(connection_id, op, payload, None);
    }

    /// Like [`send`](Self::send), but records `recorded` instead of the
    /// payload when given (for replies that carry a secret).
    pub(crate) fn send_recorded_as<T: Serialize + ?Sized>(
        &mut self,
        connection_id: u64,
        op: OpCode,
        payload: &T,
        recorded: Option<String>,
    ) {
        let Some(connection) = self.connections.get(&connection_id) else {
            return;
        };
        // Our payload types hold only plain data, so serializing cannot fail.
        let payload = serde_json::to_string(payload).expect("wire payloads always serialize");
        let raw = RawValue::from_string(payload).expect("serde_json output is valid JSON");
        let text = encode_frame(op, &*raw);
        tracing::debug!(
            connection = connection_id,
            op = op.code(),
            size = raw.get().len(),
            "frame sent"
        );
        // A closed channel means the writer is gone: the connection is ending
        // and will be removed by its reader.
        let _ = connection.tx.send(Outbound::Frame(text));
        let account_id = connection.account_id.clone();
        self.frames.push(FrameRecord {
            connection_id,
            account_id,
            direction: Direction::Sent,
            opcode: Some(op.code()),
            payload_size: raw.get().len(),
            payload: recorded.unwrap_or_else(|| raw.get().to_owned()),
        });
    }

    /// Pushes a frame to every logged-in connection of an account; returns
    /// whether there was one.
    pub(crate) fn push<T: Serialize + ?Sized>(
        &mut self,
        account_id: &str,
        op: OpCode,
        payload: &T,
    ) -> bool {
        let targets: Vec<u64> = self
            .connections
            .iter()
            .filter(|(_, c)| c.account_id.as_deref() == Some(account_id))
            .map(|(id, _)| *id)
            .collect();
        for connection_id in &targets {
            self.send(*connection_id, op, payload);
        }
        !targets.is_empty()
    }

    pub(crate) fn close_connection(&self, connection_id: u64, code: u16, reason: &'static str) {
        if let Some(connection) = self.connections.get(&connection_id) {
            let _ = connection.tx.send(Outbound::Close { code, reason });
        }
    }
}
