//! The option types: one table (`option_types!`) makes the enum, its codes,
//! names and id-ness, and [`COMMAND_OPTION_TYPE_CODES`].

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

/// The option types, one row each: the variant and its doc, its code in the
/// canonical menu, its name in JSON declarations, and whether its values are
/// opaque ids (`id`) or not (`not_id`). The enum, `code`, `as_str`, `is_id`
/// and [`COMMAND_OPTION_TYPE_CODES`] (hence parsing a name, and the names an
/// [`UnknownOptionType`] lists) are all made from this table, so a new type
/// is one row here; then the compiler and the tests name the rest
/// (docs/architecture.md, "Adding an option type").
macro_rules! option_types {
    ($($(#[doc = $doc:literal])* $variant:ident = $code:literal, $name:literal, $id:ident;)*) => {
        /// The type of a command option.
        ///
        /// There is no `attachment` type: parsing one fails with a message saying it
        /// is unsupported.
        ///
        /// ```
        /// use botlane::CommandOptionType;
        /// assert_eq!("number".parse::<CommandOptionType>(), Ok(CommandOptionType::Number));
        /// assert_eq!(CommandOptionType::Number.code(), 7);
        /// let err = "attachment".parse::<CommandOptionType>().unwrap_err();
        /// assert!(err.to_string().contains("unsupported"));
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum CommandOptionType {
            $($(#[doc = $doc])* $variant,)*
        }

        /// The wire code of every option type, in the spec's order.
        ///
        /// ```
        /// use botlane::{CommandOptionType, COMMAND_OPTION_TYPE_CODES};
        /// for (kind, code) in COMMAND_OPTION_TYPE_CODES {
        ///     assert_eq!(kind.code(), code);
        /// }
        /// ```
        pub const COMMAND_OPTION_TYPE_CODES: [(CommandOptionType, u8); 0 $(+ option_types!(@one $variant))*] = [
            $((CommandOptionType::$variant, $code),)*
        ];

        impl CommandOptionType {
            /// The numeric code used in the canonical menu.
            pub const fn code(self) -> u8 {
                match self {
                    $(Self::$variant => $code,)*
                }
            }

            /// The lower-case name used in JSON declarations.
            ///
            /// ```
            /// assert_eq!(botlane::CommandOptionType::Role.as_str(), "role");
            /// ```
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                }
            }

            /// Whether values of this type are opaque id strings (`user`, `channel`, `role`).
            pub const fn is_id(self) -> bool {
                match self {
                    $(Self::$variant => option_types!(@id $id),)*
                }
            }
        }
    };
    (@one $variant:ident) => { 1 };
    (@id id) => { true };
    (@id not_id) => { false };
}

option_types! {
    /// Any text.
    String = 1, "string", not_id;
    /// A whole number within ±(2^53 − 1).
    Integer = 2, "integer", not_id;
    /// `true`/`yes`/`1` or `false`/`no`/`0`.
    Boolean = 3, "boolean", not_id;
    /// An opaque user id.
    User = 4, "user", id;
    /// An opaque channel id.
    Channel = 5, "channel", id;
    /// An opaque role id.
    Role = 6, "role", id;
    /// A finite decimal number.
    Number = 7, "number", not_id;
}

impl fmt::Display for CommandOptionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing a [`CommandOptionType`] from its name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UnknownOptionType {
    /// `attachment` is a type other chat services have; this one does not.
    #[error("option type \"attachment\" is unsupported: the service has no attachment options")]
    Attachment,
    /// Any other name.
    #[error("unknown option type {0:?}: expected one of {names}", names = TypeNames)]
    Unknown(String),
}

/// The names of every option type, in table order, separated by `, `.
struct TypeNames;

impl fmt::Display for TypeNames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, (kind, _)) in COMMAND_OPTION_TYPE_CODES.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            f.write_str(kind.as_str())?;
        }
        Ok(())
    }
}

impl FromStr for CommandOptionType {
    type Err = UnknownOptionType;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        COMMAND_OPTION_TYPE_CODES
            .iter()
            .map(|(kind, _)| *kind)
            .find(|kind| kind.as_str() == s)
            .ok_or_else(|| {
                if s == "attachment" {
                    UnknownOptionType::Attachment
                } else {
                    UnknownOptionType::Unknown(s.to_owned())
                }
            })
    }
}

impl Serialize for CommandOptionType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for CommandOptionType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        name.parse().map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_type_codes_and_names_are_distinct() {
        let mut codes = std::collections::BTreeSet::new();
        for (kind, code) in COMMAND_OPTION_TYPE_CODES {
            assert!(codes.insert(code), "{kind}: code {code} is taken");
            assert_eq!(kind.as_str().parse::<CommandOptionType>(), Ok(kind));
        }
    }

    /// The spec's table ("CommandOptionType and codes"), written out here
    /// rather than read from the macro's rows: a row that changed a code or
    /// a name, with the docs changed to match, passes every other check.
    #[test]
    fn the_option_types_and_codes_are_the_spec_s() {
        let table: Vec<(&str, u8)> = COMMAND_OPTION_TYPE_CODES
            .iter()
            .map(|(kind, code)| (kind.as_str(), *code))
            .collect();
        assert_eq!(
            table,
            [
                ("string", 1),
                ("integer", 2),
                ("boolean", 3),
                ("user", 4),
                ("channel", 5),
                ("role", 6),
                ("number", 7),
            ]
        );
    }

    #[test]
    fn an_unknown_type_names_every_type_of_the_table() {
        let err = "float".parse::<CommandOptionType>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown option type \"float\": expected one of \
             string, integer, boolean, user, channel, role, number"
        );
    }
}
