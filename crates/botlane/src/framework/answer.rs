//! Answers to failed commands, made safe to send: never read as an
//! invocation by another bot, and rate-limited per user and channel.
//!
//! - **Neutralised**: each line of an answer whose first visible
//!   character is one of the client's prefixes or any ASCII punctuation
//!   (the usual prefixes: `/`, `!`, `.`, `?`, `$`…) gets [`ANSWER_MARKER`]
//!   in front, so that no bot, ours or another with another prefix, reading
//!   the message from its start or line by line, takes it for an
//!   invocation and answers it in turn: no bot-to-bot loop.
//! - **Rate-limited** per (user, channel): a burst of answers, then one per
//!   interval (a token bucket kept as one instant per pair, the time its
//!   bucket is full again). The table is bounded; a pair whose bucket is
//!   full takes no room. When the table is full of pairs still limited, a
//!   newcomer gets no answer until one of them refills: silence is the
//!   safe failure, and no flood can hand a limited pair a fresh bucket.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::cooldown::{Clock, SharedClock};
use crate::commands::text::prefixes::{PrefixSet, Prefixes};
use crate::commands::types::canonical_bot_id;
use crate::deadline::NEVER;
use crate::error::ClientError;
use crate::message::Message;
use crate::sync::lock;

/// What an answer that would read as an invocation starts with.
pub const ANSWER_MARKER: &str = "⚠ ";

/// The marker used when the client's prefix itself starts with
/// [`ANSWER_MARKER`]'s sign.
const OTHER_MARKER: &str = "» ";

/// Answers per user and channel before the rate limit applies.
pub const DEFAULT_ANSWER_BURST: u32 = 3;

/// After the burst, one answer per user and channel per this interval.
pub const DEFAULT_ANSWER_INTERVAL: Duration = Duration::from_secs(10);

/// The most (user, channel) pairs whose answers are limited at once.
pub const ANSWER_LIMIT_CAPACITY: usize = 10_000;

/// `text` as an answer that no bot reads as an invocation, whether it
/// reads the message from its start (as the grammar does) or line by line:
/// unchanged unless one of its lines would read as one, that is, its
/// first visible character (past the whitespace the grammar skips,
/// `char::is_whitespace`) is ASCII punctuation or starts `prefix`. Each
/// such line has its leading whitespace replaced by [`ANSWER_MARKER`];
/// the first has everything before it dropped (blank lines too, which the
/// grammar skips). A line ends at any character a client may show as a
/// break: `\n`, `\r\n`, U+2028, U+2029 or any other control character.
/// `prefix` is compared as the grammar compares it: past its own leading
/// whitespace, so that one of whitespace only (which reads any line that
/// starts with a name) marks every line with visible text, and an empty
/// one nothing; and with the text from the line's first visible character
/// on, past the line's end, since a prefix may hold a control character,
/// which ends a line but not the message the grammar reads. Borrowed when
/// nothing is marked. For a client with
/// [`additional_prefixes`](crate::ClientOptions::additional_prefixes), see
/// [`neutralise_answer_among`].
///
/// ```
/// use botlane::framework::neutralise_answer;
/// assert_eq!(neutralise_answer("option \"count\" is required", "/"), "option \"count\" is required");
/// assert_eq!(neutralise_answer("  /ban everyone", "/"), "⚠ /ban everyone");
/// assert_eq!(neutralise_answer("!roll 2", "/"), "⚠ !roll 2");
/// assert_eq!(neutralise_answer("dice: none left", "di"), "⚠ dice: none left");
/// // Every line: a bot reading line by line would run the second.
/// assert_eq!(neutralise_answer("no such file\n  /ban everyone", "/"), "no such file\n⚠ /ban everyone");
/// assert_eq!(neutralise_answer("one\r\n!two\u{2028}three", "/"), "one\r\n⚠ !two\u{2028}three");
/// assert!(matches!(neutralise_answer("a/b\nc", "/"), std::borrow::Cow::Borrowed(_)));
/// ```
pub fn neutralise_answer<'a>(text: &'a str, prefix: &str) -> Cow<'a, str> {
    neutralise(text, std::iter::once(prefix))
}

