//! What a handler is given: the invocation, the message, and typed getters.

mod getters;
mod invoked;
pub(crate) mod view;

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use crate::commands::text::prefixes::{PrefixSet, Prefixes};
use crate::commands::types::{CommandArgs, CommandInvocation, CommandSource};
use crate::error::ClientError;
use crate::message::Message;
use crate::rest::RestLane;

pub(crate) use invoked::invoked_name;
pub(crate) use view::RegistryView;

/// What a [`CommandHandler`](crate::CommandHandler) is given: the recognised
/// invocation and the message that carried it.
///
/// The args are already coerced to the declared option types on both lanes,
/// so a handler can usually `match` on [`get`](Self::get). The typed getters
/// are forgiving readers on top of that, by the spec's rules:
///
/// | getter | gives a value for | `None` for |
/// |---|---|---|
/// | [`get_string`](Self::get_string) | any present value, stringified | an unfilled option |
/// | [`get_integer`](Self::get_integer) | an integer; an integral number within ±(2^53 − 1); a string that reads as an integer | unfilled, boolean, anything else |
/// | [`get_number`](Self::get_number) | an integer; a finite number; a string that reads as a number | unfilled, boolean, non-finite, anything else |
/// | [`get_boolean`](Self::get_boolean) | a boolean; otherwise a value whose text is `true`/`yes`/`1` or `false`/`no`/`0` (any ASCII case) | unfilled, anything else |
///
/// Strings are read by the same coercion table as the text lane, so a
/// handler reads `"42"` from a string option the way the text lane would
/// read it for an integer option.
///
/// For typed access that fails with a message for the user instead of
/// `None`, use [`require`](Self::require), [`optional`](Self::optional) and
/// [`args_as`](Self::args_as).
///
/// Besides the invocation and the message, a context carries what dispatch
/// knows about where it runs: the text-lane prefixes (the main one for usage
/// lines, the others for reading the invoked name back), the
/// server of the invoking channel (for checks and cooldowns), and a snapshot
/// of the registry (for help and usage lines). A context built by hand has
/// none of them until given with the `with_*` methods.
///
/// `D` is the client's shared state, `()` unless the client was built with
/// [`Client::with_data`](crate::Client::with_data): every handler reads it
/// through [`data`](Self::data), typed, without cloning an `Arc` by hand.
pub struct CommandContext<D = ()> {
    // Shared, so that dispatch keeps them for a failure report without
    // copying every invocation's strings. A context dispatch builds keeps
    // its invocation only as its message's `command` (`None` here): one
    // copy, not two; one built by hand keeps the invocation it was given.
    invocation: Option<Arc<CommandInvocation>>,
    message: Arc<Message>,
    /// The message's own prefixes (a dynamic prefix's, or given by hand),
    /// over those of `around`.
    prefixes: Option<Arc<Prefixes>>,
    server_id: Option<Arc<str>>,
    around: Arc<Surroundings<D>>,
}

impl<D> Clone for CommandContext<D> {
    fn clone(&self) -> Self {
        Self {
            invocation: self.invocation.clone(),
            message: self.message.clone(),
            prefixes: self.prefixes.clone(),
            server_id: self.server_id.clone(),
            around: Arc::clone(&self.around),
        }
    }
}

/// What every context dispatched from one registry snapshot shares, in
/// one `Arc`: the client's shared state, its prefixes and the registry.
/// One count taken and let go per invocation where each part was one
/// (`docs/benchmarks.md`, stage 11).
pub(crate) struct Surroundings<D> {
    data: Arc<D>,
    prefixes: Option<Arc<Prefixes>>,
    registry: Option<Arc<dyn RegistryView>>,
}

impl<D> Surroundings<D> {
    /// The surroundings of contexts dispatched from `registry`, by a
    /// client with `data` and `prefixes`.
    pub(crate) fn new(
        data: Arc<D>,
        prefixes: Arc<Prefixes>,
        registry: Arc<dyn RegistryView>,
    ) -> Self {
        Self {
            data,
            prefixes: Some(prefixes),
            registry: Some(registry),
        }
    }

