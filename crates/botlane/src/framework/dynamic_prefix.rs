//! A dynamic prefix (poise's `dynamic_prefix`): the application names,
//! per message, the main prefix of the channel it arrived in, replacing
//! the client's; see [`ClientOptions::dynamic_prefix`](crate::ClientOptions::dynamic_prefix).
//!
//! Synchronous, unlike poise's: it runs on the dispatch path, once per
//! message from someone else, so it must answer from memory. What it
//! returns that no prefix may be (and a panic) leaves the client's main
//! prefix in place, counted and logged at most once per interval: a
//! broken closure must neither take down the connection task nor flood
//! the log at one line per message.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::commands::text::prefixes::{prefix_rule, Prefixes};
use crate::throttle::Throttle;

/// What a [dynamic prefix](crate::ClientOptions::dynamic_prefix) is told
/// about one message, to choose that message's main prefix: where it was
/// posted and by whom. Never its content.
///
/// ```
/// use botlane::framework::PrefixRequest;
/// let request = PrefixRequest::new("c1", "u1", Some("s1"));
/// assert_eq!((request.channel_id(), request.author_id()), ("c1", "u1"));
/// assert_eq!(request.server_id(), Some("s1"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PrefixRequest<'a> {
    channel_id: &'a str,
    author_id: &'a str,
    server_id: Option<&'a str>,
}

impl<'a> PrefixRequest<'a> {
    /// A request for a message by `author_id` in `channel_id`, of the
    /// server `server_id` when the client knows it: what dispatch builds,
    /// and what a test of the closure builds by hand.
    pub fn new(channel_id: &'a str, author_id: &'a str, server_id: Option<&'a str>) -> Self {
        Self {
            channel_id,
            author_id,
            server_id,
        }
    }

    /// The channel the message was posted in.
    pub fn channel_id(&self) -> &'a str {
        self.channel_id
    }

    /// Its author's user (or bot) id.
    pub fn author_id(&self) -> &'a str {
        self.author_id
    }

    /// The server of the channel, when the client knows it (it does for
    /// every channel it is a member of).
    pub fn server_id(&self) -> Option<&'a str> {
        self.server_id
    }
}

/// The closure of a dynamic prefix.
type PrefixFn = dyn Fn(&PrefixRequest<'_>) -> Option<String> + Send + Sync;

/// A dynamic prefix as the options hold it: shared, and shown in `Debug`
/// only as set.
#[derive(Clone)]
pub(crate) struct DynamicPrefix(Arc<PrefixFn>);

impl DynamicPrefix {
    pub(crate) fn new<F>(f: F) -> Self
    where
        F: Fn(&PrefixRequest<'_>) -> Option<String> + Send + Sync + 'static,
    {
        Self(Arc::new(f))
    }
}

// `ClientOptions` stays unwind-safe, as it was before it could hold a
// closure: the closure is never called through the options, only by
// dispatch under `catch_unwind`, which treats a panic as no answer; what
// a panic may leave half-updated is the application's own state, which it
// reads through its own handles, not through the options.
impl std::panic::UnwindSafe for DynamicPrefix {}
impl std::panic::RefUnwindSafe for DynamicPrefix {}

impl fmt::Debug for DynamicPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DynamicPrefix(..)")
    }
}

/// A client's dynamic prefix at work: the closure, and how often what it
/// gave was not used.
#[derive(Debug)]
pub(crate) struct PrefixChooser {
    choose: DynamicPrefix,
    refused: AtomicU64,
    pub(crate) warning: Throttle,
}

impl PrefixChooser {
    pub(crate) fn new(choose: DynamicPrefix) -> Self {
        Self {
            choose,
            refused: AtomicU64::new(0),
            warning: Throttle::new("the dynamic prefix was not used"),
        }
    }

    /// The prefixes a message described by `request` is read with: the
    /// `client`'s with the main one the closure chose; `None` for the
    /// client's own (the closure chose none, or its own main one, or
    /// something no prefix may be, or it panicked).
    pub(crate) fn prefixes_for(
        &self,
        request: &PrefixRequest<'_>,
        client: &Prefixes,
    ) -> Option<Prefixes> {
        // The closure is the application's; a panic in it leaves nothing
        // of ours half-updated.
        let chosen = std::panic::catch_unwind(AssertUnwindSafe(|| (self.choose.0)(request)));
        match chosen {
            Ok(None) => None,
            Ok(Some(main)) if main == client.main() => None,
            Ok(Some(main)) => match prefix_rule(&main) {
                None => Some(client.replacing_main(main)),
                Some(rule) => {
                    self.refuse(request, &format!("it returned a prefix that {rule}"));
                    None
                }
            },
            Err(_) => {
                self.refuse(request, "it panicked");
                None
            }
        }
    }

    /// How many messages were read with the client's main prefix because
    /// the closure's answer could not be used.
    pub(crate) fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Counts a refusal and says so at most once per interval: the
    /// application's bug, which only the log and the stats can point at.
    /// Neither the prefix (it may be anything) nor a panic's text (it may
    /// quote someone) is logged.
    #[cold]
    fn refuse(&self, request: &PrefixRequest<'_>, why: &str) {
        self.refused.fetch_add(1, Ordering::Relaxed);
        if let Some(swallowed) = self.warning.allow() {
            tracing::warn!(
                channel_id = request.channel_id,
                swallowed,
                "the dynamic prefix was not used, {why}: the message is read with \
                 the client's command_prefix"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chooser(
        f: impl Fn(&PrefixRequest<'_>) -> Option<String> + Send + Sync + 'static,
    ) -> PrefixChooser {
        PrefixChooser::new(DynamicPrefix::new(f))
    }

    fn mains(chooser: &PrefixChooser, channel: &str, client: &Prefixes) -> Option<String> {
        let request = PrefixRequest::new(channel, "u1", None);
        chooser
            .prefixes_for(&request, client)
            .map(|p| p.main().to_owned())
    }

    #[tokio::test]
    async fn what_no_prefix_may_be_and_a_panic_leave_the_client_s_prefix_counted() {
        let client = Prefixes::new("!", &["?"]);
        let chooser = chooser(|request| match request.channel_id() {
            "ok" => Some("$".to_owned()),
            "same" => Some("!".to_owned()),
            "blank" => Some(String::new()),
            "space" => Some("a b".to_owned()),
            "long" => Some("x".repeat(33)),
            "panic" => panic!("the application's bug"),
            _ => None,
        });
        assert_eq!(mains(&chooser, "ok", &client).as_deref(), Some("$"));
        assert_eq!(mains(&chooser, "none", &client), None);
        // The client's own main prefix costs no set of its own.
        assert_eq!(mains(&chooser, "same", &client), None);
        assert_eq!(chooser.refused(), 0);
        for channel in ["blank", "space", "long", "panic"] {
            assert_eq!(mains(&chooser, channel, &client), None, "{channel}");
        }
        assert_eq!(chooser.refused(), 4);
    }

    #[test]
    fn the_options_show_a_dynamic_prefix_as_set_only() {
        let shown = format!(
            "{:?}",
            DynamicPrefix::new(|_| Some("secret-ish".to_owned()))
        );
        assert_eq!(shown, "DynamicPrefix(..)");
    }
}
