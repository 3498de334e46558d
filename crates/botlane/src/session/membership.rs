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

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::crypto::{ChannelKey, WrappedKey};
use crate::error::ClientError;
use crate::keystore::{Saver, MAX_CHANNEL_ID_BYTES};
use crate::sync::{lock, lock_then, Locked};
use crate::throttle::Throttle;
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
    /// Where the channel stands in the list `channels()` returns: the
    /// order the service listed or added it in.
    order: u64,
    server: Arc<str>,
    name: String,
}

/// What is known of a channel, under its id in [`Channels`]: whether the
/// bot is in it, and its key. One entry for both, so that a message looks
/// its channel up once.
#[derive(Debug, Default)]
struct Channel {
    /// `None` for a key the keystore held for a channel no `ready` has
    /// listed yet.
    joined: Option<Joined>,
    key: Option<Arc<ChannelKey>>,
}

/// The channels by id. Every message, key push and membership push looks
/// a channel up: with a list, a bot in 10,000 channels compared ids 10,000
/// times per invocation (`docs/benchmarks.md`, stage 9). The hasher stays
/// std's keyed SipHash: the ids are the service's, which may be hostile.
#[derive(Debug, Default)]
struct Channels {
    by_id: HashMap<String, Channel>,
    /// How many entries are channels the bot is in (the cap counts these).
    members: usize,
    next: u64,
}

impl Channels {
    /// The key of channel `id` and its server, if the bot is in it; `None`
    /// without a key.
    fn opener(&self, id: &str) -> Option<(Arc<ChannelKey>, Option<Arc<str>>)> {
        let channel = self.by_id.get(id)?;
        let server = channel.joined.as_ref().map(|j| Arc::clone(&j.server));
        Some((channel.key.clone()?, server))
    }

    /// Adds `channel`, or updates it in place (keeping its order) when its
    /// id is known; `false` when it is new and the list is at its cap.
    fn upsert(&mut self, channel: wire::ChannelInfo) -> bool {
        let known = self.by_id.get_mut(&channel.id);
        if let Some(Joined { server, name, .. }) = known.and_then(|c| c.joined.as_mut()) {
            *server = channel.server_id.into();
            *name = channel.name;
            return true;
        }
        if self.members >= MAX_CHANNELS {
            return false;
        }
        let joined = Joined {
            order: self.next,
            server: channel.server_id.into(),
            name: channel.name,
        };
        self.next += 1;
        self.members += 1;
        self.by_id.entry(channel.id).or_default().joined = Some(joined);
        true
    }

    /// The channel `id` if the bot is in it.
    fn member(&self, id: &str) -> Option<&Joined> {
        self.by_id.get(id).and_then(|c| c.joined.as_ref())
    }

    /// The list, in the order the channels were listed or added.
    fn list(&self) -> Vec<wire::ChannelInfo> {
        let mut list: Vec<(u64, wire::ChannelInfo)> = self
            .by_id
            .iter()
            .filter_map(|(id, channel)| {
                let joined = channel.joined.as_ref()?;
                let info = wire::ChannelInfo::new(
                    id.clone(),
                    joined.server.to_string(),
                    joined.name.clone(),
                );
                Some((joined.order, info))
            })
            .collect();
        list.sort_unstable_by_key(|(order, _)| *order);
        list.into_iter().map(|(_, info)| info).collect()
    }
}

/// A relayed message opened: its plaintext (in the caller's buffer), the
/// key that opened it (its sidecar, if any, opens with the same) and its
/// channel's server, if the bot is in that channel.
pub(crate) struct Opened<'b> {
    pub(crate) content: &'b str,
    /// Kept for the next message on this thread when this is let go
    /// ([`LAST_OPENED`]); `None` only once it has been.
    last: Option<Box<LastOpened>>,
}

impl Opened<'_> {
    fn last(&self) -> &LastOpened {
        self.last
            .as_ref()
            .expect("an opened message holds what opened it until it is let go")
    }

    /// The key that opened the message.
    pub(crate) fn key(&self) -> &ChannelKey {
        &self.last().key
    }

    /// The server of the message's channel, if the bot is in it.
    pub(crate) fn server(&self) -> Option<&Arc<str>> {
        self.last().server.as_ref()
    }
}

impl Drop for Opened<'_> {
    fn drop(&mut self) {
        LAST_OPENED.set(self.last.take());
    }
}