    /// Whether these are the surroundings of contexts dispatched from
    /// `registry`.
    pub(crate) fn of<R: RegistryView>(&self, registry: &Arc<R>) -> bool {
        self.registry
            .as_ref()
            .is_some_and(|own| std::ptr::addr_eq(Arc::as_ptr(own), Arc::as_ptr(registry)))
    }
}

impl<D> Clone for Surroundings<D> {
    fn clone(&self) -> Self {
        Self {
            data: Arc::clone(&self.data),
            prefixes: self.prefixes.clone(),
            registry: self.registry.clone(),
        }
    }
}

impl<D> fmt::Debug for CommandContext<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandContext")
            .field("invocation", self.invocation())
            .field("message", &self.message)
            .field("prefix", &self.prefix())
            .field("additional_prefixes", &self.prefix_set().additional)
            .field("server_id", &self.server_id)
            .field("registry", &self.view().map(RegistryView::len))
            .finish_non_exhaustive()
    }
}

/// What dispatch keeps of a context to report a failure of its
/// invocation once the handler has consumed the context: the message,
/// which holds the invocation of a context dispatch built, and the
/// prefixes it was read with.
pub(crate) struct SharedParts {
    message: Arc<Message>,
    prefixes: Option<Arc<Prefixes>>,
}

impl SharedParts {
    /// The invocation, the message and its prefixes, borrowed: what a hook
    /// after the command copies its summary from.
    pub(crate) fn parts(&self) -> (&CommandInvocation, &Message, Option<&Arc<Prefixes>>) {
        (
            invocation_of(None, &self.message),
            &self.message,
            self.prefixes.as_ref(),
        )
    }

    /// The message, shared (with its invocation), once its invocation has
    /// ended: dispatch keeps it for the next one when nobody else holds it.
    pub(crate) fn into_message(self) -> Arc<Message> {
        self.message
    }

    /// The invocation and the message, copied only if someone else still
    /// holds them (the handler kept a clone of its context), and the
    /// prefixes.
    pub(crate) fn into_parts(self) -> (CommandInvocation, Message, Option<Arc<Prefixes>>) {
        let message = Arc::unwrap_or_clone(self.message);
        let invocation = invocation_of(None, &message).clone();
        (invocation, message, self.prefixes)
    }
}

/// A context's invocation: its own, else its message's `command`.
fn invocation_of<'a>(
    own: Option<&'a CommandInvocation>,
    message: &'a Message,
) -> &'a CommandInvocation {
    own.or(message.command.as_ref()).expect(
        "a context without its own invocation was built by `dispatched`, whose message holds \
         it, as `shared_parts` puts it in the message of one with its own, and the message \
         is never changed behind its `Arc`",
    )
}

impl CommandContext {
    /// A context built by hand, for unit-testing a handler without a client.
    ///
    /// The invocation and message are taken as given: nothing is coerced or
    /// checked against a registry, and `message.command` is left as it is
    /// (dispatch sets it to the invocation on live messages). For a handler
    /// that reads shared state, see [`for_test_with_data`](Self::for_test_with_data).
    ///
    /// ```
    /// use botlane::{CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
    ///
    /// let mut args = CommandArgs::new();
    /// args.insert("count".into(), 2_i64.into());
    /// let ctx = CommandContext::for_test(
    ///     CommandInvocation { name: "roll".into(), args, source: CommandSource::Text },
    ///     Message::new("m1", "c1", "u1", "/roll 2"),
    /// );
    /// assert_eq!(ctx.name(), "roll");
    /// assert_eq!(ctx.get_integer("count"), Some(2));
    /// assert_eq!(ctx.message().content, "/roll 2");
    /// ```
    pub fn for_test(invocation: CommandInvocation, message: Message) -> Self {
        Self::new(Some(invocation), message, Arc::new(()))
    }
}

impl<D> CommandContext<D> {
    /// A context that keeps `invocation` beside `message`, as given, or
    /// reads the message's `command` without one.
    fn new(invocation: Option<CommandInvocation>, message: Message, data: Arc<D>) -> Self {
        Self {
            invocation: invocation.map(Arc::new),
            message: Arc::new(message),
            prefixes: None,
            server_id: None,
            around: Arc::new(Surroundings {
                data,
                prefixes: None,
                registry: None,
            }),
        }
    }

