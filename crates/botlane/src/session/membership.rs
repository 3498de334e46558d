//! The channels the bot is a member of and their keys (decision D3).
//!
//! Membership comes from `ready` (op 11) and the membership pushes (op 34
//! `channel_added`, op 35 `channel_removed`). A channel key (op 50) is
//! accepted only for a member channel; a key is evicted when its channel is
//! removed or is missing from a new `ready`. These pushes are applied by
//! dispatch in wire order with the messages (see `push_queue.rs`), so a key
//! is in place before a later message of its channel is opened and gone
//! before a message that came after its channel was left; they are never
//! dropped (the service delivers each key once).
//!
//! Keys live in memory and in the keystore, whose [`Saver`] writes them off
//! the runtime's workers, coalesced.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use crate::crypto::{ChannelKey, WrappedKey};
use crate::error::ClientError;
use crate::keystore::{Saver, MAX_CHANNEL_ID_BYTES};
use crate::sync::{read_lock, write, write_lock};
use crate::throttle::{Throttle, WARN_INTERVAL};
use crate::wire;

/// The most channels a session keeps: the keystore's default cap on channel
/// keys (a bot in more channels could not keep their keys anyway). The
/// list grows with the service's op 34 pushes, so it has a cap of its own.
pub(crate) const MAX_CHANNELS: usize = 10_000;

/// The longest channel name kept, in bytes (ids are kept up to
/// [`MAX_CHANNEL_ID_BYTES`], what the keystore takes).
pub(crate) const MAX_CHANNEL_NAME_BYTES: usize = 1024;

/// Why a channel the service lists is not kept, if it is not.
fn unkept(channel: &wire::ChannelInfo) -> Option<&'static str> {
    if channel.id.len() > MAX_CHANNEL_ID_BYTES || channel.server_id.len() > MAX_CHANNEL_ID_BYTES {
        Some("an id longer than the keystore takes")
    } else if channel.name.len() > MAX_CHANNEL_NAME_BYTES {
        Some("a name longer than 1024 bytes")
    } else {
        None
    }
}

/// A channel the bot is in. Its server id is shared by the contexts of
/// its invocations: one copy per channel, not one per invocation.
#[derive(Debug)]
struct Joined {
    id: String,
    server: Arc<str>,
    name: String,
}

impl From<wire::ChannelInfo> for Joined {
    fn from(info: wire::ChannelInfo) -> Self {
        Self {
            id: info.id,
            server: info.server_id.into(),
            name: info.name,
        }
    }
}

impl From<&Joined> for wire::ChannelInfo {
    fn from(joined: &Joined) -> Self {
        Self {
            id: joined.id.clone(),
            server_id: joined.server.to_string(),
            name: joined.name.clone(),
        }
    }
}

/// The bot's channels and the keys it holds for them.
#[derive(Debug)]
pub(crate) struct Membership {
    channels: RwLock<Vec<Joined>>,
    keys: RwLock<HashMap<String, Arc<ChannelKey>>>,
    /// Opened by the first login; kept by a failed one for the retry.
    keystore: OnceLock<Saver>,
    /// How many `ready` pushes have been applied: a first login waits for
    /// one, so that `channels()` is complete when `login` returns.
    readies: tokio::sync::watch::Sender<u64>,
    key_refused: Throttle,
    channel_refused: Throttle,
    no_key: Throttle,
    undecryptable: Throttle,
}

impl Membership {
    pub(crate) fn new() -> Self {
        Self {
            channels: RwLock::new(Vec::new()),
            keys: RwLock::new(HashMap::new()),
            keystore: OnceLock::new(),
            readies: tokio::sync::watch::Sender::new(0),
            key_refused: Throttle::new(WARN_INTERVAL),
            channel_refused: Throttle::new(WARN_INTERVAL),
            no_key: Throttle::new(WARN_INTERVAL),
            undecryptable: Throttle::new(WARN_INTERVAL),
        }
    }

    /// The keystore, once a login opened it.
    pub(crate) fn keystore(&self) -> Option<&Saver> {
        self.keystore.get()
    }

    /// Keeps the keystore opened by the first login and loads its keys.
    pub(crate) fn use_keystore(&self, saver: Saver) -> &Saver {
        let saver = self.keystore.get_or_init(|| saver);
        let mut keys = write_lock(&self.keys);
        for (channel, key) in saver.channel_keys() {
            keys.insert(channel, Arc::new(key));
        }
        saver
    }

    /// The channels as of the last `ready` and membership pushes.
    pub(crate) fn channels(&self) -> Vec<wire::ChannelInfo> {
        read_lock(&self.channels)
            .iter()
            .map(wire::ChannelInfo::from)
            .collect()
    }

    /// The server a member channel belongs to.
    pub(crate) fn server_of(&self, channel_id: &str) -> Option<Arc<str>> {
        read_lock(&self.channels)
            .iter()
            .find(|c| c.id == channel_id)
            .map(|c| Arc::clone(&c.server))
    }

    /// The key of a channel, or [`ClientError::NoChannelKey`].
    pub(crate) fn key(&self, channel_id: &str) -> Result<Arc<ChannelKey>, ClientError> {
        read_lock(&self.keys)
            .get(channel_id)
            .cloned()
            .ok_or_else(|| ClientError::NoChannelKey {
                channel_id: channel_id.to_owned(),
            })
    }

