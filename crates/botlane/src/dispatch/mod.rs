//! Dispatch: takes pushes in wire order, applies membership pushes, opens
//! each message, decides by the spec's rule what it is and checks its
//! arguments (`rule.rs`), runs the checks, the cooldown and the handler of
//! an invocation (`handlers/`: the runner, the invocation's own future in
//! `run.rs`), reports failures and runs their error
//! hooks (`failure.rs`), then the hooks after the command
//! (`handlers/after.rs`).
//!
//! A push is dispatched on the connection task, on the spot, while nothing
//! waits for dispatch ([`DispatchNow`]); otherwise the dispatch task takes
//! it off the session's queue. Both go through the same synchronous step
//! ([`Dispatcher::on_message`]); only what follows it differs: on the spot
//! an invocation starts on a permit that is free (taken only if it waits),
//! the dispatch task waits for one.
//!
//! The registry is read once per message, as a snapshot ([`Snapshot`]): the
//! decision, the handler and the context's registry all come from the same
//! one, and no lock is held.

mod failure;
mod handlers;
mod rule;

use std::borrow::Cow;
use std::cell::Cell;
use std::mem::take;
use std::sync::Arc;

use tokio::sync::OwnedSemaphorePermit;

use failure::EarlyFailure;
use handlers::{lane, outcome, ConversionPanic};
pub(crate) use handlers::{ClientHooks, Runner, RunnerConfig};

use crate::commands::text::prefixes::Prefixes;
use crate::commands::types::{same_bot_id, CommandInvocation, CommandSource};
use crate::events::Event;
use crate::framework::command_error::{CommandError, CommandErrorReason};
use crate::framework::context::{CommandContext, RegistryView, Surroundings};
use crate::framework::dynamic_prefix::PrefixRequest;
use crate::framework::live::{Commands, RegistryCache};
use crate::framework::registry::CommandRegistry;
use crate::message::outbound::Outbound;
use crate::message::Message;
use crate::session::{BotIdCache, DispatchCache, DispatchNow, Membership, Session};
use crate::telemetry::{end_span, invocation_span, Lane};
use crate::transport::{MessageView, Push};
use crate::wire;
use rule::Verdict;

/// Everything dispatch needs, given by the client that starts it.
pub(crate) struct Dispatcher<D> {
    pub(crate) session: Arc<Session>,
    pub(crate) commands: Commands<D>,
    /// The handle every live message answers through.
    pub(crate) outbound: Arc<dyn Outbound>,
    /// Runs invocations and failures (shared with the client); holds the
    /// text-lane prefixes and the dynamic prefix too.
    pub(crate) runner: Arc<Runner<D>>,
}