/// [`neutralise_answer`] against several prefixes (a client's
/// [`command_prefix`](crate::ClientOptions::command_prefix) and its
/// [`additional_prefixes`](crate::ClientOptions::additional_prefixes), as
/// [`CommandContext::prefixes`](crate::CommandContext::prefixes) gives
/// them): a line of `text` is marked when its first visible character is
/// ASCII punctuation or it starts with any of them. The marker is
/// [`ANSWER_MARKER`], or `» ` when a prefix starts with `⚠` (unless
/// another starts with `»`: for a prefix without whitespace, as a client's
/// are, the marker's space leaves the name empty either way).
///
/// ```
/// use botlane::framework::neutralise_answer_among;
/// assert_eq!(neutralise_answer_among("bot says hi", ["!", "bot"]), "⚠ bot says hi");
/// assert_eq!(neutralise_answer_among("robots say hi", ["!", "bot"]), "robots say hi");
/// assert_eq!(neutralise_answer_among("⚠ careful", ["!", "⚠"]), "» ⚠ careful");
/// assert_eq!(neutralise_answer_among("hi\nbotroll 2", ["!", "bot"]), "hi\n⚠ botroll 2");
///
/// // In a handler, against the client's prefixes:
/// # use botlane::{CommandArgs, CommandContext, CommandInvocation, CommandSource, Message};
/// # let invocation = CommandInvocation { name: "say".into(), args: CommandArgs::new(), source: CommandSource::Text };
/// # let ctx = CommandContext::for_test(invocation, Message::new("m1", "c1", "u1", "!say ?roll"))
/// #     .with_prefix("!")
/// #     .with_additional_prefixes(["?"]);
/// assert_eq!(neutralise_answer_among("?roll 2", ctx.prefixes()), "⚠ ?roll 2");
/// ```
pub fn neutralise_answer_among<'a, I>(text: &'a str, prefixes: I) -> Cow<'a, str>
where
    I: IntoIterator,
    I::Item: AsRef<str>,
    I::IntoIter: Clone,
{
    neutralise(text, prefixes.into_iter())
}

/// Whether a client may show `c` as a line break (or as something else a
/// line cannot hold): a control character, or U+2028 or U+2029, which are
/// none but show a new line as `\n` does. Every one ends a line for
/// [`neutralise`], which would otherwise not see the line after it.
pub(crate) fn may_break_a_line(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// [`neutralise_answer_among`] over an iterator of prefixes.
pub(crate) fn neutralise<'a, P: AsRef<str>>(
    text: &'a str,
    prefixes: impl Iterator<Item = P> + Clone,
) -> Cow<'a, str> {
    // Read from its start, a message's first line begins at its first
    // visible character, past any blank lines: when that line is marked,
    // they go with its leading whitespace.
    let body = text.trim_start();
    let first = body.split(may_break_a_line).next().unwrap_or(body);
    let text = if reads(first, body, prefixes.clone()) {
        body
    } else {
        text
    };
    mark_lines(text, 0, prefixes)
}

/// [`neutralise`] for a line of the help that starts as it must (a usage
/// line, with the prefix, or an option's line, `- name`) and ends with
/// free text that may hold line breaks (a description): its first line is
/// left as it is, each later one marked as an answer's is.
pub(crate) fn neutralise_later_lines<'a, P: AsRef<str>>(
    text: &'a str,
    prefixes: impl Iterator<Item = P> + Clone,
) -> Cow<'a, str> {
    match text.find(may_break_a_line) {
        Some(first_break) => mark_lines(text, first_break, prefixes),
        None => Cow::Borrowed(text),
    }
}

/// Whether `line` (without breaks), the start of `rest`, reads as an
/// invocation: its first visible character is ASCII punctuation or starts
/// one of `prefixes`, compared as the grammar does: past the prefix's own
/// leading whitespace, an empty one reading nothing but one of whitespace
/// only any line with a name at its start. A prefix is compared with
/// `rest`, not `line`: a client's may hold a control character (it has no
/// whitespace), which ends the line here but not for the grammar.
fn reads<P: AsRef<str>>(line: &str, rest: &str, mut prefixes: impl Iterator<Item = P>) -> bool {
    let visible = line.trim_start();
    let visible_rest = &rest[line.len() - visible.len()..];
    visible.starts_with(|c: char| c.is_ascii_punctuation())
        || prefixes.any(|prefix| match prefix.as_ref().trim_start() {
            "" => !prefix.as_ref().is_empty() && !visible.is_empty(),
            prefix => visible_rest.starts_with(prefix),
        })
}