    /// A context built by hand with shared state `data`, for unit-testing a
    /// handler of a client built with [`Client::with_data`](crate::Client::with_data);
    /// otherwise like [`for_test`](CommandContext::for_test).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use botlane::{CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
    ///
    /// #[derive(Default)]
    /// struct Stats {
    ///     rolls: AtomicU64,
    /// }
    ///
    /// let ctx = CommandContext::for_test_with_data(
    ///     CommandInvocation { name: "roll".into(), args: CommandArgs::new(), source: CommandSource::Text },
    ///     Message::new("m1", "c1", "u1", "/roll"),
    ///     Stats::default(),
    /// );
    /// ctx.data().rolls.fetch_add(1, Ordering::Relaxed);
    /// assert_eq!(ctx.data().rolls.load(Ordering::Relaxed), 1);
    /// ```
    pub fn for_test_with_data(invocation: CommandInvocation, message: Message, data: D) -> Self {
        Self::new(Some(invocation), message, Arc::new(data))
    }

    /// The client's shared state, as given to
    /// [`Client::with_data`](crate::Client::with_data) (`()` for a client
    /// built with [`Client::new`](crate::Client::new)). Every context of a
    /// client points to the same value; put interior mutability (an atomic,
    /// a `Mutex`) inside it to update it from handlers.
    pub fn data(&self) -> &D {
        &self.around.data
    }

    /// The context dispatch hands to a handler: its invocation is the
    /// message's `command` (which must be set), and is kept only there.
    pub(crate) fn dispatched(message: Arc<Message>, around: Arc<Surroundings<D>>) -> Self {
        debug_assert!(message.command.is_some(), "a dispatched message's command");
        Self {
            invocation: None,
            message,
            prefixes: None,
            server_id: None,
            around,
        }
    }

    /// The message (with the invocation) and the prefixes, shared: what
    /// dispatch keeps to report a failure after the handler consumed the
    /// context. The invocation travels in the message, as in a context
    /// [`dispatched`](Self::dispatched) built: no field of its own keeps
    /// every invocation's future the size it had before it carried the
    /// prefixes. A context built by hand gets a copy of its message for it.
    /// The prefixes are `None` when they are the `client`'s, which whoever
    /// reports the failure has: no count taken of them.
    pub(crate) fn shared_parts(&self, client: &Arc<Prefixes>) -> SharedParts {
        let message = match &self.invocation {
            None => Arc::clone(&self.message),
            Some(own) => {
                let mut message = Message::clone(&self.message);
                message.command = Some(CommandInvocation::clone(own));
                Arc::new(message)
            }
        };
        SharedParts {
            message,
            prefixes: self
                .shared_prefixes()
                .filter(|own| !Arc::ptr_eq(own, client))
                .cloned(),
        }
    }

    /// The prefixes: the message's own, else those of its surroundings.
    fn shared_prefixes(&self) -> Option<&Arc<Prefixes>> {
        self.prefixes.as_ref().or(self.around.prefixes.as_ref())
    }

    fn invocation(&self) -> &CommandInvocation {
        invocation_of(self.invocation.as_deref(), &self.message)
    }

    /// The shared state as an `Arc`, for a task that outlives the handler.
    pub fn data_arc(&self) -> Arc<D> {
        Arc::clone(&self.around.data)
    }

    /// Sets the text-lane prefix the client uses (builder style); usage
    /// lines are written with it.
    ///
    /// ```
    /// # use botlane::{CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
    /// # let invocation = CommandInvocation { name: "ping".into(), args: CommandArgs::new(), source: CommandSource::Text };
    /// let ctx = CommandContext::for_test(invocation, Message::new("m1", "c1", "u1", "!ping"));
    /// assert_eq!(ctx.prefix(), "/");
    /// assert_eq!(ctx.with_prefix("!").prefix(), "!");
    /// ```
    #[must_use]
    pub fn with_prefix(mut self, prefix: impl Into<Arc<str>>) -> Self {
        let prefix: Arc<str> = prefix.into();
        self.prefixes = Some(Arc::new(self.prefix_set().with_main(&prefix)));
        self
    }

