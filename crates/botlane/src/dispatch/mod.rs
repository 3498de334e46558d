//! Dispatch: takes pushes off the session's queue in wire order, applies
//! membership pushes, opens each message, decides by the spec's rule what
//! it is and checks its arguments (`rule.rs`), runs the checks, the
//! cooldown and the handler of an invocation (`handlers.rs`), and reports
//! failures and runs their error hooks (`failure.rs`).
//!
//! The registry is read once per message, as a snapshot
//! ([`Commands::snapshot`]): the decision, the handler and the context's
//! registry all come from the same one, and no lock is held.

mod failure;
mod handlers;
mod rule;

use std::sync::Arc;

pub(crate) use handlers::{ClientHooks, Runner};

use crate::commands::{
    same_bot_id, CommandContext, CommandError, CommandErrorReason, CommandRegistry, CommandSource,
    Commands, Message, Outbound,
};
use crate::events::Event;
use crate::session::{Membership, Session};
use crate::transport::Push;
use crate::wire;
use rule::Verdict;

/// Everything dispatch needs, given by the client that starts it.
pub(crate) struct Dispatcher<D> {
    pub(crate) session: Arc<Session>,
    pub(crate) commands: Commands<D>,
    /// The handle every live message answers through.
    pub(crate) outbound: Arc<dyn Outbound>,
    /// Runs invocations and failures (shared with the client).
    pub(crate) runner: Arc<Runner<D>>,
    /// The text-lane prefix.
    pub(crate) prefix: Arc<str>,
}

impl<D: Send + Sync + 'static> Dispatcher<D> {
    /// Takes pushes off the push queue in wire order until it is closed.
    pub(crate) async fn run(self) {
        let membership = &self.session.membership;
        while let Some(push) = self.session.queue.next().await {
            match push {
                Push::Message(m) => self.on_message(m).await,
                Push::Ready(ready) => membership.on_ready(ready.channels),
                Push::ChannelAdded(channel) => membership.on_added(channel),
                Push::ChannelRemoved(id) => membership.on_removed(&id),
                Push::ChannelKey(key) => membership.on_channel_key(&key),
                Push::Notification => {}
            }
        }
    }

    async fn on_message(&self, mut wire_message: wire::WireMessage) {
        let membership = &self.session.membership;
        let sealed_command = wire_message.command.take();
        let Some(mut message) = open_message(membership, &self.outbound, wire_message) else {
            return;
        };
        let me = self.session.bot_id();
        let me = me.as_deref().unwrap_or_default();
        let registry = self.commands.snapshot();
        let verdict = if same_bot_id(&message.author_id, me) {
            Verdict::Plain
        } else {
            let sidecar = sealed_command.as_deref().and_then(|sealed| {
                let key = membership.key(&message.channel_id).ok()?;
                key.open(sealed, message.channel_id.as_bytes()).ok()
            });
            rule::decide(&registry, me, &message, sidecar.as_deref(), &self.prefix)
        };
        match verdict {
            Verdict::Plain => self.emit(|| Event::Message(message)),
            Verdict::Invoke(invocation) => {
                message.command = Some(invocation.clone());
                self.emit(|| Event::Message(message.clone()));
                let data = Arc::clone(&self.runner.data);
                let mut ctx = CommandContext::new(invocation, message, data)
                    .with_prefix(self.prefix.clone())
                    .with_registry(registry);
                if let Some(server) = membership.server_of(&ctx.message().channel_id) {
                    ctx = ctx.with_server_id(server);
                }
                self.runner.invoke(ctx).await;
            }
            Verdict::ParseFailed { name, error } => {
                self.emit(|| Event::Message(message.clone()));
                let mut failure = CommandError::new(
                    CommandErrorReason::Parse,
                    name,
                    CommandSource::Text,
                    message,
                );
                failure.argument_error = error.argument_error();
                failure.parse_error = Some(error);
                self.fail_early(&registry, failure).await;
            }
            Verdict::ArgumentsRejected {
                name,
                source,
                invocation,
                error,
            } => {
                self.emit(|| Event::Message(message.clone()));
                let mut failure =
                    CommandError::new(CommandErrorReason::Arguments, name, source, message);
                failure.invocation = invocation;
                failure.argument_error = Some(error);
                self.fail_early(&registry, failure).await;
            }
        }
    }

    /// A failure of the argument step, with the command's hook and timeout
    /// (or the client's).
    async fn fail_early(&self, registry: &CommandRegistry<D>, failure: CommandError) {
        let settings = registry.get(&failure.command).map(|c| &c.settings);
        let on_error = match settings.and_then(|s| s.on_error.clone()) {
            Some(on_error) => on_error,
            None => self.runner.hooks.load().on_error.clone(),
        };
        let timeout = settings
            .and_then(|s| s.timeout)
            .or(self.runner.handler_timeout);
        self.runner.fail_early(failure, on_error, timeout).await;
    }

    /// Reports an event, built only when someone listens.
    fn emit(&self, event: impl FnOnce() -> Event) {
        self.runner.events.send_with(event);
    }
}

/// Decrypts a relayed message and attaches the handle it answers through;
/// `None` (with a rate-limited warning) when it cannot be read. Live
/// messages and fetched history alike. The message's strings move into the
/// result (no copies on the hot path).
pub(crate) fn open_message(
    membership: &Membership,
    outbound: &Arc<dyn Outbound>,
    m: wire::WireMessage,
) -> Option<Message> {
    let content = membership.open_content(&m)?;
    let wire::WireMessage {
        id,
        channel_id,
        author_id,
        reply_to,
        ..
    } = m;
    let mut message = Message::new(id, channel_id, author_id, content);
    message.reply_to = reply_to;
    message.attach(outbound.clone());
    Some(message)
}