thread_local! {
    /// Where live messages are opened, one per thread that dispatches:
    /// reused, so that a message that becomes no `Message` allocates
    /// nothing for its content (an invocation's is copied out of it).
    static OPEN_BUFFER: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// The largest [`OPEN_BUFFER`] kept for the next message (64 KiB): the
/// buffer of a rare long message is let go rather than held by the thread.
const KEPT_OPEN_BUFFER: usize = 64 * 1024;

thread_local! {
    /// The message of the last invocation that ended on this thread with
    /// nobody else holding it ([`recycle_message`]): the next invocation's
    /// message is written into its strings and its `Arc`, and the next
    /// text invocation's name into its invocation's ([`SPARE_NAME`]),
    /// which it then does not allocate (five strings and the `Arc`, at
    /// about 150 instructions each, allocated and freed).
    static SPARE_MESSAGE: Cell<Option<Arc<Message>>> = const { Cell::new(None) };
    /// The name of the spare message's invocation, empty: kept apart, so
    /// that taking it ([`spare_name`]) is no look at the `Arc`'s counts.
    static SPARE_NAME: Cell<String> = const { Cell::new(String::new()) };
}

/// The longest string a spare message keeps (1 KiB): a thread holds at
/// most a few KiB of spare capacity.
const KEPT_SPARE_STRING: usize = 1024;

/// What a dispatching task (the dispatch task, a connection task) keeps
/// from one message to the next: the bot's id and the registry as it last
/// read them, each revalidated by one plain load per message. A look
/// through their `ArcSwap`s instead takes and gives back a slot, four
/// atomic writes per message (`docs/benchmarks.md`, stage 11). The
/// decision, the handler and the context's registry of a message all come
/// from the one snapshot read for it.
struct Snapshot<D> {
    me: BotIdCache,
    registry: RegistryCache<D>,
    /// What the contexts dispatched from the registry last read share:
    /// made again when it changes.
    around: Option<Arc<Surroundings<D>>>,
}

/// What an opened message still asks of dispatch, once decided.
enum Step<D> {
    Done,
    /// An invocation of the command at this position of the registry, to
    /// run under a handler permit.
    Invoke(CommandContext<D>, Arc<CommandRegistry<D>>, usize),
    /// A failure of the argument step, reported; its hook to run under a
    /// handler permit. Boxed: rare, and several times an invocation's size.
    Hook(Box<EarlyFailure<D>>),
}

impl<D: Send + Sync + 'static> Dispatcher<D> {
    /// Takes pushes off the push queue in wire order until it is closed
    /// (or the session shut down while an invocation waited for a handler
    /// permit); meanwhile the connection task dispatches on the spot when
    /// nothing waits ([`DispatchNow`]).
    pub(crate) async fn run(self: Arc<Self>) {
        let now: Arc<dyn DispatchNow> = self.clone();
        self.session.dispatch_now_with(Arc::downgrade(&now));
        let mut snapshot = self.snapshot();
        while let Some(push) = self.session.next_push().await {
            // The queue hands out no push of a login under way.
            let Push::Message(m) = push else {
                self.apply(push);
                continue;
            };
            let step = self.on_message(&mut MessageView::from(m), &mut snapshot);
            if matches!(step, Step::Done) {
                continue;
            }
            // Wire order: what comes next waits for this permit too.
            let permit = match self.runner.try_permit() {
                Some(permit) => permit,
                // Shutdown ends the wait: nothing starts after it (the
                // queue is closed, this invocation goes with it), and the
                // task lets go of the session rather than hold it for as
                // long as the running handlers take. Checked first: a
                // handler that shuts the client down frees its permit in
                // the same breath, and both are ready at the next poll.
                None => tokio::select! {
                    biased;
                    () = self.session.until_shutdown() => return,
                    permit = self.runner.permit() => match permit {
                        Some(permit) => permit,
                        None => continue,
                    },
                },
            };
            // Also a shutdown made since this message was taken: it is
            // not started after one, however the permit came.
            if self.session.is_shut_down() {
                return;
            }
            self.start(step, Some(permit));
        }
    }

    /// Starts what a decided message still asks for under `permit` (which
    /// a message that asks for nothing just gives back); `None` on the
    /// spot, where an invocation takes the free one only if it waits.
    fn start(&self, step: Step<D>, permit: Option<OwnedSemaphorePermit>) {
        match step {
            Step::Done => {}
            Step::Invoke(ctx, registry, index) => {
                let span = self.span(ctx.name(), lane(ctx.source()));
                // Boxed, and only when a subscriber wants it: a disabled
                // span inline would make every invocation's future 40
                // bytes larger.
                let span = (!span.is_disabled()).then(|| Box::new(span));
                self.runner.start(ctx, registry, index, permit, span);
            }
            Step::Hook(failure) => {
                let permit = permit.unwrap_or_else(|| self.runner.spot_permit());
                self.runner.start_hook(failure, permit);
            }
        }
    }

    /// The span of an invocation of `command` (its registered name) on
    /// `lane`, with the bot's id when a subscriber wants it.
    fn span(&self, command: &str, lane: Lane) -> tracing::Span {
        let span = invocation_span(command, lane);
        if !span.is_disabled()
            && let Some(bot) = &*self.session.bot_id_now()
        {
            span.record("bot", bot.as_str());
        }
        span
    }

    /// Applies a push that is not a message.
    fn apply(&self, push: Push) {
        let membership = self.session.membership();
        match push {
            Push::Ready(ready, connection) => {
                membership.on_ready(ready.channels);
                // Sent here, in the step that applied the `ready`: a task
                // woken by it came after the `Message` events of what
                // dispatch took next. `Ready` for the first, `Reconnected`
                // for a reconnect's (each a no-op when not owed).
                self.session.announce_ready();
                self.session.announce_reconnected(connection);
            }
            Push::ChannelAdded(channel) => membership.on_added(channel),
            Push::ChannelRemoved(id) => membership.on_removed(&id),
            Push::ChannelKey(key) => membership.on_channel_key(&key),
            Push::Message(_) | Push::Notification => {}
        }
    }

    /// What a dispatching task keeps from one message to the next.
    fn snapshot(&self) -> Snapshot<D> {
        Snapshot {
            me: self.session.bot_id_cache(),
            registry: self.commands.cache(),
            around: None,
        }
    }

    /// Opens a message and decides what it is: its event emitted, a
    /// failure of the argument step reported, what is left to run returned.
    fn on_message(&self, view: &mut MessageView<'_>, snapshot: &mut Snapshot<D>) -> Step<D> {
        let mut buf = OPEN_BUFFER.take();
        let step = self.open_and_decide(view, snapshot, &mut buf);
        if buf.capacity() <= KEPT_OPEN_BUFFER {
            OPEN_BUFFER.set(buf);
        }
        step
    }

    /// [`on_message`](Self::on_message), its content opened into `buf`.
    fn open_and_decide(
        &self,
        view: &mut MessageView<'_>,
        snapshot: &mut Snapshot<D>,
        buf: &mut Vec<u8>,
    ) -> Step<D> {
        let membership = self.session.membership();
        let Some(opened) = membership.open_content(&view.id, &view.channel_id, &view.content, buf)
        else {
            return Step::Done;
        };
        let (content, server) = (opened.content, opened.server());
        let Snapshot {
            me,
            registry,
            around,
        } = snapshot;
        let me = me.load().as_deref().map_or("", String::as_str);
        let registry = registry.load();
        let own = same_bot_id(&view.author_id, me);
        // The message's prefixes: its own when the application chose a
        // main one, else the client's (no copy, no count). Shared (an
        // `Arc`) only when kept, by an invocation or a failure: a plain
        // message costs nothing more than the closure's answer.
        let dynamic = if own {
            None
        } else {
            self.dynamic_prefixes(view, server.map(|server| &**server))
        };
        let prefixes = dynamic.as_ref().unwrap_or(self.runner.prefixes()).set();
        let verdict = if own {
            Verdict::Plain
        } else {
            let sidecar = view
                .command
                .as_deref()
                .and_then(|sealed| opened.key().open(sealed, view.channel_id.as_bytes()).ok());
            rule::decide(registry, me, content, sidecar.as_deref(), prefixes)
        };
        // Built only where it is used: a plain message nobody listens for
        // never is, its strings stay borrowed from the frame.
        let message =
            |view: &mut MessageView<'_>| message_of(view, content.to_owned(), &self.outbound);
        match verdict {
            Verdict::Plain => {
                self.emit(|| Event::Message(message(view)));
                Step::Done
            }
            Verdict::Invoke(invocation, index) => {
                let message = invocation_message(view, content, invocation, &self.outbound);
                let around = match around {
                    Some(around) if around.of(registry) => Arc::clone(around),
                    _ => Arc::clone(around.insert(Arc::new(Surroundings::new(
                        Arc::clone(self.runner.data()),
                        Arc::clone(self.runner.prefixes()),
                        Arc::clone(registry) as Arc<dyn RegistryView>,
                    )))),
                };
                let mut ctx = CommandContext::dispatched(message, around);
                if let Some(own) = dynamic {
                    ctx = ctx.with_prefixes(Arc::new(own));
                }
                self.emit(|| Event::Message(ctx.message().clone()));
                if let Some(server) = server {
                    ctx = ctx.with_server(Arc::clone(server));
                }
                Step::Invoke(ctx, Arc::clone(registry), index)
            }
            Verdict::ParseFailed { name, error } => {
                let message = message(view);
                self.emit(|| Event::Message(message.clone()));
                let reason = CommandErrorReason::Parse;
                let source = CommandSource::Text;
                let prefixes = dynamic.map(Arc::new);
                let mut failure = self.runner.failure(reason, name, source, message, prefixes);
                failure.argument_error = error.argument_error();
                failure.parse_error = Some(error);
                self.fail_early(registry, failure, false)
            }
            Verdict::ArgumentsRejected {
                name,
                source,
                invocation,
                error,
            } => {
                let message = message(view);
                self.emit(|| Event::Message(message.clone()));
                let reason = CommandErrorReason::Arguments;
                let prefixes = dynamic.map(Arc::new);
                let mut failure = self.runner.failure(reason, name, source, message, prefixes);
                failure.invocation = invocation;
                failure.argument_error = Some(error);
                self.fail_early(registry, failure, false)
            }
            Verdict::ConversionPanicked { invocation, panic } => {
                let message = message(view);
                self.emit(|| Event::Message(message.clone()));
                let (name, source) = (invocation.name.clone(), invocation.source);
                let reason = CommandErrorReason::Handler;
                let prefixes = dynamic.map(Arc::new);
                let mut failure = self.runner.failure(reason, name, source, message, prefixes);
                failure.invocation = Some(invocation);
                failure.error = Some(Arc::new(ConversionPanic(panic).into()));
                self.fail_early(registry, failure, true)
            }
        }
    }

    /// The prefixes the application chose for a message from someone else
    /// (`None`: the client's), asking its dynamic prefix once, if it set one.
    fn dynamic_prefixes(&self, view: &MessageView<'_>, server: Option<&str>) -> Option<Prefixes> {
        let chooser = self.runner.chooser()?;
        let request = PrefixRequest::new(&view.channel_id, &view.author_id, server);
        chooser.prefixes_for(&request, self.runner.prefixes())
    }

    /// Reports a failure of the argument step (`panicked`: a typed
    /// command's conversion panicked), counted and inside its invocation's
    /// span; its hook (the command's or the client's), if it acts, is left
    /// to run under the command's timeout (or the client's), in that span.
    fn fail_early(
        &self,
        registry: &CommandRegistry<D>,
        failure: CommandError,
        panicked: bool,
    ) -> Step<D> {
        let command = registry.get(&failure.command);
        let settings = command.map(|c| &c.settings);
        let on_error = self.runner.on_error_for(settings);
        let timeout = self.runner.timeout_for(settings);
        let span = match command {
            Some(command) => {
                let (lane, ended_as) = (lane(failure.source), outcome(failure.reason, panicked));
                let name = &command.decl.name;
                if let Some(series) = self.runner.telemetry().command(&command.series, name) {
                    series.record(lane, ended_as, None);
                }
                let span = self.span(name, lane);
                end_span(&span, ended_as, None);
                span
            }
            None => tracing::Span::none(),
        };
        span.in_scope(|| self.runner.report(&failure));
        if !on_error.acts_on(&failure) {
            return Step::Done;
        }
        Step::Hook(Box::new(EarlyFailure {
            failure,
            on_error,
            timeout,
            span,
        }))
    }

    /// Reports an event, built only when someone listens.
    fn emit(&self, event: impl FnOnce() -> Event) {
        self.runner.events().send_with(event);
    }
}

