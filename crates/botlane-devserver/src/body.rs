//! Reading a request body under a size cap and a time limit, so a client
//! can neither send an endless body nor trickle one forever.

use std::time::Duration;

use axum::body::{Body, Bytes};
use futures_util::StreamExt;

/// Why a body was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyRefusal {
    /// More than the cap arrived; `read` bytes were read before stopping.
    TooLarge { read: usize },
    /// The body did not finish in time; `read` bytes had arrived.
    TooSlow { read: usize },
    /// The connection failed mid-body.
    Broken { read: usize },
}

/// Reads `body` whole, refusing it past `cap` bytes or past `timeout`.
pub(crate) async fn read_body(
    body: Body,
    cap: usize,
    timeout: Duration,
) -> Result<Bytes, BodyRefusal> {
    let deadline = crate::limits::deadline(timeout);
    let mut stream = body.into_data_stream();
    let mut bytes = Vec::new();
    loop {
        let next = match tokio::time::timeout_at(deadline, stream.next()).await {
            Ok(next) => next,
            Err(_) => return Err(BodyRefusal::TooSlow { read: bytes.len() }),
        };
        match next {
            None => return Ok(Bytes::from(bytes)),
            Some(Ok(chunk)) => {
                if bytes.len() + chunk.len() > cap {
                    return Err(BodyRefusal::TooLarge {
                        read: bytes.len() + chunk.len(),
                    });
                }
                bytes.extend_from_slice(&chunk);
            }
            Some(Err(_)) => return Err(BodyRefusal::Broken { read: bytes.len() }),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_body_within_the_cap_is_read_whole() {
        let read = read_body(Body::from("hello"), 5, Duration::from_secs(1)).await;
        assert_eq!(read.unwrap(), "hello");
        let refused = read_body(Body::from("hello!"), 5, Duration::from_secs(1)).await;
        assert_eq!(refused, Err(BodyRefusal::TooLarge { read: 6 }));
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_never_ends_is_refused_at_the_deadline() {
        let endless =
            futures_util::stream::once(async { Ok::<_, std::io::Error>(Bytes::from("x")) })
                .chain(futures_util::stream::pending());
        let refused = read_body(Body::from_stream(endless), 100, Duration::from_secs(3)).await;
        assert_eq!(refused, Err(BodyRefusal::TooSlow { read: 1 }));
    }
}
