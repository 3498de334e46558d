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

use std::sync::{Arc, PoisonError};

use super::Shared;
use crate::crypto::WrappedKey;
use crate::wire;

/// A new session's `ready`: the full membership list. Keys of channels no
/// longer listed are forgotten.
pub(super) fn on_ready(shared: &Shared, ready: wire::Ready) {
    let gone: Vec<String> = {
        let keys = shared.keys.read().unwrap_or_else(PoisonError::into_inner);
        keys.keys()
            .filter(|id| !ready.channels.iter().any(|c| &c.id == *id))
            .cloned()
            .collect()
    };
    super::write(&shared.channels, ready.channels);
    evict(shared, &gone);
}

/// Op 34: the bot was added to a channel.
pub(super) fn on_added(shared: &Shared, channel: wire::ChannelInfo) {
    let mut channels = shared
        .channels
        .write()
        .unwrap_or_else(PoisonError::into_inner);
    match channels.iter_mut().find(|c| c.id == channel.id) {
        Some(known) => *known = channel,
        None => channels.push(channel),
    }
}

/// Op 35: the bot was removed from a channel; its key goes too.
pub(super) fn on_removed(shared: &Shared, channel_id: &str) {
    shared
        .channels
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .retain(|c| c.id != channel_id);
    evict(shared, &[channel_id.to_owned()]);
}

fn is_member(shared: &Shared, channel_id: &str) -> bool {
    shared
        .channels
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .any(|c| c.id == channel_id)
}

/// Op 50: unwraps a channel key pushed to us and keeps it in memory and on
/// disk, if the channel is one we are a member of.
pub(super) fn on_channel_key(shared: &Shared, push: &wire::ChannelKeyPush) {
    if !is_member(shared, &push.channel_id) {
        if let Some(swallowed) = shared.warnings.key_refused.allow() {
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
    let Some(keystore) = shared.keystore.get() else {
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
    // The keystore's cap on keys bounds memory too: a key it refuses is not
    // kept anywhere (the error names the cap).
    if let Err(e) = keystore.insert(push.channel_id.clone(), key.clone()) {
        tracing::warn!(channel = %push.channel_id, error = %e, "refusing a channel key");
        return;
    }
    shared
        .keys
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(push.channel_id.clone(), Arc::new(key));
}

/// Forgets the keys of channels the bot is no longer in, in memory and in
/// the keystore.
fn evict(shared: &Shared, channel_ids: &[String]) {
    if channel_ids.is_empty() {
        return;
    }
    {
        let mut keys = shared.keys.write().unwrap_or_else(PoisonError::into_inner);
        for id in channel_ids {
            keys.remove(id);
        }
    }
    let Some(keystore) = shared.keystore.get() else {
        return;
    };
    // Removals are written by the keystore's saver, coalesced and off the
    // runtime's workers.
    let removed = channel_ids.iter().filter(|id| keystore.remove(id)).count();
    if removed > 0 {
        tracing::debug!(count = removed, "channel keys evicted");
    }
}