impl<D: Send + Sync + 'static> DispatchNow for Dispatcher<D> {
    fn dispatch_now(&self, push: Push) -> Option<Push> {
        match push {
            Push::Message(m) => {
                let mut view = MessageView::from(m);
                (!self.message_now(&mut view, &mut None)).then(|| Push::Message(view.into_owned()))
            }
            push => {
                self.apply(push);
                None
            }
        }
    }

    fn message_now(&self, message: &mut MessageView<'_>, cache: &mut DispatchCache) -> bool {
        // Without a free permit the message waits in the queue (and what
        // follows it, behind it). Only a run that waits takes the permit,
        // after its first poll (most messages run nothing, most handlers
        // end at their first poll): it is still free then, as its only
        // other taker, the dispatch task, holds no push while messages are
        // dispatched on the spot, and handlers only give permits back.
        if !self.runner.has_free_permit() {
            return false;
        }
        let snapshot = cache
            .get_or_insert_with(|| Box::new(self.snapshot()))
            .downcast_mut::<Snapshot<D>>()
            .expect("a connection's cache is filled only here, by its session's one dispatch");
        let step = self.on_message(message, snapshot);
        // A handler on another worker may have shut the client down since
        // this connection task last looked: nothing starts after that.
        if !matches!(step, Step::Done) && !self.session.is_shut_down() {
            self.start(step, None);
        }
        true
    }
}

