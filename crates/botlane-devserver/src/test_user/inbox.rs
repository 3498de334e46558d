//! The reader side of a [`TestUser`](super::TestUser): reply slots per
//! opcode, and what the pushes bring (messages, keys, notifications).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use botlane_proto::crypto::{ChannelKey, IdentityKeyPair, WrappedKey};
use botlane_proto::payload::{
    ChannelAdded, ChannelInfo, ChannelKeyPush, ChannelRemoved, MessageCreate, Notification,
    WireMessage,
};
use botlane_proto::{decode_frame, OpCode};
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{mpsc, oneshot};

use super::{TestUserError, MAX_KEPT_NOTIFICATIONS, MAX_QUEUED_MESSAGES, REQUEST_TIMEOUT};

/// State shared by the handle and its reader task.
#[derive(Default)]
pub(super) struct Inner {
    /// One FIFO of reply slots per opcode (the wire has no request ids).
    pub(super) pending: HashMap<u16, VecDeque<oneshot::Sender<Box<RawValue>>>>,
    pub(super) keys: HashMap<String, ChannelKey>,
    /// The first [`MAX_KEPT_NOTIFICATIONS`] pushed.
    pub(super) notifications: Vec<Notification>,
    /// Those pushed after the first [`MAX_KEPT_NOTIFICATIONS`].
    pub(super) notifications_dropped: u64,
    /// The channels this user is a member of: `ready`, then ops 34 and 35.
    pub(super) channels: Vec<ChannelInfo>,
    pub(super) closed: bool,
    /// The code and reason of the service's close frame, if one came.
    pub(super) close: Option<(u16, String)>,
}

pub(super) struct Shared {
    pub(super) inner: Mutex<Inner>,
    pub(super) identity: IdentityKeyPair,
    /// Messages dropped because the queue held [`MAX_QUEUED_MESSAGES`].
    pub(super) messages_dropped: AtomicU64,
    /// Bytes of frames handed to the writer task and not yet sent.
    pub(super) unsent_bytes: AtomicUsize,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn drop_message(&self) {
        // Once: a flood would otherwise log a line per message.
        if self.messages_dropped.fetch_add(1, Ordering::Relaxed) == 0 {
            tracing::warn!(
                limit = MAX_QUEUED_MESSAGES,
                "test user's message queue is full: newest messages are dropped until next_message is called"
            );
        }
    }
}

pub(super) async fn await_slot(
    slot: oneshot::Receiver<Box<RawValue>>,
) -> Result<Box<RawValue>, TestUserError> {
    match tokio::time::timeout(REQUEST_TIMEOUT, slot).await {
        Ok(Ok(payload)) => Ok(payload),
        Ok(Err(_)) => Err(TestUserError::Closed),
        Err(_) => Err(TestUserError::Timeout(REQUEST_TIMEOUT)),
    }
}

pub(super) fn parse<R: DeserializeOwned>(
    op: OpCode,
    payload: &RawValue,
) -> Result<R, TestUserError> {
    serde_json::from_str(payload.get())
        .map_err(|e| TestUserError::Protocol(format!("bad payload for opcode {}: {e}", op.code())))
}

pub(super) fn check(op: OpCode, code: i32, reason: Option<String>) -> Result<(), TestUserError> {
    if code == 0 {
        Ok(())
    } else {
        Err(TestUserError::Refused {
            op: op.code(),
            code,
            reason,
        })
    }
}

/// Handles one frame in the reader task.
pub(super) fn on_frame(
    shared: &Shared,
    messages: &mpsc::Sender<WireMessage>,
    key_arrived: &tokio::sync::Notify,
    text: &str,
) {
    let Ok(frame) = decode_frame(text) else {
        return;
    };
    match OpCode::from(frame.op) {
        Some(OpCode::ChannelAdded) => {
            if let Ok(push) = serde_json::from_str::<ChannelAdded>(frame.d.get()) {
                let mut inner = shared.lock();
                if !inner.channels.iter().any(|c| c.id == push.channel.id) {
                    inner.channels.push(push.channel);
                }
            }
        }
        Some(OpCode::ChannelRemoved) => {
            if let Ok(push) = serde_json::from_str::<ChannelRemoved>(frame.d.get()) {
                let mut inner = shared.lock();
                inner.channels.retain(|c| c.id != push.channel_id);
                // A chat app forgets the key of a channel it left.
                inner.keys.remove(&push.channel_id);
            }
        }
        Some(OpCode::MessageCreate) => {
            if let Ok(push) = serde_json::from_str::<MessageCreate>(frame.d.get()) {
                // Never wait for room: the replies behind this push must
                // still reach their requests.
                if let Err(TrySendError::Full(_)) = messages.try_send(push.message) {
                    shared.drop_message();
                }
            }
        }
        Some(OpCode::Notification) => {
            if let Ok(notification) = serde_json::from_str::<Notification>(frame.d.get()) {
                let mut inner = shared.lock();
                if inner.notifications.len() < MAX_KEPT_NOTIFICATIONS {
                    inner.notifications.push(notification);
                } else {
                    inner.notifications_dropped += 1;
                }
            }
        }
        Some(OpCode::ChannelKey) => {
            let Ok(push) = serde_json::from_str::<ChannelKeyPush>(frame.d.get()) else {
                return;
            };
            let Ok(wrapped) = serde_json::from_str::<WrappedKey>(push.wrapped.get()) else {
                return;
            };
            // A key that does not unwrap (another channel, tampering) is ignored.
            if let Ok(key) = shared
                .identity
                .unwrap_channel_key(&wrapped, &push.channel_id)
            {
                shared.lock().keys.insert(push.channel_id, key);
                key_arrived.notify_waiters();
            }
        }
        _ => {
            let slot = shared
                .lock()
                .pending
                .get_mut(&frame.op)
                .and_then(VecDeque::pop_front);
            if let Some(slot) = slot {
                let _ = slot.send(frame.d.to_owned());
            }
        }
    }
}
