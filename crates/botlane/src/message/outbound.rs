//! The seam between what a handler holds and the client that answers for
//! it: a [`Message`](super::Message) and a
//! [`CommandContext`](crate::CommandContext) hold an [`Outbound`] handle,
//! never the client. The client implements it (`client/outbound.rs`); the
//! messages only call it.
//!
//! This is the one type-erased handle that cuts the ownership loop
//! `client → registry → handler → context → message → client`: the handle
//! the client gives holds it weakly, so a message kept by a handler or an
//! event subscriber never keeps a client alive.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use crate::error::ClientError;
use crate::rest::RestLane;

/// What a message can do on the service: post into a channel, and reach
/// the REST lane of the client that received it.
pub(crate) trait Outbound: Send + Sync {
    /// Seals `text` with the channel's key and posts it (a true reply when
    /// `reply_to` is set). A denial is reported as an event, not an error.
    fn send<'a>(
        &'a self,
        channel_id: &'a str,
        text: &'a str,
        reply_to: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), ClientError>>;

    /// The REST lane; fails when the client is gone.
    fn rest(&self) -> Result<RestLane, ClientError>;
}

/// A message's handle, when it has one (a message built by hand has none).
pub(crate) type OutboundHandle = Option<Arc<dyn Outbound>>;