/// Decrypts a relayed message and attaches the handle it answers through;
/// `None` (with a rate-limited warning) when it cannot be read. Fetched
/// history, opened in `buf` (reused across a page); the message's strings
/// move into the result.
pub(crate) fn open_message(
    membership: &Membership,
    outbound: &Arc<dyn Outbound>,
    m: wire::WireMessage,
    buf: &mut Vec<u8>,
) -> Option<Message> {
    let opened = membership.open_content(&m.id, &m.channel_id, &m.content, buf)?;
    let content = opened.content.to_owned();
    Some(message_of(&mut MessageView::from(m), content, outbound))
}

/// The message of an invocation (`view` with its opened `content`, the
/// invocation its `command`), answering through `outbound`: written into
/// this thread's spare message when it has one.
fn invocation_message(
    view: &mut MessageView<'_>,
    content: &str,
    invocation: CommandInvocation,
    outbound: &Arc<dyn Outbound>,
) -> Arc<Message> {
    // An empty message allocates nothing but its `Arc`.
    let mut message = SPARE_MESSAGE
        .take()
        .unwrap_or_else(|| Arc::new(Message::new("", "", "", "")));
    let m = Arc::get_mut(&mut message).expect(
        "a spare message is kept only when nobody else holds it, and a new one is not shared yet",
    );
    // Its strings are empty: a spare's were emptied when it was kept.
    m.id.push_str(&view.id);
    m.channel_id.push_str(&view.channel_id);
    m.author_id.push_str(&view.author_id);
    m.content.push_str(content);
    m.reply_to = view.reply_to.take().map(Cow::into_owned);
    m.command = Some(invocation);
    m.attach(outbound.clone());
    message
}