/// `text` with each line that [`reads`], from byte `from` on (before it,
/// kept as it is), marked: its leading whitespace replaced by the marker.
/// Borrowed when none is.
fn mark_lines<'a, P: AsRef<str>>(
    text: &'a str,
    from: usize,
    prefixes: impl Iterator<Item = P> + Clone,
) -> Cow<'a, str> {
    // Each line, its break, and the text from its start on.
    let lines = || {
        let mut start = from;
        text[from..]
            .split_inclusive(may_break_a_line)
            .map(move |piece| {
                let rest = &text[start..];
                start += piece.len();
                let line = piece.strip_suffix(may_break_a_line).unwrap_or(piece);
                (line, &piece[line.len()..], rest)
            })
    };
    if !lines().any(|(line, _, rest)| reads(line, rest, prefixes.clone())) {
        return Cow::Borrowed(text);
    }
    let taken = |marker: &str| {
        let sign = marker.trim_end();
        prefixes
            .clone()
            .any(|prefix| prefix.as_ref().trim_start().starts_with(sign))
    };
    let marker = if taken(ANSWER_MARKER) && !taken(OTHER_MARKER) {
        OTHER_MARKER
    } else {
        ANSWER_MARKER
    };
    let mut safe = String::with_capacity(text.len() + 2 * marker.len());
    safe.push_str(&text[..from]);
    for (line, line_break, rest) in lines() {
        if reads(line, rest, prefixes.clone()) {
            safe.push_str(marker);
            safe.push_str(line.trim_start());
        } else {
            safe.push_str(line);
        }
        safe.push_str(line_break);
    }
    Cow::Owned(safe)
}

/// What became of an answer given to
/// [`CommandFailure::answer`](crate::framework::CommandFailure::answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Answered {
    /// Posted (a denial by the service arrives as
    /// [`Event::SendRejected`](crate::Event::SendRejected) and nothing more
    /// is done about it).
    Sent,
    /// Not posted: the user has had their share of answers in this channel.
    RateLimited,
    /// Not posted: the text was blank.
    Blank,
}

/// The client's way of answering failures: the prefixes answers are made
/// safe against (the runner's, shared), and the rate limiter they share.
pub(crate) struct AnswerGate {
    prefixes: Arc<Prefixes>,
    limiter: AnswerLimiter,
}

impl AnswerGate {
    pub(crate) fn new(prefixes: Arc<Prefixes>, rate: AnswerRate, clock: SharedClock) -> Self {
        Self {
            prefixes,
            limiter: AnswerLimiter::with_clock(rate, ANSWER_LIMIT_CAPACITY, clock),
        }
    }

    /// Posts `text`, neutralised, into the channel of `message` as a plain
    /// message, unless it is blank or the author's answers in that channel
    /// are used up. Marked against the prefixes `message` was read with
    /// (a dynamic prefix's) and the client's: a line either reads is one
    /// some channel's users may take for a command.
    pub(crate) async fn answer(
        &self,
        message: &Message,
        read_with: PrefixSet<'_>,
        text: &str,
    ) -> Result<Answered, ClientError> {
        if text.trim().is_empty() {
            return Ok(Answered::Blank);
        }
        if !self
            .limiter
            .try_take(&message.author_id, &message.channel_id)
        {
            return Ok(Answered::RateLimited);
        }
        let text = neutralise(text, read_with.all().chain(self.prefixes.set().all()));
        message.channel().send(&text).await?;
        Ok(Answered::Sent)
    }
}

/// The rate limit of answers, as [`ClientOptions::error_answer_limit`](crate::ClientOptions::error_answer_limit) sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AnswerRate {
    pub(crate) burst: u32,
    pub(crate) interval: Duration,
}

/// The rate limiter of answers: per (user, channel), bounded.
pub(crate) struct AnswerLimiter {
    rate: AnswerRate,
    capacity: usize,
    clock: Arc<dyn Clock>,
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    /// Per (user, channel): when its bucket is full again.
    full_at: HashMap<(String, String), Instant>,
    /// No entry is full before this (a lower bound): a full table is not
    /// swept before then.
    earliest: Option<Instant>,
}

impl AnswerLimiter {
    fn with_clock(rate: AnswerRate, capacity: usize, clock: SharedClock) -> Self {
        Self {
            rate,
            capacity,
            clock: clock.into_arc(),
            table: Mutex::new(Table::default()),
        }
    }

    /// Takes one answer from the bucket of (`user`, `channel`); false when
    /// it is empty (or the table is full of limited pairs).
    pub(crate) fn try_take(&self, user: &str, channel: &str) -> bool {
        self.try_take_at(user, channel, self.clock.now())
    }