    /// Sets the other text-lane prefixes the client reads (builder style),
    /// as [`ClientOptions::additional_prefixes`](crate::ClientOptions::additional_prefixes)
    /// gives them: [`invoked_name`](Self::invoked_name) reads the line
    /// under the one it uses, and the built-in help names them.
    ///
    /// ```
    /// # use botlane::{CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
    /// # let invocation = CommandInvocation { name: "roll".into(), args: CommandArgs::new(), source: CommandSource::Text };
    /// let ctx = CommandContext::for_test(invocation, Message::new("m1", "c1", "u1", "!!r 2"))
    ///     .with_prefix("!")
    ///     .with_additional_prefixes(["!!", "?"]);
    /// assert_eq!(ctx.prefixes().collect::<Vec<_>>(), ["!", "!!", "?"]);
    /// assert_eq!(ctx.invoked_name(), "r");
    /// ```
    #[must_use]
    pub fn with_additional_prefixes<I, S>(mut self, prefixes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.prefixes = Some(Arc::new(self.prefix_set().with_additional(prefixes)));
        self
    }

    /// Sets the message's own prefixes (a dynamic prefix's), over the
    /// client's.
    #[must_use]
    pub(crate) fn with_prefixes(mut self, prefixes: Arc<Prefixes>) -> Self {
        self.prefixes = Some(prefixes);
        self
    }

    /// Sets the id of the server the invoking channel belongs to (builder
    /// style), as the client knows it from its channel list.
    ///
    /// ```
    /// # use botlane::{CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
    /// # let invocation = CommandInvocation { name: "ping".into(), args: CommandArgs::new(), source: CommandSource::Text };
    /// let ctx = CommandContext::for_test(invocation, Message::new("m1", "c1", "u1", "/ping"));
    /// assert_eq!(ctx.server_id(), None);
    /// assert_eq!(ctx.with_server_id("s1").server_id(), Some("s1"));
    /// ```
    #[must_use]
    pub fn with_server_id(self, server_id: impl Into<String>) -> Self {
        self.with_server(Arc::from(server_id.into()))
    }

    /// [`with_server_id`](Self::with_server_id) with the id shared, as
    /// dispatch holds it per channel.
    #[must_use]
    pub(crate) fn with_server(mut self, server_id: Arc<str>) -> Self {
        self.server_id = Some(server_id);
        self
    }

    /// Sets the registry the invocation was dispatched from, as the view
    /// a context reads ([`with_registry`](Self::with_registry)).
    #[must_use]
    pub(crate) fn with_view(mut self, registry: Arc<dyn RegistryView>) -> Self {
        Arc::make_mut(&mut self.around).registry = Some(registry);
        self
    }

    /// The text-lane prefix: the main one of the invoking message, with
    /// which usage lines are written whichever prefix the line used (the
    /// client's [`command_prefix`](crate::ClientOptions::command_prefix),
    /// or the one its [dynamic prefix](crate::ClientOptions::dynamic_prefix)
    /// chose for the message, on either lane); the one given with
    /// [`with_prefix`](Self::with_prefix), else
    /// [`DEFAULT_COMMAND_PREFIX`](crate::DEFAULT_COMMAND_PREFIX).
    pub fn prefix(&self) -> &str {
        self.prefix_set().main
    }

    /// Every text-lane prefix the invoking message was read with:
    /// [`prefix`](Self::prefix) first, then the
    /// [`additional_prefixes`](crate::ClientOptions::additional_prefixes)
    /// in the order given. What a handler checks its own text against, so
    /// that no line it sends reads as a command
    /// ([`neutralise_answer_among`](crate::framework::neutralise_answer_among)).
    ///
    /// ```
    /// # use botlane::{CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
    /// # let invocation = CommandInvocation { name: "echo".into(), args: CommandArgs::new(), source: CommandSource::Text };
    /// let ctx = CommandContext::for_test(invocation, Message::new("m1", "c1", "u1", "?echo hi"))
    ///     .with_prefix("!")
    ///     .with_additional_prefixes(["?"]);
    /// assert_eq!(ctx.prefixes().collect::<Vec<_>>(), ["!", "?"]);
    /// let text = "?roll 2";
    /// assert!(ctx.prefixes().any(|prefix| text.starts_with(prefix)));
    /// ```
    pub fn prefixes(&self) -> impl Iterator<Item = &str> + Clone {
        self.prefix_set().all()
    }

