//! The spec's command area, pure: declarations and their validation, the
//! option types, the canonical menu, the text lane, the structured sidecar
//! codec, argument checks with detail and the local option bounds. No I/O,
//! no handlers, nothing generic over the application: the command framework
//! (`framework/`) builds the registry, the context and everything a handler
//! meets on top of it.
//!
//! Private: the crate root re-exports the spec's names, and
//! [`framework`](crate::framework) the few that are the framework's.

pub(crate) mod args_check;
pub(crate) mod argument_error;
pub(crate) mod bounds;
pub(crate) mod coerce;
pub(crate) mod data;
pub(crate) mod excerpt;
pub(crate) mod limits;
pub(crate) mod menu;
pub(crate) mod option;
pub(crate) mod option_type;
pub(crate) mod text;
pub(crate) mod types;
pub(crate) mod validate;