    /// The plaintext of a relayed message, and the key that opened it (its
    /// sidecar, if any, opens with the same); `None` (with a rate-limited
    /// warning) when there is no key or it does not decrypt.
    pub(crate) fn open_content(
        &self,
        id: &str,
        channel_id: &str,
        sealed: &str,
    ) -> Option<(String, Arc<ChannelKey>)> {
        let Ok(key) = self.key(channel_id) else {
            if let Some(swallowed) = self.no_key.allow() {
                tracing::warn!(channel = %channel_id, swallowed, "dropping a message: no key for its channel");
            }
            return None;
        };
        let content = key
            .open(sealed, channel_id.as_bytes())
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok());
        if content.is_none() {
            if let Some(swallowed) = self.undecryptable.allow() {
                tracing::warn!(message = %id, swallowed, "dropping a message whose content does not decrypt");
            }
        }
        Some((content?, key))
    }

    /// A new session's `ready`: the full membership list. Keys of channels
    /// no longer listed are forgotten.
    pub(crate) fn on_ready(&self, mut channels: Vec<wire::ChannelInfo>) {
        let listed = channels.len();
        channels.retain(|c| unkept(c).is_none());
        channels.truncate(MAX_CHANNELS);
        if channels.len() < listed {
            self.refuse_channels(listed - channels.len(), "past the cap or too long");
        }
        let gone: Vec<String> = read_lock(&self.keys)
            .keys()
            .filter(|id| !channels.iter().any(|c| &c.id == *id))
            .cloned()
            .collect();
        write(
            &self.channels,
            channels.into_iter().map(Joined::from).collect(),
        );
        self.evict(&gone);
        self.readies.send_modify(|n| *n += 1);
    }

    /// Waits until a `ready` has been applied, at most `timeout`; `false`
    /// when none was within it (a service that sends no `ready` leaves the
    /// channel list empty until it does).
    pub(crate) async fn wait_ready(&self, timeout: std::time::Duration) -> bool {
        let mut readies = self.readies.subscribe();
        tokio::time::timeout(timeout, readies.wait_for(|n| *n > 0))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// Op 34: the bot was added to a channel.
    pub(crate) fn on_added(&self, channel: wire::ChannelInfo) {
        if let Some(why) = unkept(&channel) {
            self.refuse_channels(1, why);
            return;
        }
        let mut channels = write_lock(&self.channels);
        let full = channels.len() >= MAX_CHANNELS;
        match channels.iter_mut().find(|c| c.id == channel.id) {
            Some(known) => *known = Joined::from(channel),
            None if full => {
                drop(channels);
                self.refuse_channels(1, "past the cap of 10000 channels");
            }
            None => channels.push(Joined::from(channel)),
        }
    }

    /// Says, at most once per `WARN_INTERVAL`, that channels the service
    /// listed were not kept (their ids and names are the service's text,
    /// and stay out of the log).
    #[cold]
    fn refuse_channels(&self, count: usize, why: &'static str) {
        if let Some(swallowed) = self.channel_refused.allow() {
            tracing::warn!(count, why, swallowed, "channels from the service not kept");
        }
    }

    /// Op 35: the bot was removed from a channel; its key goes too.
    pub(crate) fn on_removed(&self, channel_id: &str) {
        write_lock(&self.channels).retain(|c| c.id != channel_id);
        self.evict(&[channel_id.to_owned()]);
    }

    fn is_member(&self, channel_id: &str) -> bool {
        read_lock(&self.channels).iter().any(|c| c.id == channel_id)
    }

    /// Op 50: unwraps a channel key pushed to us and keeps it in memory and
    /// on disk, if the channel is one we are a member of.
    pub(crate) fn on_channel_key(&self, push: &wire::ChannelKeyPush) {
        if !self.is_member(&push.channel_id) {
            if let Some(swallowed) = self.key_refused.allow() {
                tracing::warn!(
                    channel = %push.channel_id,
                    swallowed,
                    "refusing a channel key for a channel the bot is not a member of"
                );
            }
            return;
        }
        let wrapped: WrappedKey = match serde_json::from_str(push.wrapped.get()) {
            Ok(w) => w,
            Err(_) => {
                tracing::warn!(channel = %push.channel_id, "ignoring a malformed wrapped channel key");
                return;
            }
        };
        let Some(keystore) = self.keystore.get() else {
            return;
        };
        let key = match keystore
            .identity()
            .unwrap_channel_key(&wrapped, &push.channel_id)
        {
            Ok(key) => key,
            Err(_) => {
                tracing::warn!(channel = %push.channel_id, "ignoring a channel key that does not unwrap");
                return;
            }
        };
        // The keystore's cap on keys bounds memory too: a key it refuses is
        // not kept anywhere (the error names the cap).
        if let Err(e) = keystore.insert(push.channel_id.clone(), key.clone()) {
            tracing::warn!(channel = %push.channel_id, error = %e, "refusing a channel key");
            return;
        }
        write_lock(&self.keys).insert(push.channel_id.clone(), Arc::new(key));
    }

    /// Forgets the keys of channels the bot is no longer in, in memory and
    /// in the keystore.
    fn evict(&self, channel_ids: &[String]) {
        if channel_ids.is_empty() {
            return;
        }
        {
            let mut keys = write_lock(&self.keys);
            for id in channel_ids {
                keys.remove(id);
            }
        }
        let Some(keystore) = self.keystore.get() else {
            return;
        };
        // Removals are written by the keystore's saver, coalesced and off
        // the runtime's workers.
        let removed = channel_ids.iter().filter(|id| keystore.remove(id)).count();
        if removed > 0 {
            tracing::debug!(count = removed, "channel keys evicted");
        }
    }
}
