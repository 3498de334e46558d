//! The rules of the client's options, checked by `Client::new`: each
//! error names the option and the rule it breaks.

use std::time::Duration;

use super::ClientOptions;
use crate::commands::limits::MAX_ADDITIONAL_PREFIXES;
use crate::commands::text::prefixes::prefix_rule;
use crate::error::ClientError;
use crate::loopback::is_exact_loopback;

/// The longest `metrics_bot_label`, in characters.
const MAX_BOT_LABEL_CHARS: usize = 64;

impl ClientOptions {
    /// Checks every option; the error names the option and the rule.
    pub(crate) fn validate(&self) -> Result<(), ClientError> {
        use secrecy::ExposeSecret;
        let invalid =
            |option: &'static str, rule: String| ClientError::InvalidOption { option, rule };
        if self.token.expose_secret().is_empty() {
            return Err(invalid("token", "must not be empty".into()));
        }
        if let Some(rule) = prefix_rule(&self.command_prefix) {
            return Err(invalid("command_prefix", rule));
        }
        self.check_additional_prefixes()?;
        self.check_url()?;
        // The https rule of rest_url is checked on first use, as the spec asks;
        // a value that is not a URL at all is refused now.
        if let Err(e) = url::Url::parse(&self.rest_url) {
            return Err(invalid("rest_url", format!("is not a valid url ({e})")));
        }
        if self.rest_timeout.is_zero() {
            return Err(invalid("rest_timeout", "must be above zero".into()));
        }
        if self.keystore_save_window > Duration::from_secs(1) {
            return Err(invalid(
                "keystore_save_window",
                "must be at most 1 s (a key waits no longer than that to reach the disk)".into(),
            ));
        }
        if self.rest_json_limit == 0 {
            return Err(invalid("rest_json_limit", "must be above zero".into()));
        }
        if self.rest_binary_limit == 0 {
            return Err(invalid("rest_binary_limit", "must be above zero".into()));
        }
        if self.rest_max_connections == 0 {
            return Err(invalid("rest_max_connections", "must be above zero".into()));
        }
        // Each is a permit of a tokio semaphore, which holds no more.
        if self.rest_max_connections > tokio::sync::Semaphore::MAX_PERMITS {
            return Err(invalid(
                "rest_max_connections",
                format!("must be at most {}", tokio::sync::Semaphore::MAX_PERMITS),
            ));
        }
        for (option, value) in [
            ("heartbeat_interval", self.heartbeat_interval),
            ("request_timeout", self.request_timeout),
            ("connect_timeout", self.connect_timeout),
        ] {
            if value.is_zero() {
                return Err(invalid(option, "must be above zero".into()));
            }
        }
        if self.idle_timeout <= self.heartbeat_interval {
            return Err(invalid(
                "idle_timeout",
                format!(
                    "must be above heartbeat_interval ({}), or a healthy quiet session would be cut",
                    crate::human::duration(self.heartbeat_interval)
                ),
            ));
        }
        if self.push_queue_capacity == 0 {
            return Err(invalid("push_queue_capacity", "must be above zero".into()));
        }
        if self.push_queue_bytes == 0 {
            return Err(invalid("push_queue_bytes", "must be above zero".into()));
        }
        if self.control_queue_bytes == 0 {
            return Err(invalid("control_queue_bytes", "must be above zero".into()));
        }
        if self.max_concurrent_handlers == 0 {
            return Err(invalid(
                "max_concurrent_handlers",
                "must be above zero".into(),
            ));
        }
        // The handler permits are a tokio semaphore, which cannot hold more.
        if self.max_concurrent_handlers > tokio::sync::Semaphore::MAX_PERMITS {
            return Err(invalid(
                "max_concurrent_handlers",
                format!("must be at most {}", tokio::sync::Semaphore::MAX_PERMITS),
            ));
        }
        if self.handler_timeout.is_some_and(|t| t.is_zero()) {
            return Err(invalid(
                "handler_timeout",
                "must be above zero (None for no limit)".into(),
            ));
        }
        if self.error_answer_interval.is_zero() {
            return Err(invalid(
                "error_answer_interval",
                "must be above zero".into(),
            ));
        }
        if let Some((index, id)) = self
            .owners
            .iter()
            .enumerate()
            // Compared with dashes removed: an id of dashes only would be "",
            // an owner matching no one.
            .find(|(_, id)| id.chars().all(|c| c == '-') || id.chars().any(char::is_whitespace))
        {
            return Err(invalid(
                "owners",
                format!(
                    "owners[{index}] is {id:?}: an owner id must be non-empty (dashes aside), without whitespace"
                ),
            ));
        }
        if let Some(label) = &self.metrics_bot_label {
            let chars = label.chars().count();
            if !(1..=MAX_BOT_LABEL_CHARS).contains(&chars) || label.chars().any(char::is_control) {
                return Err(invalid(
                    "metrics_bot_label",
                    format!(
                        "must be 1 to {MAX_BOT_LABEL_CHARS} characters, none of them a control \
                         character (it has {chars})"
                    ),
                ));
            }
        }
        if self.reconnect_initial.is_zero() || self.reconnect_max < self.reconnect_initial {
            return Err(invalid(
                "reconnect_delays",
                "the first delay must be above zero and not above the longest".into(),
            ));
        }
        Ok(())
    }
}