thread_local! {
    /// The channel this thread last opened a message of, and what opens
    /// it: the next message of the same channel (the common case) takes
    /// no lock, hashes no id and clones no key while its membership has
    /// not changed since ([`Membership::generation`]). Taken while in use
    /// (until the [`Opened`] is let go), so that an opening while another
    /// is in use on the thread finds none rather than a borrowed one. It
    /// holds one key (zeroed on drop) until the thread opens a message of
    /// another channel or ends, even once that key is evicted: never used
    /// again, as the generation has moved on.
    static LAST_OPENED: Cell<Option<Box<LastOpened>>> = const { Cell::new(None) };
}

/// What [`LAST_OPENED`] keeps.
struct LastOpened {
    /// Whose ([`Membership::id`]) and which of its states.
    membership: u64,
    generation: u64,
    channel_id: String,
    key: Arc<ChannelKey>,
    server: Option<Arc<str>>,
}

/// The ids of memberships, one per client of the process.
static MEMBERSHIPS: AtomicU64 = AtomicU64::new(0);

/// The bot's channels and the keys it holds for them.
#[derive(Debug)]
pub(crate) struct Membership {
    channels: Mutex<Channels>,
    /// This membership among the process's ([`MEMBERSHIPS`]).
    id: u64,
    /// Moves on at each change of the channels ([`Membership::changing`]).
    generation: AtomicU64,
    /// Opened by the first login; kept by a failed one for the retry.
    keystore: OnceLock<Saver>,
    key_refused: Throttle,
    channel_refused: Throttle,
    no_key: Throttle,
    undecryptable: Throttle,
    /// Messages dropped because their channel had no key.
    without_key: AtomicU64,
}

impl Membership {
    pub(crate) fn new() -> Self {
        Self {
            channels: Mutex::new(Channels::default()),
            id: MEMBERSHIPS.fetch_add(1, Ordering::Relaxed),
            generation: AtomicU64::new(0),
            keystore: OnceLock::new(),
            key_refused: Throttle::new(
                "refusing a channel key for a channel the bot is not a member of",
            ),
            channel_refused: Throttle::new("channels from the service not kept"),
            no_key: Throttle::new("dropping a message: no key for its channel"),
            undecryptable: Throttle::new("dropping a message whose content does not decrypt"),
            without_key: AtomicU64::new(0),
        }
    }

    /// Its rate-limited warnings, for the client's stats and its line at
    /// shutdown.
    pub(crate) fn throttles(&self) -> [&Throttle; 4] {
        [
            &self.key_refused,
            &self.channel_refused,
            &self.no_key,
            &self.undecryptable,
        ]
    }

    /// How many messages were dropped because their channel had no key.
    pub(crate) fn messages_without_key(&self) -> u64 {
        self.without_key.load(Ordering::Relaxed)
    }

    /// The keystore, once a login opened it.
    pub(crate) fn keystore(&self) -> Option<&Saver> {
        self.keystore.get()
    }

    /// Keeps the keystore opened by the first login and loads its keys.
    pub(crate) fn use_keystore(&self, saver: Saver) -> &Saver {
        let saver = self.keystore.get_or_init(|| saver);
        let mut channels = self.changing();
        for (channel, key) in saver.channel_keys() {
            channels.by_id.entry(channel).or_default().key = Some(Arc::new(key));
        }
        saver
    }

    /// The channels as of the last `ready` and membership pushes.
    pub(crate) fn channels(&self) -> Vec<wire::ChannelInfo> {
        lock(&self.channels).list()
    }

    /// The key of a channel, or [`ClientError::NoChannelKey`].
    pub(crate) fn key(&self, channel_id: &str) -> Result<Arc<ChannelKey>, ClientError> {
        lock(&self.channels)
            .by_id
            .get(channel_id)
            .and_then(|c| c.key.clone())
            .ok_or_else(|| ClientError::NoChannelKey {
                channel_id: channel_id.to_owned(),
            })
    }

    /// The channels, locked to be changed: when let go (the lock still
    /// held), the generation moves on, so that no thread opens a message
    /// with what it found before.
    fn changing(&self) -> Locked<'_, Channels, impl FnMut(&Channels) + '_> {
        lock_then(&self.channels, |_: &Channels| {
            self.generation.fetch_add(1, Ordering::Release);
        })
    }

