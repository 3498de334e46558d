//! The client's side of the [`Outbound`] handle every live message and
//! context holds: posts go through the session, and the REST lane is the
//! client's own.

use std::sync::{Arc, Weak};

use futures_util::future::BoxFuture;

use crate::error::ClientError;
use crate::message::outbound::Outbound;
use crate::rest::RestLane;
use crate::session::Session;

/// Holds the session weakly: a message kept by a handler or a subscriber
/// never keeps a client's session alive; once it is gone, answering fails
/// with [`ClientError::NotConnected`].
pub(super) struct SessionOutbound {
    pub(super) session: Weak<Session>,
    pub(super) rest: RestLane,
}

impl SessionOutbound {
    fn session(&self) -> Result<Arc<Session>, ClientError> {
        self.session.upgrade().ok_or(ClientError::NotConnected)
    }
}

impl Outbound for SessionOutbound {
    fn send<'a>(
        &'a self,
        channel_id: &'a str,
        text: &'a str,
        reply_to: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), ClientError>> {
        Box::pin(async move { self.session()?.post(channel_id, text, reply_to, None).await })
    }

    fn rest(&self) -> Result<RestLane, ClientError> {
        self.session()?;
        Ok(self.rest.clone())
    }
}
