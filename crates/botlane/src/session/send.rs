//! Posting into a channel: seal with the channel's key, request op 30, and
//! report a denial as [`Event::SendRejected`] rather than as an error.

use super::Session;
use crate::error::ClientError;
use crate::events::{Event, SendRejected};
use crate::wire::{self, OpCode};

impl Session {
    /// Seals `text` and posts it (a true reply when `reply_to` is set),
    /// with the sealed sidecar `command` when given. Waits for the
    /// service's acknowledgement; a denial becomes an event.
    pub(crate) async fn post(
        &self,
        channel_id: &str,
        text: &str,
        reply_to: Option<&str>,
        command: Option<String>,
    ) -> Result<(), ClientError> {
        let key = self.membership.key(channel_id)?;
        let content = key
            .seal(text.as_bytes(), channel_id.as_bytes())
            .map_err(ClientError::Crypto)?;
        let mut request = wire::SendRequest::new(channel_id, content);
        request.command = command;
        request.reply_to = reply_to.map(str::to_owned);
        let conn = self.connection()?;
        let reply: wire::SendReply = conn.request(OpCode::Send, &request).await?;
        if reply.code != 0 {
            tracing::debug!(code = reply.code, "send denied");
            self.emit(Event::SendRejected(SendRejected {
                channel_id: channel_id.to_owned(),
                reply_to: reply_to.map(str::to_owned),
                code: reply.code,
                reason: reply.reason,
            }));
        }
        Ok(())
    }
}