    fn try_take_at(&self, user: &str, channel: &str, now: Instant) -> bool {
        // Longer than `NEVER` refills no sooner than never: capped, the
        // bucket's arithmetic stays within what the clock can name
        // (`Duration::MAX` overflowed it).
        let interval = self.rate.interval.min(NEVER);
        // The bucket holds `burst` answers; each takes `interval` to refill.
        let depth = interval.saturating_mul(self.rate.burst);
        if self.rate.burst == 0 {
            return false;
        }
        let key = (canonical_bot_id(user), canonical_bot_id(channel));
        let mut table = lock(&self.table);
        let full_at = match table.full_at.get(&key) {
            Some(&at) => at.max(now),
            None => {
                if table.full_at.len() >= self.capacity && !table.sweep(now) {
                    return false;
                }
                now
            }
        };
        // Room for one more when the bucket is not already `burst` deep.
        if full_at
            .saturating_duration_since(now)
            .saturating_add(interval)
            > depth
        {
            return false;
        }
        // Past what the clock can name, the pair is limited for good:
        // silence is the safe failure.
        let Some(next) = full_at.checked_add(interval) else {
            return false;
        };
        table.earliest = Some(table.earliest.map_or(next, |e| e.min(next)));
        table.full_at.insert(key, next);
        true
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        lock(&self.table).full_at.len()
    }
}