    /// A relayed message opened into `buf`, its channel looked up once (or
    /// not at all, when it is the last message's on this thread:
    /// [`LAST_OPENED`]); `None` (with a rate-limited warning) when there is
    /// no key or it does not decrypt.
    pub(crate) fn open_content<'b>(
        &self,
        id: &str,
        channel_id: &str,
        sealed: &str,
        buf: &'b mut Vec<u8>,
    ) -> Option<Opened<'b>> {
        let mut last = LAST_OPENED.take();
        let generation = self.generation.load(Ordering::Acquire);
        let known = last.as_ref().is_some_and(|last| {
            last.membership == self.id
                && last.generation == generation
                && last.channel_id == channel_id
        });
        if !known && !self.look_up(channel_id, &mut last) {
            LAST_OPENED.set(last);
            return None;
        }
        let last = last.expect("a channel known or just looked up");
        let content = last
            .key
            .open_into(sealed, channel_id.as_bytes(), buf)
            .ok()
            .and_then(|bytes| std::str::from_utf8(bytes).ok());
        let Some(content) = content else {
            LAST_OPENED.set(Some(last));
            if let Some(swallowed) = self.undecryptable.allow() {
                tracing::warn!(message = %id, swallowed, "dropping a message whose content does not decrypt");
            }
            return None;
        };
        Some(Opened {
            content,
            last: Some(last),
        })
    }

    /// Looks channel `channel_id` up, under the lock, into `last` (its
    /// box and strings reused); `false`, `last` left as it was, when the
    /// channel has no key.
    fn look_up(&self, channel_id: &str, last: &mut Option<Box<LastOpened>>) -> bool {
        let (found, generation) = {
            let channels = lock(&self.channels);
            // Read under the lock, which every change holds: the
            // generation of what was found.
            let generation = self.generation.load(Ordering::Acquire);
            (channels.opener(channel_id), generation)
        };
        let Some((key, server)) = found else {
            self.without_key.fetch_add(1, Ordering::Relaxed);
            if let Some(swallowed) = self.no_key.allow() {
                tracing::warn!(channel = %channel_id, swallowed, "dropping a message: no key for its channel");
            }
            return false;
        };
        match last {
            Some(last) => {
                // No allocation once it has held the longest id.
                last.channel_id.clear();
                last.channel_id.push_str(channel_id);
                (last.membership, last.generation) = (self.id, generation);
                (last.key, last.server) = (key, server);
            }
            None => {
                *last = Some(Box::new(LastOpened {
                    membership: self.id,
                    generation,
                    channel_id: channel_id.to_owned(),
                    key,
                    server,
                }));
            }
        }
        true
    }

    /// A new session's `ready`: the full membership list. Keys of channels
    /// no longer listed are forgotten.
    pub(crate) fn on_ready(&self, channels: Vec<wire::ChannelInfo>) {
        let mut kept = Channels::default();
        let mut refused = 0;
        for channel in channels {
            if unkept(&channel).is_some() || !kept.upsert(channel) {
                refused += 1;
            }
        }
        if refused > 0 {
            self.refuse_channels(refused, "past the cap or too long");
        }
        let mut gone = Vec::new();
        {
            let mut channels = self.changing();
            let old = std::mem::replace(&mut *channels, kept);
            for (id, channel) in old.by_id {
                let Some(key) = channel.key else { continue };
                match channels.by_id.get_mut(&id) {
                    Some(listed) => listed.key = Some(key),
                    None => gone.push(id),
                }
            }
        }
        self.forget(&gone);
    }

    /// Op 34: the bot was added to a channel.
    pub(crate) fn on_added(&self, channel: wire::ChannelInfo) {
        if let Some(why) = unkept(&channel) {
            self.refuse_channels(1, why);
            return;
        }
        let added = self.changing().upsert(channel);
        if !added {
            self.refuse_channels(1, "past the cap of 10000 channels");
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
        {
            let mut channels = self.changing();
            let removed = channels.by_id.remove(channel_id);
            if removed.is_some_and(|c| c.joined.is_some()) {
                channels.members -= 1;
            }
        }
        self.forget(&[channel_id.to_owned()]);
    }

    fn is_member(&self, channel_id: &str) -> bool {
        lock(&self.channels).member(channel_id).is_some()
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
        // Still a member: membership pushes are applied by dispatch, as
        // this one is, one at a time.
        if let Some(channel) = self.changing().by_id.get_mut(&push.channel_id) {
            channel.key = Some(Arc::new(key));
        }
    }

    /// Forgets the keys of channels the bot is no longer in in the
    /// keystore (they are gone from memory with their channels).
    fn forget(&self, channel_ids: &[String]) {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn info(id: &str, name: &str) -> wire::ChannelInfo {
        wire::ChannelInfo::new(id, "s", name)
    }

    fn ids(membership: &Membership) -> Vec<(String, String)> {
        membership
            .channels()
            .into_iter()
            .map(|c| (c.id, c.name))
            .collect()
    }

    #[test]
    fn the_list_keeps_the_order_channels_came_in_and_renames_in_place() {
        let membership = Membership::new();
        membership.on_ready(vec![info("b", "1"), info("a", "2"), info("b", "3")]);
        // A ready that lists a channel twice keeps its first place, last name.
        assert_eq!(
            ids(&membership),
            [("b".into(), "3".into()), ("a".into(), "2".into())]
        );
        membership.on_added(info("c", "4"));
        membership.on_added(info("a", "renamed"));
        membership.on_removed("b");
        assert_eq!(
            ids(&membership),
            [("a".into(), "renamed".into()), ("c".into(), "4".into())]
        );
        assert!(membership.is_member("a") && !membership.is_member("b"));
        // A new ready replaces the list.
        membership.on_ready(vec![info("z", "5")]);
        assert_eq!(ids(&membership), [("z".into(), "5".into())]);
    }

    #[test]
    fn a_key_is_kept_with_its_channel_and_goes_with_it() {
        let membership = Membership::new();
        let key = ChannelKey::from_bytes([7; 32]);
        let sealed = key.seal(b"hi", b"a").unwrap();
        // As the keystore loads them: before any `ready` lists the channel.
        for id in ["a", "b"] {
            let mut channels = lock(&membership.channels);
            channels.by_id.entry(id.into()).or_default().key = Some(Arc::new(key.clone()));
        }
        assert!(!membership.is_member("a"));
        membership.on_ready(vec![wire::ChannelInfo::new("a", "s", "n")]);
        let mut buf = Vec::new();
        let opened = membership
            .open_content("m", "a", &sealed, &mut buf)
            .unwrap();
        assert_eq!(opened.content, "hi");
        assert_eq!(opened.server().map(|s| &**s), Some("s"));
        drop(opened);
        assert!(
            membership.key("b").is_err(),
            "unlisted by the ready: evicted"
        );
        // What the last message found is forgotten at each change: a new
        // server, a new key.
        membership.on_added(wire::ChannelInfo::new("a", "s2", "n"));
        let opened = membership
            .open_content("m", "a", &sealed, &mut buf)
            .unwrap();
        assert_eq!(opened.server().map(|s| &**s), Some("s2"));
        drop(opened);
        let other = Arc::new(ChannelKey::from_bytes([8; 32]));
        membership.changing().by_id.get_mut("a").unwrap().key = Some(other.clone());
        assert!(membership
            .open_content("m", "a", &sealed, &mut buf)
            .is_none());
        let resealed = other.seal(b"again", b"a").unwrap();
        let opened = membership
            .open_content("m", "a", &resealed, &mut buf)
            .unwrap();
        assert_eq!(opened.content, "again");
        drop(opened);
        // Another client's membership on this thread, its channel of the
        // same id keyless: what the first found is not its.
        let stranger = Membership::new();
        stranger.on_ready(vec![wire::ChannelInfo::new("a", "s", "n")]);
        assert!(stranger
            .open_content("m", "a", &resealed, &mut buf)
            .is_none());
        assert_eq!(stranger.messages_without_key(), 1);
        membership.on_removed("a");
        assert!(membership
            .open_content("m", "a", &resealed, &mut buf)
            .is_none());
        assert_eq!(
            membership.messages_without_key(),
            1,
            "the key went with the channel"
        );
        membership.on_added(info("a", "n"));
        assert!(membership.key("a").is_err(), "a channel back has no key");
        assert_eq!(lock(&membership.channels).members, 1);
    }

    #[test]
    fn the_cap_counts_distinct_channels_and_a_known_one_is_still_updated() {
        let membership = Membership::new();
        let mut listed: Vec<_> = (0..MAX_CHANNELS)
            .map(|i| info(&format!("c{i}"), "n"))
            .collect();
        listed.push(info("c0", "again"));
        listed.push(info("over", "n"));
        membership.on_ready(listed);
        let channels = membership.channels();
        assert_eq!(channels.len(), MAX_CHANNELS);
        assert_eq!(
            (channels[0].id.as_str(), channels[0].name.as_str()),
            ("c0", "again")
        );
        assert!(!membership.is_member("over"));
        membership.on_added(info("late", "n"));
        assert!(!membership.is_member("late"));
        membership.on_added(info("c1", "renamed"));
        assert_eq!(membership.channels()[1].name, "renamed");
    }
}
