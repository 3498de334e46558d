//! What the service recorded, for tests to assert on: frames, HTTP requests
//! and notifications, each kept in a ring with a documented cap (see
//! [`Limits`](crate::Limits)): the oldest records go first.

use std::collections::VecDeque;
use std::fmt;

use botlane_proto::payload::Notification;
use botlane_proto::OpCode;

/// What a record costs to keep, in bytes: what it holds plus a fixed
/// allowance for its own fields.
pub(crate) trait Weigh {
    fn weight(&self) -> usize;
}

/// The fixed allowance per record (its fields, ids and allocations).
const RECORD_OVERHEAD: usize = 128;

/// Records in arrival order, at most `max_items` of them and `max_bytes` of
/// [`Weigh::weight`] together; the newest record is kept even alone over
/// `max_bytes`, and none at all with `max_items` 0.
pub(crate) struct Ring<T> {
    items: VecDeque<T>,
    bytes: usize,
    max_items: usize,
    max_bytes: usize,
    /// The sequence number of `items[0]`.
    first_seq: u64,
    evicted: u64,
}

impl<T: Weigh> Ring<T> {
    pub(crate) fn new(max_items: usize, max_bytes: usize) -> Self {
        Self {
            items: VecDeque::new(),
            bytes: 0,
            max_items,
            max_bytes,
            first_seq: 0,
            evicted: 0,
        }
    }

    /// Appends a record, drops the oldest ones over the caps, and returns the
    /// record's sequence number (for [`get_mut`](Self::get_mut)).
    pub(crate) fn push(&mut self, item: T) -> u64 {
        let seq = self.first_seq + self.items.len() as u64;
        self.bytes += item.weight();
        self.items.push_back(item);
        while self.items.len() > 1
            && (self.items.len() > self.max_items || self.bytes > self.max_bytes)
        {
            if let Some(old) = self.items.pop_front() {
                self.bytes -= old.weight();
                self.first_seq += 1;
                self.evicted += 1;
            }
        }
        if self.max_items == 0 {
            self.items.clear();
            self.bytes = 0;
            self.first_seq = seq + 1;
            self.evicted += 1;
        }
        seq
    }

    /// The record with sequence number `seq`, unless it was dropped.
    pub(crate) fn get_mut(&mut self, seq: u64) -> Option<&mut T> {
        let index = usize::try_from(seq.checked_sub(self.first_seq)?).ok()?;
        self.items.get_mut(index)
    }

    pub(crate) fn items(&self) -> &VecDeque<T> {
        &self.items
    }

    /// How many records were dropped to stay within the caps.
    pub(crate) fn evicted(&self) -> u64 {
        self.evicted
    }
}

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
    /// The account logged in on the connection at the time: `None` only for
    /// the login frame itself (recorded once the login succeeded).
    pub account_id: Option<String>,
    /// Which way it went.
    pub direction: Direction,
    /// The opcode; `None` for a received frame that was not a valid envelope.
    pub opcode: Option<u16>,
    /// The payload's size in bytes (the whole text for an invalid envelope;
    /// 0 for a frame without `d`).
    pub payload_size: usize,
    /// The payload's JSON text, with a 638 reply's one-time secret replaced
    /// by `"[REDACTED]"`; a login payload shows only its `public_key` (when
    /// it reads as one) and its `token` and `client` keys with the values
    /// replaced by `"[REDACTED]"`; `"[UNPARSED]"` for an invalid envelope,
    /// which might hold a token; empty for a frame without `d`.
    pub payload: String,
}

impl FrameRecord {
    /// Whether this frame has opcode `op` and went `direction`.
    ///
    /// ```
    /// # use botlane_proto::OpCode;
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
/// Headers are kept verbatim, credentials included, so a test can assert
/// exactly what a client sent and what it did not; the body up to a cap.
/// `Debug` shows header names only.
#[derive(Clone, PartialEq, Eq)]
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
    /// The request body, or its first
    /// [`Limits::http_record_body_bytes`](crate::Limits::http_record_body_bytes).
    pub body: Vec<u8>,
    /// How many body bytes arrived (more than `body` holds when it was cut;
    /// for a body refused as too large, how many were read before it was).
    pub body_size: usize,
    /// The response status; `None` while the request is being handled.
    pub status: Option<u16>,
    /// The REST listener's number for the TCP connection the request came
    /// on (1 for the first it accepted): requests on one keep-alive
    /// connection share it, so a test can count the connections a client
    /// used.
    pub connection: u64,
}

impl fmt::Debug for HttpRecord {
    // Header values may hold credentials (`verification`): names only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<_> = self
            .headers
            .iter()
            .map(|(name, _)| (name.as_str(), "[REDACTED]"))
            .collect();
        f.debug_struct("HttpRecord")
            .field("method", &self.method)
            .field("path", &self.path)
            .field("query", &self.query.as_ref().map(|_| "[REDACTED]"))
            .field("headers", &headers)
            .field("body_size", &self.body_size)
            .field("status", &self.status)
            .field("connection", &self.connection)
            .finish()
    }
}

impl Weigh for HttpRecord {
    fn weight(&self) -> usize {
        let headers: usize = self
            .headers
            .iter()
            .map(|(n, v)| n.len() + v.len() + 16)
            .sum();
        RECORD_OVERHEAD
            + self.method.len()
            + self.path.len()
            + self.query.as_ref().map_or(0, String::len)
            + headers
            + self.body.len()
    }
}

impl Weigh for FrameRecord {
    fn weight(&self) -> usize {
        RECORD_OVERHEAD + self.account_id.as_ref().map_or(0, String::len) + self.payload.len()
    }
}

impl Weigh for NotificationRecord {
    fn weight(&self) -> usize {
        let n = &self.notification;
        RECORD_OVERHEAD
            + self.account_id.len()
            + n.kind.len()
            + n.channel_id.len()
            + n.message_id.len()
            + n.from.len()
    }
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    struct Sized(usize);
    impl Weigh for Sized {
        fn weight(&self) -> usize {
            self.0
        }
    }

    #[test]
    fn the_ring_keeps_the_newest_within_both_caps() {
        let mut ring = Ring::new(3, 100);
        let seqs: Vec<_> = (0..5).map(|_| ring.push(Sized(10))).collect();
        assert_eq!(seqs, [0, 1, 2, 3, 4]);
        assert_eq!(ring.items().len(), 3);
        assert_eq!(ring.evicted(), 2);
        assert!(ring.get_mut(1).is_none());
        assert_eq!(ring.get_mut(4).unwrap().0, 10);
        // The byte cap drops more than the count cap would.
        ring.push(Sized(85));
        assert_eq!(
            ring.items().iter().map(|s| s.0).collect::<Vec<_>>(),
            [10, 85]
        );
        // A record over the whole byte cap is still kept, alone.
        ring.push(Sized(500));
        assert_eq!(ring.items().len(), 1);
        assert_eq!(ring.evicted(), 6);
    }

    #[test]
    fn debug_never_shows_header_values() {
        let record = HttpRecord {
            method: "GET".into(),
            path: "/api/files/list".into(),
            query: Some("token=sekrit-q".into()),
            headers: vec![("verification".into(), "sekrit-v".into())],
            body: b"sekrit-b".to_vec(),
            body_size: 8,
            status: Some(200),
            connection: 1,
        };
        let shown = format!("{record:?}");
        assert!(!shown.contains("sekrit"), "{shown}");
        assert!(shown.contains("verification") && shown.contains("body_size: 8"));
    }
}