impl Table {
    /// Forgets the pairs whose bucket is full again; true when that made
    /// room. Skipped while no pair can be full yet.
    fn sweep(&mut self, now: Instant) -> bool {
        if self.earliest.is_some_and(|e| e > now) {
            return false;
        }
        self.full_at.retain(|_, at| *at > now);
        self.earliest = self.full_at.values().min().copied();
        true
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    fn limiter(burst: u32, capacity: usize) -> AnswerLimiter {
        AnswerLimiter::with_clock(
            AnswerRate {
                burst,
                interval: 10 * SECOND,
            },
            capacity,
            SharedClock::default(),
        )
    }

    #[test]
    fn an_interval_past_what_the_clock_can_name_is_a_burst_then_none() {
        for burst in [1, 3, u32::MAX] {
            let limiter = AnswerLimiter::with_clock(
                AnswerRate {
                    burst,
                    interval: Duration::MAX,
                },
                100,
                SharedClock::default(),
            );
            let t0 = Instant::now();
            let shown = burst.min(5);
            for _ in 0..shown {
                assert!(limiter.try_take_at("u1", "c1", t0), "burst {burst}");
            }
            let later = t0 + Duration::from_secs(86_400 * 365);
            assert_eq!(
                limiter.try_take_at("u1", "c1", later),
                burst > shown,
                "burst {burst}"
            );
            assert!(limiter.try_take_at("u2", "c1", t0), "burst {burst}");
        }
    }

    #[test]
    fn a_burst_then_one_answer_per_interval() {
        let limiter = limiter(3, 100);
        let t0 = Instant::now();
        let takes: Vec<bool> = (0..5)
            .map(|_| limiter.try_take_at("u1", "c1", t0))
            .collect();
        assert_eq!(takes, [true, true, true, false, false]);
        assert!(!limiter.try_take_at("u1", "c1", t0 + 9 * SECOND));
        assert!(limiter.try_take_at("u1", "c1", t0 + 10 * SECOND));
        assert!(!limiter.try_take_at("u1", "c1", t0 + 11 * SECOND));
        // Another pair has its own bucket; ids compare canonically.
        assert!(limiter.try_take_at("u1", "c2", t0));
        assert!(limiter.try_take_at("u2", "c1", t0));
        assert!(!limiter.try_take_at("U1", "C1", t0 + 11 * SECOND));
        // A long pause refills the whole burst.
        let later = t0 + 100 * SECOND;
        let takes: Vec<bool> = (0..4)
            .map(|_| limiter.try_take_at("u1", "c1", later))
            .collect();
        assert_eq!(takes, [true, true, true, false]);
    }

    #[test]
    fn a_flood_of_newcomers_never_refills_a_limited_pair() {
        let limiter = limiter(1, 4);
        let t0 = Instant::now();
        assert!(limiter.try_take_at("target", "c1", t0));
        for i in 0..100 {
            let _ = limiter.try_take_at(&format!("flood{i}"), "c1", t0 + SECOND);
        }
        assert_eq!(limiter.len(), 4, "the table stays bounded");
        assert!(
            !limiter.try_take_at("target", "c1", t0 + 2 * SECOND),
            "still limited: the flood did not evict it"
        );
        // Full of limited pairs: a newcomer is refused until one refills.
        assert!(!limiter.try_take_at("late", "c1", t0 + 2 * SECOND));
        assert!(limiter.try_take_at("late", "c1", t0 + 11 * SECOND));
        assert!(limiter.try_take_at("target", "c1", t0 + 11 * SECOND));
    }

    #[test]
    fn a_zero_burst_answers_nothing() {
        assert!(!limiter(0, 10).try_take_at("u1", "c1", Instant::now()));
    }

    #[test]
    fn neutralising_marks_only_what_reads_as_an_invocation() {
        for (text, prefix, want) in [
            ("plain words", "/", "plain words"),
            ("/roll 2", "/", "⚠ /roll 2"),
            ("\n\t /roll 2", "/", "⚠ /roll 2"),
            ("!ban", "/", "⚠ !ban"),
            ("?help", "!", "⚠ ?help"),
            ("roll: no", "r", "⚠ roll: no"),
            ("⚠ x", "⚠", "» ⚠ x"),
            ("", "/", ""),
            ("über", "/", "über"),
            // Every line, whichever break a client shows.
            (
                "no such file\n/ban everyone",
                "/",
                "no such file\n⚠ /ban everyone",
            ),
            ("a\n  \u{a0}!x\nb", "/", "a\n⚠ !x\nb"),
            ("a\r\n/x\r\n", "/", "a\r\n⚠ /x\r\n"),
            (
                "a\u{2028}/x\u{2029}!y\u{85}?z",
                "/",
                "a\u{2028}⚠ /x\u{2029}⚠ !y\u{85}⚠ ?z",
            ),
            ("a\t/x", "/", "a\t⚠ /x"),
            ("a\u{7}/x", "/", "a\u{7}⚠ /x"),
            // Blank lines before the first marked line go, as leading
            // whitespace; before a plain one they stay.
            ("\n\n/x\n\n/y", "/", "⚠ /x\n\n⚠ /y"),
            ("\n a\n/x", "/", "\n a\n⚠ /x"),
            // Not whitespace to the grammar: the line reads as nothing.
            ("a\n\u{200b}/x", "/", "a\n\u{200b}/x"),
            ("Commands:\nroll", "C", "⚠ Commands:\nroll"),
            ("a/b\nc d\n", "/", "a/b\nc d\n"),
        ] {
            let got = neutralise_answer(text, prefix);
            assert_eq!(got, want, "{text:?} with prefix {prefix:?}");
            assert_eq!(matches!(got, Cow::Borrowed(_)), got == text, "{text:?}");
            for line in got.split(may_break_a_line) {
                assert!(!line.trim_start().starts_with(prefix), "{text:?}: {line:?}");
                assert_eq!(crate::match_command_name(line, Some(prefix)), None);
            }
        }
    }

    #[test]
    fn neutralising_among_prefixes_marks_what_any_of_them_reads() {
        for (text, prefixes, want) in [
            ("bot roll", &["!", "bot"][..], "⚠ bot roll"),
            ("  ?x", &["!"][..], "⚠ ?x"),
            ("hey", &["!", "bot"][..], "hey"),
            // The marker's sign starts a prefix: the other marker.
            ("!x", &["!", "⚠x"][..], "» !x"),
            // Both signs start one: the marked line still names nothing.
            ("⚠ x", &["»", "⚠"][..], "⚠ ⚠ x"),
            ("⚠ x", &["!", "⚠"][..], "» ⚠ x"),
            (
                "hi\nbot roll\n⚠ x",
                &["bot", "⚠"][..],
                "hi\n» bot roll\n» ⚠ x",
            ),
            // A prefix is compared as the grammar does: past its own
            // leading whitespace; an empty one reads nothing.
            ("bot x", &[" bot"][..], "⚠ bot x"),
            ("hey", &[""][..], "hey"),
            // A prefix of whitespace only is empty past it, yet not
            // empty: as `match_command_name` reads it, every line that
            // starts with a name is an invocation (`roll 2` is `roll`).
            ("roll 2", &[" "][..], "⚠ roll 2"),
            // A client's prefix may hold a control character, which ends
            // a line here but not for the grammar reading the message.
            ("x\u{7}roll 2", &["x\u{7}"][..], "⚠ x\u{7}roll 2"),
            ("hi\r\nx\u{7}roll", &["x\u{7}"][..], "hi\r\n⚠ x\u{7}roll"),
            ("\u{7}xroll", &["\u{7}x"][..], "⚠ \u{7}xroll"),
            (
                "hi\n \nroll 2\n",
                &["\u{3000}", "!"][..],
                "⚠ hi\n \n⚠ roll 2\n",
            ),
        ] {
            let got = neutralise_answer_among(text, prefixes);
            assert_eq!(got, want, "{text:?} among {prefixes:?}");
            for prefix in prefixes {
                assert_eq!(crate::match_command_name(&got, Some(prefix)), None);
                for line in got.split(may_break_a_line) {
                    assert_eq!(crate::match_command_name(line, Some(prefix)), None);
                }
            }
        }
    }
}