impl ClientOptions {
    /// Each additional prefix follows `command_prefix`'s rules and is
    /// another prefix: neither `command_prefix` nor one listed before it,
    /// which would only be compared twice per line. The error names it by
    /// its place, and by its value once it is known to be short.
    fn check_additional_prefixes(&self) -> Result<(), ClientError> {
        let invalid = |rule: String| ClientError::InvalidOption {
            option: "additional_prefixes",
            rule,
        };
        let count = self.additional_prefixes.len();
        if count > MAX_ADDITIONAL_PREFIXES {
            return Err(invalid(format!(
                "must hold at most {MAX_ADDITIONAL_PREFIXES} prefixes (it has {count})"
            )));
        }
        for (index, prefix) in self.additional_prefixes.iter().enumerate() {
            if let Some(rule) = prefix_rule(prefix) {
                return Err(invalid(format!("additional_prefixes[{index}] {rule}")));
            }
            if *prefix == self.command_prefix {
                return Err(invalid(format!(
                    "additional_prefixes[{index}] is {prefix:?}, the command_prefix already"
                )));
            }
            if let Some(first) = self.additional_prefixes[..index]
                .iter()
                .position(|other| other == prefix)
            {
                return Err(invalid(format!(
                    "additional_prefixes[{index}] is {prefix:?}, as additional_prefixes[{first}] is"
                )));
            }
        }
        Ok(())
    }

    /// The realtime `url` rule: `wss`, or `ws` with one of the hosts
    /// `localhost`, `127.0.0.1` or `::1` exactly as parsed, unless
    /// `allow_insecure_ws`. The wording follows the `rest_url` rule.
    fn check_url(&self) -> Result<(), ClientError> {
        let invalid = |rule: String| ClientError::InvalidOption {
            option: "url",
            rule,
        };
        let url =
            url::Url::parse(&self.url).map_err(|e| invalid(format!("is not a valid url ({e})")))?;
        let Some(host) = url.host() else {
            return Err(invalid("must name a host".into()));
        };
        match url.scheme() {
            "wss" => Ok(()),
            "ws" if is_exact_loopback(&host) || self.allow_insecure_ws => Ok(()),
            "ws" => Err(invalid(format!(
                "must use wss unless the host is localhost, 127.0.0.1 or ::1, so that the \
                 token is never sent in cleartext (host {host}; set allow_insecure_ws to \
                 connect anyway)"
            ))),
            other => Err(invalid(format!(
                "must be a ws:// or wss:// address with a host, not scheme {other:?}"
            ))),
        }
    }
}
