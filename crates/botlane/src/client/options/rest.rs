//! The REST lane's options, apart: where it calls, how long it waits, what
//! it reads and how many connections it opens.

use std::time::Duration;

use super::ClientOptions;

impl ClientOptions {
    /// Sets `rest_url`.
    #[must_use]
    pub fn rest_url(mut self, rest_url: impl Into<String>) -> Self {
        self.rest_url = rest_url.into();
        self
    }

    /// Sets the REST request timeout.
    #[must_use]
    pub fn rest_timeout(mut self, timeout: Duration) -> Self {
        self.rest_timeout = timeout;
        self
    }

    /// Sets how long before its expiry the REST credential is replaced.
    #[must_use]
    pub fn rest_refresh_margin(mut self, margin: Duration) -> Self {
        self.rest_refresh_margin = margin;
        self
    }

    /// Sets the largest body `rest().json` parses, in bytes.
    ///
    /// ```
    /// let options = botlane::ClientOptions::new("t", "k", "ws://127.0.0.1:1/ws").rest_json_limit(1 << 20);
    /// assert_eq!(options.rest_json_limit, 1 << 20);
    /// ```
    #[must_use]
    pub fn rest_json_limit(mut self, bytes: usize) -> Self {
        self.rest_json_limit = bytes;
        self
    }

    /// Sets the largest body `rest().binary` and `Response::bytes` read, in
    /// bytes.
    ///
    /// ```
    /// let options = botlane::ClientOptions::new("t", "k", "ws://127.0.0.1:1/ws").rest_binary_limit(1 << 30);
    /// assert_eq!(options.rest_binary_limit, 1 << 30);
    /// ```
    #[must_use]
    pub fn rest_binary_limit(mut self, bytes: usize) -> Self {
        self.rest_binary_limit = bytes;
        self
    }

    /// Sets the most REST requests in flight at once, hence the most
    /// connections the lane opens to `rest_url`. A request holds its
    /// connection until its response body is read or dropped (a
    /// [`Response`](crate::rest::Response) kept unread keeps it), and the
    /// mint's exchange takes one too; a call that finds none free within
    /// its timeout fails with status 0. Connections are kept open between
    /// requests and reused.
    ///
    /// ```
    /// let options = botlane::ClientOptions::new("t", "k", "ws://127.0.0.1:1/ws").rest_max_connections(8);
    /// assert_eq!(options.rest_max_connections, 8);
    /// ```
    #[must_use]
    pub fn rest_max_connections(mut self, connections: usize) -> Self {
        self.rest_max_connections = connections;
        self
    }
}
