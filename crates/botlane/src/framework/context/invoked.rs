//! The name a command was invoked by, read back from its message: what
//! the context, a failure and a hook after the command all give.

use std::borrow::Cow;

use crate::commands::limits::is_valid_name;
use crate::commands::text::invoked_raw_name;
use crate::commands::text::prefixes::PrefixSet;
use crate::commands::types::CommandSource;
use crate::message::Message;

/// The name `message` invoked the command `name` by, read back from its
/// line on the text lane under the longest of `prefixes` it starts with,
/// as dispatch read it (see
/// [`CommandContext::invoked_name`](super::CommandContext::invoked_name));
/// `name` otherwise.
pub(crate) fn invoked_name<'a>(
    message: &'a Message,
    source: CommandSource,
    name: &'a str,
    prefixes: PrefixSet<'_>,
) -> Cow<'a, str> {
    if source == CommandSource::Text
        && let Some(raw) = invoked_raw_name(&message.content, prefixes)
    {
        // The command's own name in capitals is its name: no copy.
        if raw.eq_ignore_ascii_case(name) {
            return Cow::Borrowed(name);
        }
        if is_valid_name(raw) {
            return Cow::Borrowed(raw);
        }
        let lowered = raw.to_ascii_lowercase();
        if is_valid_name(&lowered) {
            return Cow::Owned(lowered);
        }
    }
    Cow::Borrowed(name)
}