    /// All the prefixes, borrowed.
    pub(crate) fn prefix_set(&self) -> PrefixSet<'_> {
        PrefixSet::of(self.shared_prefixes().map(|p| &**p))
    }

    /// The id of the server the invoking channel belongs to, when known.
    pub fn server_id(&self) -> Option<&str> {
        self.server_id.as_deref()
    }

    /// The registry the invocation was dispatched from, when given.
    pub(crate) fn view(&self) -> Option<&dyn RegistryView> {
        self.around.registry.as_deref()
    }

    /// The lower-case command name.
    pub fn name(&self) -> &str {
        &self.invocation().name
    }

    /// The name the command was invoked by, lower-cased: on the text lane
    /// the one the message's line names (under the longest of the
    /// [`prefixes`](Self::prefixes) it starts with, as
    /// [`match_command_name`](crate::match_command_name) reads it), which is
    /// one of the command's [`aliases`](crate::framework::CommandSettings::aliases)
    /// when the line used one (poise's `invoked_command_name`); otherwise,
    /// and on the structured lane (a sidecar names the command itself),
    /// [`name`](Self::name). Everything else keys on `name`. Read from the
    /// message when asked, so dispatch stores nothing for it; borrowed
    /// unless the line wrote the name with capitals.
    ///
    /// ```
    /// use botlane::{CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
    ///
    /// let ctx = |line: &str, source| CommandContext::for_test(
    ///     CommandInvocation { name: "roll".into(), args: CommandArgs::new(), source },
    ///     Message::new("m1", "c1", "u1", line),
    /// );
    /// let by_alias = ctx("  /R 2", CommandSource::Text);
    /// assert_eq!((by_alias.name(), by_alias.invoked_name().as_ref()), ("roll", "r"));
    /// assert_eq!(ctx("/roll 2", CommandSource::Text).invoked_name(), "roll");
    /// assert_eq!(ctx("!r 2", CommandSource::Text).with_prefix("!").invoked_name(), "r");
    /// // The structured lane has no aliases; its text line is not read.
    /// assert_eq!(ctx("/r 2", CommandSource::Structured).invoked_name(), "roll");
    /// ```
    pub fn invoked_name(&self) -> Cow<'_, str> {
        invoked_name(&self.message, self.source(), self.name(), self.prefix_set())
    }

    /// All arguments, coerced to the declared types; unfilled options are absent.
    pub fn args(&self) -> &CommandArgs {
        &self.invocation().args
    }

    /// The lane the invocation arrived on.
    pub fn source(&self) -> CommandSource {
        self.invocation().source
    }

    /// The invoking message.
    pub fn message(&self) -> &Message {
        &self.message
    }

    /// The REST lane of the client that received the invocation; see
    /// [`Message::rest`]. Fails when the client is gone.
    pub fn rest(&self) -> Result<RestLane, ClientError> {
        self.message.rest()
    }

    /// A true reply into the invoking channel, identical to
    /// [`Message::reply`]: the service notifies the invoking user, piercing
    /// mutes. Fire-and-forget: a denial arrives as
    /// [`Event::SendRejected`](crate::Event::SendRejected) and does not fail
    /// the future; it fails only when there is no session.
    pub async fn reply(&self, text: &str) -> Result<(), ClientError> {
        self.message.reply(text).await
    }

    /// A plain message into the invoking channel (poise's `ctx.say`),
    /// identical to `ctx.message().channel().send(text)`: no reply, so the
    /// service notifies nobody. Fire-and-forget like [`reply`](Self::reply);
    /// fails only when there is no session (here, a context built by hand).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use botlane::{CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
    /// let invocation = CommandInvocation {
    ///     name: "files".into(),
    ///     args: CommandArgs::new(),
    ///     source: CommandSource::Text,
    /// };
    /// let ctx = CommandContext::for_test(invocation, Message::new("m1", "c1", "u1", "/files"));
    /// // No client behind a context built by hand: nothing to send through.
    /// assert!(matches!(ctx.say("looking…").await, Err(botlane::ClientError::NotConnected)));
    /// # }
    /// ```
    pub async fn say(&self, text: &str) -> Result<(), ClientError> {
        self.message.channel().send(text).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::argument_error::ArgumentRule;
    use crate::commands::limits::MAX_SAFE_INTEGER;
    use crate::commands::types::{CommandArgValue as V, CommandDeclaration};
    use crate::CommandRegistry;

    /// A context whose args are `values`, under names `a`, `b`, … in order.
    fn ctx(values: &[V]) -> CommandContext {
        let args = values
            .iter()
            .enumerate()
            .map(|(i, v)| (arg_name(i), v.clone()))
            .collect();
        CommandContext::for_test(
            CommandInvocation {
                name: "test".into(),
                args,
                source: CommandSource::Structured,
            },
            Message::new("m1", "c1", "u1", "/test"),
        )
    }

    fn arg_name(i: usize) -> String {
        char::from(b'a' + u8::try_from(i).expect("fewer than 26 test args")).to_string()
    }

    /// Applies `getter` to each value in turn.
    fn each<T>(
        values: &[V],
        getter: impl Fn(&CommandContext, &str) -> Option<T>,
    ) -> Vec<Option<T>> {
        let c = ctx(values);
        (0..values.len())
            .map(|i| getter(&c, &arg_name(i)))
            .collect()
    }

    #[test]
    fn accessors_return_the_invocation_and_message() {
        let mut args = CommandArgs::new();
        args.insert("x".into(), V::Integer(1));
        let message = Message::new("m9", "c9", "u9", "/Ping 1");
        let c = CommandContext::for_test(
            CommandInvocation {
                name: "ping".into(),
                args: args.clone(),
                source: CommandSource::Text,
            },
            message.clone(),
        );
        assert_eq!(c.name(), "ping");
        assert_eq!(c.args(), &args);
        assert_eq!(c.source(), CommandSource::Text);
        assert_eq!(c.message(), &message);
        assert_eq!(c.get("x"), Some(&V::Integer(1)));
        assert_eq!(c.get("y"), None);
    }

    #[test]
    fn a_dispatched_context_keeps_its_invocation_only_in_its_message() {
        let mut args = CommandArgs::new();
        args.insert("x".into(), V::Integer(1));
        let invocation = CommandInvocation {
            name: "ping".into(),
            args,
            source: CommandSource::Structured,
        };
        let mut message = Message::new("m9", "c9", "u9", "");
        message.command = Some(invocation.clone());
        let around = Surroundings {
            data: Arc::new(()),
            prefixes: None,
            registry: None,
        };
        let c = CommandContext::dispatched(Arc::new(message), Arc::new(around));
        assert_eq!(c.message().command.as_ref(), Some(&invocation));
        assert!(c.invocation.is_none(), "one copy, in the message");
        assert_eq!(
            (c.name(), c.source(), c.get("x")),
            ("ping", CommandSource::Structured, Some(&V::Integer(1)))
        );
        let client = Arc::new(Prefixes::new::<&str>("/", &[]));
        let (kept, message, prefixes) = c.shared_parts(&client).into_parts();
        assert!(
            prefixes.is_none(),
            "a context without prefixes has none to keep"
        );
        assert_eq!(kept, invocation);
        assert_eq!(message.command, Some(invocation.clone()));

        // A context built by hand keeps its own, whatever its message says.
        let hand = CommandContext::for_test(invocation.clone(), Message::new("m", "c", "u", ""));
        assert_eq!(hand.message().command, None);
        assert_eq!(hand.shared_parts(&client).into_parts().0, invocation);
        // The client's prefixes are not kept; a message's own are.
        let own = Arc::new(Prefixes::new::<&str>("/", &[]));
        let with = |prefixes: &Arc<Prefixes>| {
            let ctx = hand.clone().with_prefixes(Arc::clone(prefixes));
            ctx.shared_parts(&client).into_parts().2
        };
        assert!(with(&client).is_none());
        assert!(with(&own).is_some_and(|kept| Arc::ptr_eq(&kept, &own)));
    }

    #[test]
    fn every_getter_is_none_when_unfilled() {
        let c = ctx(&[V::from("present")]);
        assert_eq!(c.get_string("z"), None);
        assert_eq!(c.get_integer("z"), None);
        assert_eq!(c.get_number("z"), None);
        assert_eq!(c.get_boolean("z"), None);
        // Names are exact: the args are keyed by lower-case option names.
        assert_eq!(c.get_string("A"), None);
    }

    #[test]
    fn get_string_stringifies_every_value() {
        let got = each(
            &[
                V::from("two words"),
                V::from(""),
                V::Integer(-42),
                V::Number(0.1),
                V::Number(2.0),
                V::Number(1e300),
                V::Boolean(true),
                V::Boolean(false),
            ],
            CommandContext::get_string,
        );
        let want = ["two words", "", "-42", "0.1", "2", "1e300", "true", "false"];
        assert_eq!(got, want.map(|s| Some(s.to_owned())));
    }

    #[test]
    fn get_integer_takes_integers_integral_numbers_and_integer_strings() {
        let got = each(
            &[
                V::Integer(7),
                V::Integer(i64::MIN),
                V::Number(6.0),
                V::Number(-0.0),
                V::Number(9_007_199_254_740_991.0),
                V::Number(-9_007_199_254_740_991.0),
                V::from("42"),
                V::from("+7"),
                V::from("-007"),
            ],
            CommandContext::get_integer,
        );
        let want = [
            7,
            i64::MIN,
            6,
            0,
            MAX_SAFE_INTEGER,
            -MAX_SAFE_INTEGER,
            42,
            7,
            -7,
        ];
        assert_eq!(got, want.map(Some));
    }

    #[test]
    fn get_integer_refuses_booleans_fractions_and_the_rest() {
        let got = each(
            &[
                V::Boolean(true),
                V::Boolean(false),
                V::Number(6.5),
                V::Number(9_007_199_254_740_992.0),
                V::Number(-1e300),
                V::Number(f64::NAN),
                V::Number(f64::INFINITY),
                V::from("1.0"),
                V::from("1e3"),
                V::from(" 1"),
                V::from("9007199254740992"),
                V::from("true"),
                V::from(""),
            ],
            CommandContext::get_integer,
        );
        assert!(got.iter().all(Option::is_none), "{got:?}");
    }

    #[test]
    fn get_number_takes_integers_finite_numbers_and_number_strings() {
        let got = each(
            &[
                V::Integer(3),
                V::Integer(-MAX_SAFE_INTEGER),
                V::Number(0.25),
                V::Number(-1e300),
                V::from("2.5e1"),
                V::from(".5"),
                V::from("-3"),
            ],
            CommandContext::get_number,
        );
        #[allow(clippy::cast_precision_loss)]
        let want = [3.0, -MAX_SAFE_INTEGER as f64, 0.25, -1e300, 25.0, 0.5, -3.0];
        assert_eq!(got, want.map(Some));
    }

    #[test]
    fn get_number_refuses_booleans_non_finite_and_the_rest() {
        let got = each(
            &[
                V::Boolean(true),
                V::Number(f64::NAN),
                V::Number(f64::INFINITY),
                V::Number(f64::NEG_INFINITY),
                V::from("inf"),
                V::from("NaN"),
                V::from("1e999"),
                V::from("1,5"),
                V::from(""),
                V::from("yes"),
            ],
            CommandContext::get_number,
        );
        assert!(got.iter().all(Option::is_none), "{got:?}");
    }

    #[test]
    fn get_boolean_passes_booleans_and_reads_the_six_words() {
        let got = each(
            &[
                V::Boolean(true),
                V::Boolean(false),
                V::from("true"),
                V::from("YES"),
                V::from("1"),
                V::from("False"),
                V::from("nO"),
                V::from("0"),
                V::Integer(1),
                V::Integer(0),
                V::Number(1.0),
                V::Number(0.0),
            ],
            CommandContext::get_boolean,
        );
        let want = [
            true, false, true, true, true, false, false, false, true, false, true, false,
        ];
        assert_eq!(got, want.map(Some));
    }

    #[test]
    fn get_boolean_refuses_everything_else() {
        let got = each(
            &[
                V::Integer(2),
                V::Integer(-1),
                V::Number(0.5),
                V::Number(-0.0),
                V::Number(f64::NAN),
                V::from(""),
                V::from("y"),
                V::from("on"),
                V::from(" true"),
                V::from("01"),
            ],
            CommandContext::get_boolean,
        );
        assert!(got.iter().all(Option::is_none), "{got:?}");
    }

    fn roll_registry() -> Arc<CommandRegistry> {
        use crate::commands::option::CommandOption;
        use crate::commands::option_type::CommandOptionType;
        let mut registry = CommandRegistry::new();
        registry
            .register(
                CommandDeclaration::new("roll", "Roll")
                    .option(
                        CommandOption::new("count", "n", CommandOptionType::Integer).required(true),
                    )
                    .option(CommandOption::new("label", "l", CommandOptionType::String)),
                |_ctx| async { Ok::<(), std::io::Error>(()) },
            )
            .unwrap();
        Arc::new(registry)
    }

    fn roll(args: CommandArgs) -> CommandContext {
        CommandContext::for_test(
            CommandInvocation {
                name: "roll".into(),
                args,
                source: CommandSource::Text,
            },
            Message::new("m1", "c1", "u1", "!roll"),
        )
    }

    #[test]
    fn require_names_the_option_and_adds_the_usage_line_when_it_can() {
        let args = CommandArgs::from([("count".to_owned(), V::Integer(-1))]);
        let bare = roll(args.clone());
        let err = bare.require::<u8>("count").unwrap_err();
        assert_eq!(err.rule(), &ArgumentRule::OutOfRange { min: 0, max: 255 });
        assert_eq!(err.usage(), None, "no registry, no usage line");

        let wired = roll(args).with_prefix("!").with_registry(roll_registry());
        let err = wired.require::<u8>("count").unwrap_err();
        assert_eq!(err.usage(), Some("!roll <count> [label]"));
        assert_eq!(wired.require::<i64>("count").unwrap(), -1);
        let err = wired.require::<String>("label").unwrap_err();
        assert_eq!(
            (err.option(), err.rule()),
            ("label", &ArgumentRule::Missing)
        );
        let err = wired.require::<String>("lable").unwrap_err();
        assert_eq!(
            (err.option(), err.rule()),
            ("lable", &ArgumentRule::Unknown),
            "a name the command does not declare is told apart from a missing one"
        );
        assert_eq!(
            bare.require::<String>("lable").unwrap_err().rule(),
            &ArgumentRule::Missing
        );
        assert_eq!(wired.optional::<String>("label").unwrap(), None);
        // The spec's getters stay forgiving.
        assert_eq!(wired.get_string("lable"), None);
    }

    #[test]
    fn what_dispatch_knows_is_carried() {
        let ctx = roll(CommandArgs::new());
        assert_eq!((ctx.prefix(), ctx.server_id()), ("/", None));
        assert!(ctx.view().is_none() && ctx.declaration().is_none() && ctx.usage().is_none());
        let ctx = ctx
            .with_prefix("!")
            .with_server_id("s1")
            .with_registry(roll_registry());
        assert_eq!((ctx.prefix(), ctx.server_id()), ("!", Some("s1")));
        assert_eq!(ctx.declaration().map(|d| d.name.as_str()), Some("roll"));
        assert_eq!(ctx.usage().as_deref(), Some("!roll <count> [label]"));
        let other = CommandContext::for_test(
            CommandInvocation {
                name: "gone".into(),
                args: CommandArgs::new(),
                source: CommandSource::Text,
            },
            Message::new("m1", "c1", "u1", "/gone"),
        )
        .with_registry(roll_registry());
        assert!(other.declaration().is_none());
    }
}
