//! What the service recorded: every frame, every HTTP request and every
//! notification, for tests to assert on.

use botlane::wire::{Notification, OpCode};

/// Which way a recorded frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Direction {
    /// From the client to the service.
    Received,
    /// From the service to the client (recorded when queued for writing).
    Sent,
}

/// One frame as the service recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FrameRecord {
    /// The connection (numbered from 1 in order of arrival).
    pub connection_id: u64,
    /// The account logged in on the connection at the time, if any.
    pub account_id: Option<String>,
    /// Which way it went.
    pub direction: Direction,
    /// The opcode; `None` for a received frame that was not a valid envelope.
    pub opcode: Option<u16>,
    /// The payload's size in bytes (the whole text for an invalid envelope).
    pub payload_size: usize,
    /// The payload's JSON text, with a login token and a 638 reply's
    /// one-time secret replaced by `"[REDACTED]"`; `"[UNPARSED]"` for an
    /// invalid envelope, which might hold a token.
    pub payload: String,
}

impl FrameRecord {
    /// Whether this frame has opcode `op` and went `direction`.
    ///
    /// ```
    /// # use botlane::wire::OpCode;
    /// # use botlane_devserver::{Direction, FrameRecord};
    /// fn replies_to_sends(frames: &[FrameRecord]) -> usize {
    ///     frames.iter().filter(|f| f.is(Direction::Sent, OpCode::Send)).count()
    /// }
    /// assert_eq!(replies_to_sends(&[]), 0);
    /// ```
    pub fn is(&self, direction: Direction, op: OpCode) -> bool {
        self.direction == direction && self.opcode == Some(op.code())
    }
}

/// A notification as recorded for its recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NotificationRecord {
    /// Who it is for.
    pub account_id: String,
    /// What was pushed (or would have been, if the account was offline).
    pub notification: Notification,
    /// Whether at least one of the account's connections was sent it.
    pub delivered: bool,
}

/// One HTTP request as the REST listener received it, before any routing.
///
/// Headers and body are kept verbatim, credentials included, so a test can
/// assert exactly what a client sent and what it did not.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpRecord {
    /// The method, such as `GET`.
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The query string (after `?`), if any.
    pub query: Option<String>,
    /// Every header in the order received, names lower-case, values as
    /// (lossy UTF-8) text; a repeated header appears once per value.
    pub headers: Vec<(String, String)>,
    /// The request body.
    pub body: Vec<u8>,
    /// The response status; `None` while the request is being handled.
    pub status: Option<u16>,
}

impl HttpRecord {
    /// The first value of a header, by case-insensitive name.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let server = botlane_devserver::DevServer::start(Default::default()).await?;
    /// // ...after a client made requests to `server.rest_url()`:
    /// for request in server.http_requests() {
    ///     assert!(request.header("Authorization").is_none());
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}