/// Keeps the message of an invocation that has ended for the next one on
/// this thread, when nobody else holds it (a handler may keep a clone of
/// its context) and its strings are short: emptied, its invocation's name
/// kept apart and its arguments let go, with no handle to answer through
/// (a spare keeps no client alive).
pub(crate) fn recycle_message(mut message: Arc<Message>) {
    let Some(m) = Arc::get_mut(&mut message) else {
        return;
    };
    let strings = [
        &mut m.id,
        &mut m.channel_id,
        &mut m.author_id,
        &mut m.content,
    ];
    if strings.iter().any(|s| s.capacity() > KEPT_SPARE_STRING) {
        return;
    }
    for s in strings {
        s.clear();
    }
    m.reply_to = None;
    if let Some(mut invocation) = m.command.take()
        && invocation.name.capacity() <= KEPT_SPARE_STRING
    {
        invocation.name.clear();
        SPARE_NAME.set(invocation.name);
    }
    m.detach();
    SPARE_MESSAGE.set(Some(message));
}

/// An empty string for the name of the next invocation parsed on this
/// thread: the last kept invocation's (so that the name is not allocated
/// again), else a new one.
pub(super) fn spare_name() -> String {
    SPARE_NAME.take()
}

/// The message of `view` with its opened `content`, answering through
/// `outbound`. A live message's strings may borrow from its frame: copied
/// here, once.
fn message_of(
    view: &mut MessageView<'_>,
    content: String,
    outbound: &Arc<dyn Outbound>,
) -> Message {
    let (id, channel_id) = (take(&mut view.id), take(&mut view.channel_id));
    let mut message = Message::new(id, channel_id, take(&mut view.author_id), content);
    message.reply_to = view.reply_to.take().map(Cow::into_owned);
    message.attach(outbound.clone());
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::types::{CommandArgValue, CommandArgs};

    #[test]
    fn a_kept_invocation_gives_its_name_back_empty_and_keeps_no_arguments() {
        let mut message = Message::new("m1", "c1", "u1", "/roll 2");
        message.command = Some(CommandInvocation {
            name: "roll".to_owned(),
            args: CommandArgs::from([("count".to_owned(), CommandArgValue::Integer(2))]),
            source: CommandSource::Text,
        });
        recycle_message(Arc::new(message));
        let name = spare_name();
        assert!(
            name.is_empty() && name.capacity() >= "roll".len(),
            "the last name's string, emptied: {name:?}"
        );
        let spare = SPARE_MESSAGE.take().expect("the message was kept");
        assert!(spare.content.is_empty() && spare.author_id.is_empty());
        assert!(spare.command.is_none(), "its arguments are let go");
        // Without a spare, a new string.
        assert_eq!(spare_name(), "");
    }

    /// A handle that answers nowhere, for messages built in tests.
    struct Nowhere;

    impl Outbound for Nowhere {
        fn send<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
            _: Option<&'a str>,
        ) -> futures_util::future::BoxFuture<'a, Result<(), crate::error::ClientError>> {
            Box::pin(std::future::ready(Ok(())))
        }

        fn rest(&self) -> Result<crate::rest::RestLane, crate::error::ClientError> {
            Err(crate::error::ClientError::ConnectionClosed { opcode: 0 })
        }
    }

    #[test]
    fn a_dispatched_message_keeps_what_it_replies_to() {
        let outbound: Arc<dyn Outbound> = Arc::new(Nowhere);
        let view = || {
            let mut wire = wire::WireMessage::new("m1", "c1", "u1", "sealed", 7);
            wire.reply_to = Some("m0".to_owned());
            MessageView::from(wire)
        };
        // A plain message, its strings moved out of the view.
        let plain = message_of(&mut view(), "hello".to_owned(), &outbound);
        assert_eq!(
            (
                &*plain.id,
                &*plain.channel_id,
                &*plain.author_id,
                &*plain.content
            ),
            ("m1", "c1", "u1", "hello")
        );
        assert_eq!(plain.reply_to.as_deref(), Some("m0"));
        // An invocation's, written into this thread's spare message.
        let invocation = CommandInvocation {
            name: "roll".to_owned(),
            args: CommandArgs::default(),
            source: CommandSource::Text,
        };
        let invoked = invocation_message(&mut view(), "/roll", invocation, &outbound);
        assert_eq!((&*invoked.id, &*invoked.content), ("m1", "/roll"));
        assert_eq!(invoked.reply_to.as_deref(), Some("m0"));
        assert_eq!(invoked.command.as_ref().map(|c| &*c.name), Some("roll"));
    }
}
