//! Dispatch: takes pushes off the session's queue in wire order, applies
//! membership pushes, opens each message, decides by the spec's rule what
//! it is (`rule.rs`) and runs the handler of an invocation (`handlers.rs`).
//!
//! The registry is read once per message, as a snapshot
//! ([`Commands::snapshot`]): the decision, the handler and the context's
//! registry all come from the same one, and no lock is held.

mod handlers;
mod rule;

use std::sync::Arc;

use tokio::sync::Semaphore;

use crate::commands::{
    canonical_bot_id, BoxError, CommandContext, CommandInvocation, Commands, Message, Outbound,
    ParseError,
};
use crate::events::{CommandError, CommandErrorReason, Event, EventSender};
use crate::session::{Membership, Session};
use crate::transport::Push;
use crate::wire;
use rule::Verdict;

/// Everything dispatch needs, given by the client that starts it.
pub(crate) struct Dispatcher {
    pub(crate) session: Arc<Session>,
    pub(crate) commands: Commands,
    pub(crate) events: EventSender,
    /// The handle every live message answers through.
    pub(crate) outbound: Arc<dyn Outbound>,
    /// One permit per handler allowed to run at once.
    pub(crate) handlers: Arc<Semaphore>,
    /// The text-lane prefix.
    pub(crate) prefix: Arc<str>,
}

impl Dispatcher {
    /// Takes pushes off the push queue in wire order until it is closed.
    pub(crate) async fn run(self) {
        let membership = &self.session.membership;
        while let Some(push) = self.session.queue.next().await {
            match push {
                Push::Message(m) => self.on_message(&m).await,
                Push::Ready(ready) => membership.on_ready(ready.channels),
                Push::ChannelAdded(channel) => membership.on_added(channel),
                Push::ChannelRemoved(id) => membership.on_removed(&id),
                Push::ChannelKey(key) => membership.on_channel_key(&key),
                Push::Notification => {}
            }
        }
    }

    async fn on_message(&self, wire_message: &wire::WireMessage) {
        let membership = &self.session.membership;
        let Some(mut message) = open_message(membership, &self.outbound, wire_message) else {
            return;
        };
        let me = self.session.bot_id().unwrap_or_default();
        let registry = self.commands.snapshot();
        let verdict = if canonical_bot_id(&message.author_id) == canonical_bot_id(&me) {
            Verdict::Plain
        } else {
            let sidecar = wire_message.command.as_deref().and_then(|sealed| {
                let key = membership.key(&message.channel_id).ok()?;
                key.open(sealed, message.channel_id.as_bytes()).ok()
            });
            rule::decide(&registry, &me, &message, sidecar.as_deref(), &self.prefix)
        };
        match verdict {
            Verdict::Plain => self.emit(Event::Message(message)),
            Verdict::Invoke(invocation) => {
                message.command = Some(invocation.clone());
                self.emit(Event::Message(message.clone()));
                let Some(handler) = registry.get(&invocation.name).map(|c| c.handler.clone())
                else {
                    return;
                };
                let mut ctx = CommandContext::new(invocation.clone(), message.clone())
                    .with_prefix(self.prefix.clone())
                    .with_registry(registry);
                if let Some(server) = membership.server_of(&message.channel_id) {
                    ctx = ctx.with_server_id(server);
                }
                self.run_handler(handler, ctx, invocation, message).await;
            }
            Verdict::ParseFailed { name, error } => {
                self.emit(Event::Message(message.clone()));
                self.command_error(
                    CommandErrorReason::Parse,
                    name,
                    None,
                    message,
                    Some(error),
                    None,
                );
            }
            Verdict::ArgumentsRejected { name } => {
                self.emit(Event::Message(message.clone()));
                self.command_error(
                    CommandErrorReason::Arguments,
                    name,
                    None,
                    message,
                    None,
                    None,
                );
            }
        }
    }

    fn emit(&self, event: Event) {
        self.events.send(event);
    }

    fn command_error(
        &self,
        reason: CommandErrorReason,
        command: String,
        invocation: Option<CommandInvocation>,
        message: Message,
        parse_error: Option<ParseError>,
        error: Option<BoxError>,
    ) {
        self.emit(Event::CommandError(CommandError {
            reason,
            command,
            invocation,
            message,
            parse_error,
            error: error.map(Arc::new),
        }));
    }
}

/// Decrypts a relayed message and attaches the handle it answers through;
/// `None` (with a rate-limited warning) when it cannot be read. Live
/// messages and fetched history alike.
pub(crate) fn open_message(
    membership: &Membership,
    outbound: &Arc<dyn Outbound>,
    m: &wire::WireMessage,
) -> Option<Message> {
    let content = membership.open_content(m)?;
    let mut message = Message::new(&m.id, &m.channel_id, &m.author_id, content);
    message.reply_to.clone_from(&m.reply_to);
    message.attach(outbound.clone());
    Some(message)
}
